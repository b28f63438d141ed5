package docs_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// errorSources names, for each error text of SEMANTICS.md, a curated scenario whose reference
// trace contains it.
var errorSources = map[string]string{
	"E-NOT-FOUND":          "tools-sequential/unknown-tool",
	"E-ABORTED":            "abort-error/abort-first-in-preparation",
	"E-BLOCKED":            "tools-sequential/before-block-default-reason",
	"E-INVALID-ARGUMENTS":  "tools-sequential/arguments-error",
	"E-VALIDATION":         "tools-sequential/validation-root-path",
	"E-TRUNCATED":          "truncation/basic",
	"E-CONTINUE-EMPTY":     "continue/refuses-empty-context",
	"E-CONTINUE-ASSISTANT": "continue/refuses-assistant-tail",
}

// placeholder is a capitalised word of an error text that stands for a value.
var placeholder = regexp.MustCompile(`\b(NAME|ERROR|PATH|MESSAGE|JSON)\b`)

// TestErrorTextsAreTheReferences requires every error text of SEMANTICS.md, its placeholders
// filled by whatever the run put there, to be a string of the reference's trace of a curated
// scenario: everything but the placeholders is byte-identical to what the reference writes.
func TestErrorTextsAreTheReferences(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	byRel := map[string]*scenarios.File{}
	for _, f := range files {
		byRel[f.Rel] = f
	}
	texts := docs.ErrorTexts()
	var ids []string
	for _, e := range texts {
		ids = append(ids, e.ID)
		rel, ok := errorSources[e.ID]
		if !ok {
			t.Errorf("%s: no curated scenario is named to check it against (errorSources)", e.ID)
			continue
		}
		f := byRel[rel]
		if f == nil {
			t.Fatalf("%s: no curated scenario %s", e.ID, rel)
		}
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		pattern := regexp.MustCompile("^" + placeholder.ReplaceAllStringFunc(regexp.QuoteMeta(e.Text), func(string) string { return "(?s:.+?)" }) + "$")
		found := false
		for _, s := range traceStrings(t, tr.JSONL()) {
			if pattern.MatchString(s) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: the reference's trace of %s has no string of the form\n%s", e.ID, rel, e.Text)
		}
	}
	for id := range errorSources {
		if !slices.Contains(ids, id) {
			t.Errorf("errorSources names %s, which SEMANTICS.md does not define", id)
		}
	}
}

// TestErrorTextsMatchLoopExports compares the texts the loop exports with the doc's, whole.
func TestErrorTextsMatchLoopExports(t *testing.T) {
	want := map[string]string{
		"E-TRUNCATED":          loop.TruncatedToolCallText("NAME"),
		"E-CONTINUE-EMPTY":     loop.ErrContinueEmpty.Error(),
		"E-CONTINUE-ASSISTANT": loop.ErrContinueFromAssistant.Error(),
	}
	for _, e := range docs.ErrorTexts() {
		if w, ok := want[e.ID]; ok && e.Text != w {
			t.Errorf("%s: the doc says\n%q\nthe loop writes\n%q", e.ID, e.Text, w)
		}
	}
}

// traceStrings returns every string value of a JSON-lines trace.
func traceStrings(t *testing.T, jsonl []byte) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, line := range bytes.Split(jsonl, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("trace line %s: %v", line, err)
		}
		walk(v)
	}
	return out
}

// TestRuleIDs checks the ids: unique, each with its anchor, and every link within the doc
// leads to an anchor or a heading.
func TestRuleIDs(t *testing.T) {
	doc := docs.Semantics()
	seen := map[string]bool{}
	for _, r := range docs.Rules() {
		if seen[r.ID] {
			t.Errorf("rule %s is defined twice", r.ID)
		}
		seen[r.ID] = true
		if !strings.Contains(doc, `<a id="`+strings.ToLower(r.ID)+`"></a>`+"\n### "+r.ID+": ") {
			t.Errorf("rule %s: its heading needs the anchor line <a id=%q></a> right above it", r.ID, strings.ToLower(r.ID))
		}
	}
	if len(seen) < 50 {
		t.Errorf("only %d rules read from SEMANTICS.md; is the heading format broken?", len(seen))
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9-]+)"></a>`).FindAllStringSubmatch(doc, -1) {
		anchors[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`(?m)^#{1,4} (.+)$`).FindAllStringSubmatch(doc, -1) {
		anchors[slug(m[1])] = true
	}
	for _, m := range regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(doc, -1) {
		if !anchors[m[1]] {
			t.Errorf("link #%s leads nowhere in SEMANTICS.md", m[1])
		}
	}
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestLookup(t *testing.T) {
	r, ok := docs.Lookup("R-POLL-B")
	if !ok || r.Title != "the poll before a later turn" {
		t.Errorf("Lookup(R-POLL-B) = %+v, %v", r, ok)
	}
	if _, ok := docs.Lookup("R-NOPE"); ok || docs.HasRule("R-NOPE") {
		t.Error("an unknown id was found")
	}
}

// TestEveryChangeHasItsRowInVersions: each of loop's behaviour changes is a row of
// VERSIONS.md's table, at the release the loop says, citing rules SEMANTICS.md defines (the
// diagnosis names a change by that row).
func TestEveryChangeHasItsRowInVersions(t *testing.T) {
	rows := map[string]docs.VersionChange{}
	for _, r := range docs.VersionChanges() {
		rows[r.Name] = r
	}
	if len(rows) != len(loop.Changes()) {
		t.Errorf("VERSIONS.md has %d changes, loop %d", len(rows), len(loop.Changes()))
	}
	defined := map[string]bool{}
	for _, r := range docs.Rules() {
		defined[r.ID] = true
	}
	for _, c := range loop.Changes() {
		r, ok := rows[c.String()]
		switch {
		case !ok:
			t.Errorf("%s has no row in VERSIONS.md", c)
		case r.Release != c.Since() || r.What == "" || len(r.Rules) == 0:
			t.Errorf("%s: row %+v (the loop says pi %s)", c, r, c.Since())
		}
		for _, id := range r.Rules {
			if !defined[id] {
				t.Errorf("%s cites %s, which SEMANTICS.md does not define", c, id)
			}
		}
	}
}
