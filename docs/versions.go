package docs

import (
	_ "embed"
	"regexp"
	"strings"
)

// versions is VERSIONS.md as committed.
//
//go:embed VERSIONS.md
var versions string

// VersionChange is one row of VERSIONS.md's table of behaviour changes between pi releases.
type VersionChange struct {
	// Release is the pi release that made the change ("1.3.0").
	Release string
	// Name is the change's name, as loop.Change's String gives it ("duration-ms").
	Name string
	// What is the change in words, as the table says it (Markdown).
	What string
	// Rules are the ids of the rules of SEMANTICS.md it touches.
	Rules []string
}

var (
	changeSwitch = regexp.MustCompile("^`[A-Za-z]+`, ([a-z0-9-]+)$")
	ruleID       = regexp.MustCompile(`R-[A-Z0-9]+(?:-[A-Z0-9]+)*`)
)

// VersionChanges returns the rows of VERSIONS.md's table of changes, in its order.
func VersionChanges() []VersionChange { return parseVersionChanges(versions) }

func parseVersionChanges(doc string) []VersionChange {
	var out []VersionChange
	for _, line := range strings.Split(doc, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 5 {
			continue
		}
		m := changeSwitch.FindStringSubmatch(cells[2])
		if m == nil {
			continue
		}
		out = append(out, VersionChange{Release: cells[0], Name: m[1], What: cells[1], Rules: ruleID.FindAllString(cells[3], -1)})
	}
	return out
}
