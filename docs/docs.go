// Package docs carries the contract of an agent loop, SEMANTICS.md, into the binary, and reads
// the ids it defines: the rules (R-…, one heading each) that scenario files cite, and the
// error texts (E-…) a loop must write byte for byte.
package docs

import (
	_ "embed"
	"regexp"
	"strings"
)

// semantics is SEMANTICS.md as committed.
//
//go:embed SEMANTICS.md
var semantics string

// Semantics returns SEMANTICS.md.
func Semantics() string { return semantics }

// Rule is one rule of SEMANTICS.md.
type Rule struct {
	// ID is the rule's id, e.g. "R-POLL-B".
	ID string
	// Title is the rest of its heading.
	Title string
	// Unpinned, when set, is the doc's reason why no scenario can pin the rule.
	Unpinned string
	// Since is the pi release from which the rule exists ("1.3.0"; "" for every release),
	// from its section's "*Since pi X.*" line.
	Since string
}

// ErrorText is one error text of SEMANTICS.md, with its placeholders (NAME, …) as written.
type ErrorText struct {
	ID   string
	Text string
	// Rule is the rule the text belongs to (the link after its id), "" when none is given.
	Rule string
}

var (
	ruleHeading = regexp.MustCompile(`^### (R-[A-Z0-9]+(?:-[A-Z0-9]+)*): (.+)$`)
	sinceLine   = regexp.MustCompile(`^\*Since pi ([0-9]+\.[0-9]+\.[0-9]+)\.\*$`)
	errorLabel  = regexp.MustCompile(`^<a id="e-[a-z0-9-]+"></a>\*\*(E-[A-Z0-9]+(?:-[A-Z0-9]+)*)\*\*(?: \(\[(R-[A-Z0-9]+(?:-[A-Z0-9]+)*)\])?`)
)

// unpinnedMark starts the line of a rule that says why no scenario pins it.
const unpinnedMark = "*Not pinned by a scenario:*"

// Rules returns the rules of SEMANTICS.md in document order.
func Rules() []Rule { return parseRules(semantics) }

func parseRules(doc string) []Rule {
	var rules []Rule
	var cur *Rule        // the rule whose section this is
	var reason *[]string // the lines of its unpinned reason, while they last
	flush := func() {
		if cur != nil {
			rules = append(rules, *cur)
		}
		cur, reason = nil, nil
	}
	for _, line := range strings.Split(doc, "\n") {
		if m := ruleHeading.FindStringSubmatch(line); m != nil {
			flush()
			cur = &Rule{ID: m[1], Title: m[2]}
			continue
		}
		if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "####") {
			// A heading of the same or a higher level ends the rule's section.
			flush()
			continue
		}
		switch {
		case cur == nil:
		case sinceLine.MatchString(line):
			cur.Since = sinceLine.FindStringSubmatch(line)[1]
		case strings.HasPrefix(line, unpinnedMark):
			reason = &[]string{strings.TrimSpace(strings.TrimPrefix(line, unpinnedMark))}
		case reason != nil && strings.TrimSpace(line) != "":
			*reason = append(*reason, strings.TrimSpace(line))
		case reason != nil:
			cur.Unpinned = strings.Join(*reason, " ")
			reason = nil
		}
		if reason != nil {
			cur.Unpinned = strings.Join(*reason, " ")
		}
	}
	flush()
	return rules
}

var ruleSet = func() map[string]Rule {
	m := map[string]Rule{}
	for _, r := range Rules() {
		m[r.ID] = r
	}
	return m
}()

// HasRule reports whether SEMANTICS.md defines rule id.
func HasRule(id string) bool {
	_, ok := ruleSet[id]
	return ok
}

// Lookup returns rule id of SEMANTICS.md, e.g. to cite it with its title in a finding.
func Lookup(id string) (Rule, bool) {
	r, ok := ruleSet[id]
	return r, ok
}

// ErrorTexts returns the error texts of SEMANTICS.md in document order: each is the fenced
// block that follows its bold id.
func ErrorTexts() []ErrorText { return parseErrorTexts(semantics) }

func parseErrorTexts(doc string) []ErrorText {
	var out []ErrorText
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		m := errorLabel.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j] != "```text" {
			j++
		}
		var body []string
		for j++; j < len(lines) && lines[j] != "```"; j++ {
			body = append(body, lines[j])
		}
		out = append(out, ErrorText{ID: m[1], Text: strings.Join(body, "\n"), Rule: m[2]})
		i = j
	}
	return out
}

// Governs is one row of SEMANTICS.md's table "Which rule governs an entry": the rule that
// governs a finding about an entry whose key matches Entries, about a field matching Fields,
// where When holds.
type Governs struct {
	// Entries are entry keys ("call tool", "event message_* toolResult"); a "*" ends a prefix.
	Entries []string
	// Fields are members on the path of the differing field, or paths it starts with ("data");
	// none: the entry itself, or any field.
	Fields []string
	// When names where the entry stands in its trace ("in a truncated turn"); "": anywhere.
	When string
	// Rule is the rule's id; "" when the row says no rule governs such a finding.
	Rule string
}

// Governance returns the rows of SEMANTICS.md's table "Which rule governs an entry", in order:
// the first row that matches a finding gives its rule.
func Governance() []Governs { return parseGovernance(semantics) }

var backquoted = regexp.MustCompile("`([^`]+)`")

func parseGovernance(doc string) []Governs {
	_, table, ok := strings.Cut(doc, "## Which rule governs an entry\n")
	if !ok {
		return nil
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var out []Governs
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 4 || !strings.HasPrefix(cells[3], "R-") && cells[3] != "—" {
			continue
		}
		g := Governs{Rule: strings.TrimPrefix(cells[3], "—")}
		for _, m := range backquoted.FindAllStringSubmatch(cells[0], -1) {
			g.Entries = append(g.Entries, m[1])
		}
		for _, m := range backquoted.FindAllStringSubmatch(cells[1], -1) {
			g.Fields = append(g.Fields, m[1])
		}
		if cells[2] != "—" {
			g.When = cells[2]
		}
		out = append(out, g)
	}
	return out
}
