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
}

// ErrorText is one error text of SEMANTICS.md, with its placeholders (NAME, …) as written.
type ErrorText struct {
	ID   string
	Text string
}

var (
	ruleHeading = regexp.MustCompile(`^### (R-[A-Z0-9]+(?:-[A-Z0-9]+)*): (.+)$`)
	errorLabel  = regexp.MustCompile(`^<a id="e-[a-z0-9-]+"></a>\*\*(E-[A-Z0-9]+(?:-[A-Z0-9]+)*)\*\*`)
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
		out = append(out, ErrorText{ID: m[1], Text: strings.Join(body, "\n")})
		i = j
	}
	return out
}
