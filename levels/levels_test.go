package levels_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/trace"
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

// TestViewOfMalformedCanonicalDataDoesNotPanic: an entry marked canonical whose data is not
// valid JSON (Entry.Canonical is the caller's word) is viewed without a panic.
func TestViewOfMalformedCanonicalDataDoesNotPanic(t *testing.T) {
	for _, data := range []string{`{"message":{"role":`, `{"message":`, `{"message":{"role":"system","toolsAdded":[}`, `[`, ``} {
		tr := &trace.Trace{Entries: []trace.Entry{{Seq: 1, Kind: trace.KindEvent, Name: "message_end", Data: json.RawMessage(data), Canonical: true}}}
		levels.View(tr, nil)
	}
}
