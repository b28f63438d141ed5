package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

func entries(names ...string) []trace.Entry {
	out := make([]trace.Entry, len(names))
	for i, n := range names {
		out[i] = trace.Entry{Seq: i + 1, Kind: trace.KindEvent, Name: n}
	}
	return out
}

// Equal entries share a row; a run of entries missing on one side leaves gaps; an entry
// replaced by another pairs them on one row.
func TestAlign(t *testing.T) {
	got := align(entries("a", "b", "c", "d", "e"), entries("a", "c", "x", "e", "f"))
	want := []pair{{0, 0}, {1, -1}, {2, 1}, {3, 2}, {4, 3}, {-1, 4}}
	if len(got) != len(want) {
		t.Fatalf("align: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("align: %v, want %v", got, want)
		}
	}
}

// A page is one file: no script, style, image or link is fetched from anywhere.
func TestPageIsSelfContained(t *testing.T) {
	run := faultyRun(t, "tools-parallel/completion-order")
	var buf bytes.Buffer
	if err := Write(&buf, Page{Title: "t", Runs: []Run{run}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:|//|file:)|@import|url\(`).FindString(page); m != "" {
		t.Errorf("the page refers to something outside it: %q", m)
	}
	for _, want := range []string{"tool tool-1 (echo)", "stream #1", "first divergence", `class="finding"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// Writing the same run twice gives the same bytes (reports diff cleanly as CI artifacts).
func TestPageIsDeterministic(t *testing.T) {
	run := faultyRun(t, "queues/follow-up-one-at-a-time")
	var a, b bytes.Buffer
	if err := Write(&a, Page{Title: "t", Runs: []Run{run, run}}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, Page{Title: "t", Runs: []Run{run, run}}); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two renderings differ")
	}
	if !strings.Contains(a.String(), `id="queues-follow-up-one-at-a-time-2"`) {
		t.Error("a second run of the same title does not get an id of its own")
	}
}

// TestPageGrowsWithTheTrace: a 200-turn run (a stream and a tool call a turn) is laid out in
// as many stream and tool columns as run at once, not one per request, and its entries' JSON
// is the trace file's linear form: the page had 403 columns and every context in full (80 MB,
// which no browser rendered in five minutes).
func TestPageGrowsWithTheTrace(t *testing.T) {
	f := suiteScenario(t, "termination/no-turn-limit")
	tr, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	rv := buildRun(Run{ID: "r", Title: f.Scenario.Name, Expected: tr, Actual: tr})
	var names []string
	for _, ln := range rv.Lanes {
		names = append(names, ln.Name)
	}
	if want := []string{"loop events", "hooks", "streams", "tool calls"}; !slices.Equal(names, want) {
		t.Errorf("columns %q, want %q", names, want)
	}
	var b strings.Builder
	if err := Write(&b, Page{Title: "long", Runs: []Run{{ID: "r", Title: f.Scenario.Name, Expected: tr, Actual: tr}}}); err != nil {
		t.Fatal(err)
	}
	if n := b.Len(); n > 16<<20 {
		t.Errorf("the page of %d entries is %d MB", len(tr.Entries), n>>20)
	}
	if !strings.Contains(b.String(), "&#34;link&#34;") {
		t.Error("no entry's JSON is in linear form")
	}
}

// TestActorsShareAColumnOnlyWhenTheirLivesDoNotOverlap: two tool calls running at once get a
// column each; a later one takes the first column free again, and a stream keeps its own.
func TestActorsShareAColumnOnlyWhenTheirLivesDoNotOverlap(t *testing.T) {
	f := suiteScenario(t, "tools-parallel/completion-order")
	tr, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	rv := buildRun(Run{ID: "r", Title: f.Scenario.Name, Actual: tr})
	tools := 0
	for _, ln := range rv.Lanes {
		if ln.Class == laneTool {
			tools++
		}
	}
	if tools < 2 {
		t.Errorf("parallel tool calls share %d column: %+v", tools, rv.Lanes)
	}
	// No row has two entries' dots in one column, nor a dot outside its actor's column.
	for _, row := range rv.Rows {
		for _, c := range row.Cells {
			if c.Empty {
				continue
			}
			dots := 0
			for k, st := range c.Lanes {
				if st == "d" {
					dots++
					if rv.Lanes[k].Class != c.Lane.Class {
						t.Errorf("row %s: a %s entry marked in the %s column", row.ID, c.Lane.Class, rv.Lanes[k].Name)
					}
				}
			}
			if dots != 1 {
				t.Errorf("row %s: %d dots", row.ID, dots)
			}
		}
	}
}

// TestIndexSaysExpectedFailuresAndUnexpectedPasses: with known failures listed, the index's
// verdict line counts the expected failures as the terminal does (it said "0 passed, 3
// failed" of 5 scenarios), and a listed scenario that passed says so in its cause column;
// a failing scenario's page gives a differing field's two values, not only its name.
func TestIndexSaysExpectedFailuresAndUnexpectedPasses(t *testing.T) {
	failing, passing := suiteScenario(t, "tools-sequential/updates"), suiteScenario(t, "truncation/basic")
	files := []*scenarios.File{failing, passing}
	list := []*sim.Scenario{failing.Scenario, passing.Scenario}
	rep := conformance.Verify(context.Background(), list, twoFaults{sim.NewReference()}, conformance.Options{
		Scenarios:  diagnose.FromFiles(files),
		ExpectFail: map[string]bool{failing.Scenario.Name: true, passing.Scenario.Name: true},
	})
	if rep.ExpectedFailures != 1 || rep.Failed != 1 || !rep.Results[1].UnexpectedPass() {
		t.Fatalf("%d expected failures, %d failed: %+v", rep.ExpectedFailures, rep.Failed, rep.Results)
	}
	dir := t.TempDir()
	traces := func(name string) (*trace.Trace, *trace.Trace, error) {
		want, err := sim.Run(failing.Scenario, sim.NewReference())
		if err != nil {
			return nil, nil, err
		}
		got, err := sim.Run(failing.Scenario, twoFaults{sim.NewReference()})
		return want, got, err
	}
	if err := WriteConformance(dir, Conformance{Report: rep, Traces: traces}); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 passed, 1 failed; 1 expected failure (listed as known)", "unexpected pass: the scenario is listed as a known failure",
		"Causes seen in the expected failures"} {
		if !strings.Contains(string(index), want) {
			t.Errorf("the index lacks %q", want)
		}
	}

	// A request made without the key getApiKey gave: the field and both its values.
	keyed := suiteScenario(t, "prepare-hooks/get-api-key")
	c := Conformance{Report: conformance.Verify(context.Background(), []*sim.Scenario{keyed.Scenario}, twoFaults{sim.NewReference()},
		conformance.Options{Scenarios: diagnose.FromFiles([]*scenarios.File{keyed})})}
	if err := WriteConformance(dir, c); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, PageName(keyed.Scenario.Name)))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`the field data\.apiKey differs: expected &#34;[^&]+&#34;, actual`).Match(page) {
		t.Errorf("the page does not give the differing field's values:\n%s", regexp.MustCompile(`<ol class="findings">[\s\S]*?</ol>`).Find(page))
	}
}

// TestCodeSpans: a rule's `backquoted` parts are code on the index, the rest escaped (the
// index showed the Markdown's backquotes).
func TestCodeSpans(t *testing.T) {
	for in, want := range map[string]string{
		"`thinkingLevel` (`\"off\"` for none) <b>": `<code>thinkingLevel</code> (<code>&#34;off&#34;</code> for none) &lt;b&gt;`,
		"an odd ` stays": "an odd ` stays",
	} {
		if got := string(codeSpans(in)); got != want {
			t.Errorf("codeSpans(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEachFailingPageLinksTheNext: a failing scenario's page links the next failing
// scenario's page, which exists; the last links none.
func TestEachFailingPageLinksTheNext(t *testing.T) {
	c := faultyConformance(t, "tools-sequential", "prepare-hooks")
	dir := t.TempDir()
	if err := WriteConformance(dir, c); err != nil {
		t.Fatal(err)
	}
	var failing []string
	for _, res := range c.Report.Results {
		if res.Status == conformance.Fail {
			failing = append(failing, res.Scenario)
		}
	}
	if len(failing) < 2 {
		t.Fatalf("%d failing scenarios: the test needs two", len(failing))
	}
	for i, name := range failing {
		page, err := os.ReadFile(filepath.Join(dir, PageName(name)))
		if err != nil {
			t.Fatal(err)
		}
		link := regexp.MustCompile(`href="([^"]+)">next failing scenario: `).FindSubmatch(page)
		switch {
		case i == len(failing)-1 && link != nil:
			t.Errorf("the last page %s links %s", name, link[1])
		case i < len(failing)-1 && (link == nil || string(link[1]) != PageName(failing[i+1])):
			t.Errorf("page %s: next link %q, want %s", name, link, PageName(failing[i+1]))
		}
	}
}
