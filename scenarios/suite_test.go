package scenarios_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestSuiteExpectations runs every curated scenario against the reference and checks its
// inline expectations.
func TestSuiteExpectations(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.Rel, func(t *testing.T) {
			tr, err := sim.Run(f.Scenario, sim.NewReference())
			if err != nil {
				t.Fatal(err)
			}
			if problems := f.Expect.Check(tr); len(problems) > 0 {
				t.Errorf("%s:\n  %s\ntimeline:\n%s", f.Path, strings.Join(problems, "\n  "), tr.Timeline())
			}
		})
	}
}

// TestSuiteFilesDocumentTheirRule requires the header comment and since: of every file.
func TestSuiteFilesDocumentTheirRule(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, _ := fs.ReadFile(scenarios.SuiteFS(), f.Path)
		if !strings.HasPrefix(string(data), "# Rule: ") {
			t.Errorf("%s: the file must start with a '# Rule: …' comment naming the rule it pins down", f.Path)
		}
		if f.Scenario.Since == "" {
			t.Errorf("%s: since: is missing", f.Path)
		}
		if f.Expect.Empty() {
			t.Errorf("%s: expect: is missing; say what the scenario shows", f.Path)
		}
	}
}

// TestATimelineTextOutOfOrderSaysWhere: a timeline text not found in order says whether it is
// on no line, or only before the line the text before it matched, and which lines those are
// (a stranger's review: the mistake was the text before, which matched a later line than
// meant, and the message named only the text after it).
func TestATimelineTextOutOfOrderSaysWhere(t *testing.T) {
	f, err := scenarios.Parse("x.yaml", "x", []byte("provider: [\"one\", \"two\"]\nrun: [\"go\"]\nuser:\n  - {at: 0, followUp: [\"more\"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	check := func(timeline ...string) string {
		problems := (&scenarios.Expect{Timeline: timeline}).Check(tr)
		if len(problems) != 1 {
			t.Fatalf("%v: problems %q", timeline, problems)
		}
		return problems[0]
	}
	if p := check("message_end assistant", "nowhere"); !strings.HasSuffix(p, `"nowhere" (in order); no line contains it`) {
		t.Errorf("on no line: %s", p)
	}
	p := check(`message_start user "more"`, "turn_start")
	if !strings.HasPrefix(p, `expected a timeline line containing "turn_start" after the one containing "message_start user \"more\"" (entry `) || !strings.Contains(p, `; it is only earlier, on entry `) {
		t.Errorf("only before: %s", p)
	}
	// A text not found does not hide those after it: each is looked for after the last found.
	problems := (&scenarios.Expect{Timeline: []string{"agent_start", "nowhere", "message_end assistant", "elsewhere"}}).Check(tr)
	if len(problems) != 2 || !strings.Contains(problems[0], `"nowhere"`) || !strings.Contains(problems[1], `"elsewhere"`) {
		t.Errorf("two texts missing: %q", problems)
	}
}

// TestTimelineTextsMatchWhateverTheRunsOfSpaces: a text with one space where the timeline pads
// a column with several matches, in timeline: and absent: alike, and so does one with more
// spaces than the line (a stranger's text with one space passed silently as never found).
func TestTimelineTextsMatchWhateverTheRunsOfSpaces(t *testing.T) {
	f, err := scenarios.Parse("x.yaml", "x", []byte("provider: [\"one\"]\nrun: [\"go\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tr.Timeline()), "ev    message_end assistant stop") {
		t.Fatalf("the timeline no longer pads the kind column; pick another text:\n%s", tr.Timeline())
	}
	for _, text := range []string{"ev message_end assistant stop", "ev\tmessage_end  assistant   stop", "0ms ev agent_end"} {
		if problems := (&scenarios.Expect{Timeline: []string{text}}).Check(tr); len(problems) > 0 {
			t.Errorf("%q: %q", text, problems)
		}
		if problems := (&scenarios.Expect{Absent: []string{text}}).Check(tr); len(problems) != 1 {
			t.Errorf("absent %q: %q", text, problems)
		}
	}
	// Spaces stand for spaces only: a text missing one, or with another word, still fails.
	for _, text := range []string{"evmessage_end assistant", "ev message_end user stop"} {
		if problems := (&scenarios.Expect{Timeline: []string{text}}).Check(tr); len(problems) != 1 || !strings.Contains(problems[0], "no line contains it") {
			t.Errorf("%q: %q", text, problems)
		}
	}
}

func TestSuiteFile(t *testing.T) {
	if f, err := scenarios.SuiteFile("truncation/basic"); err != nil || f.Scenario.Name != "truncation/basic" || !f.Embedded {
		t.Errorf("truncation/basic: %v, %+v", err, f)
	}
	if _, err := scenarios.SuiteFile("truncation/nope"); err == nil || !strings.Contains(err.Error(), `"truncation/nope"`) {
		t.Errorf("a missing name: %v", err)
	}
}
