package levels_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/levels"
)

// TestConventionsAreSemanticsTable: the conventions are the rules of SEMANTICS.md's table in
// "Levels", every one of them and no other.
func TestConventionsAreSemanticsTable(t *testing.T) {
	_, section, _ := strings.Cut(docs.Semantics(), "\n## Levels\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var table []string
	for _, line := range strings.Split(section, "\n") {
		if cells := strings.Split(line, " | "); len(cells) == 2 && strings.HasPrefix(line, "| R-") {
			table = append(table, regexp.MustCompile(`R-[A-Z0-9-]+`).FindAllString(cells[0], -1)...)
		}
	}
	var ours []string
	for _, c := range levels.Conventions {
		ours = append(ours, c.Rule)
		if !docs.HasRule(c.Rule) {
			t.Errorf("no rule %s", c.Rule)
		}
	}
	slices.Sort(table)
	slices.Sort(ours)
	if !slices.Equal(table, ours) {
		t.Errorf("SEMANTICS.md's conventions %v, levels.Conventions %v", table, ours)
	}
}
