package diagnose_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestData runs the cases of testdata/*.txt: each takes the reference's trace of a scenario,
// edits a copy as a faulty implementation would have run it, and prints what diagnose finds.
// testdata/README.md describes the commands and the edits; rewrite the expected outputs with
// `go test ./diagnose -run TestData -rewrite` and read the diff before committing it.
func TestData(t *testing.T) {
	suite, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/*.txt: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			d := &dataRun{files: map[string]*scenarios.File{}}
			for _, f := range suite {
				d.files[f.Scenario.Name] = f
			}
			datadriven.RunTest(t, path, d.run)
		})
	}
}

// dataRun is the state of one data file: its scenarios and the diagnoses not yet grouped.
type dataRun struct {
	files   map[string]*scenarios.File
	pending []diagnose.Diagnosis
}

func (d *dataRun) run(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "scenario":
		return d.scenario(t, td)
	case "diagnose":
		return d.diagnose(t, td)
	case "error":
		return d.runError(t, td)
	case "causes":
		causes := diagnose.Group(d.pending)
		d.pending = nil
		return printCauses(causes)
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// scenario adds a scenario, its YAML the input, beside the curated suite's.
func (d *dataRun) scenario(t *testing.T, td *datadriven.TestData) string {
	var name string
	td.ScanArgs(t, "name", &name)
	f, err := scenarios.Parse(name+".yaml", name, []byte(td.Input))
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	d.files[f.Scenario.Name] = f
	return "ok"
}

// diagnose edits the implementation's copy of the scenario's reference trace (or, with
// scenario=none, two empty traces) and prints the findings.
func (d *dataRun) diagnose(t *testing.T, td *datadriven.TestData) string {
	var name string
	td.ScanArgs(t, "scenario", &name)
	sc := diagnose.Scenario{Name: "x"}
	want := &trace.Trace{}
	if name != "none" {
		f := d.files[name]
		if f == nil {
			td.Fatalf(t, "no scenario %s", name)
		}
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		sc, want = diagnose.FromFile(f), tr.Expanded()
	}
	got := &trace.Trace{Scenario: want.Scenario, Entries: slices.Clone(want.Entries)}
	for i, line := range strings.Split(td.Input, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := applyEdit(want, got, line); err != nil {
			td.Fatalf(t, "input line %d: %v", i+1, err)
		}
	}
	renumber(want)
	renumber(got)
	fs := diagnose.Diagnose(sc, trace.Compare(want, got, trace.Strict), diagnose.Options{})
	d.keep(td, diagnose.Diagnosis{Scenario: sc, Findings: fs})
	return printFindings(td, fs)
}

// keep keeps a diagnosis for causes: alone, or with add after those kept before.
func (d *dataRun) keep(td *datadriven.TestData, diag diagnose.Diagnosis) {
	if !td.HasArg("add") {
		d.pending = nil
	}
	d.pending = append(d.pending, diag)
}

// runError diagnoses a run that failed with each input line's error (a JSON string, or
// "text"*N, for text of its own); with signatures it prints each distinct signature (and
// headline, with show=headline) once, with how many runs had it.
func (d *dataRun) runError(t *testing.T, td *datadriven.TestData) string {
	sc := diagnose.Scenario{Name: "x"}
	var name, budget string
	if td.MaybeScanArgs(t, "scenario", &name) {
		sc.Name = name
		if f := d.files[name]; f != nil {
			sc = diagnose.FromFile(f)
		}
	}
	if arg, ok := td.Arg("rules"); ok {
		sc.Rules = arg.Vals
	}
	td.MaybeScanArgs(t, "budget", &budget)
	var out strings.Builder
	sigs := map[string]int{}
	var order []string
	if !td.HasArg("add") {
		d.pending = nil
	}
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		msg, err := expandValue(line)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		var runErr error = errors.New(msg)
		switch {
		case td.HasArg("timeout"):
			runErr = wrapped{msg, trace.ErrTimeout}
		case budget != "":
			runErr = &sim.BudgetError{Budget: budget, Text: msg}
		}
		fs := diagnose.Diagnose(sc, nil, diagnose.Options{RunError: runErr})
		d.pending = append(d.pending, diagnose.Diagnosis{Scenario: sc, Findings: fs})
		if !td.HasArg("signatures") {
			out.WriteString(printFindings(td, fs))
			continue
		}
		shown, _ := td.Arg("show")
		for _, f := range fs {
			key := f.Signature
			if slices.Contains(shown.Vals, "headline") {
				key += "\n  headline: " + f.Headline
			}
			if sigs[key] == 0 {
				order = append(order, key)
			}
			sigs[key]++
		}
	}
	for _, s := range order {
		fmt.Fprintf(&out, "%d× %s\n", sigs[s], s)
	}
	return out.String()
}

// wrapped is an error of its own words that wraps another (trace.ErrTimeout).
type wrapped struct {
	msg string
	err error
}

func (w wrapped) Error() string { return w.msg }
func (w wrapped) Unwrap() error { return w.err }

// renumber sets the entries' seq as the world does.
func renumber(tr *trace.Trace) {
	for i := range tr.Entries {
		tr.Entries[i].Seq = i + 1
	}
}

// printFindings prints the findings of kinds=(…) (all without it), each with what it says
// and its rule (left out when the finding before has the same); show=(values, lines,
// headline, member) adds those fields.
func printFindings(td *datadriven.TestData, fs []diagnose.Finding) string {
	kinds, _ := td.Arg("kinds")
	shown, _ := td.Arg("show")
	show := func(s string) bool { return slices.Contains(shown.Vals, s) }
	var b strings.Builder
	n, rule := 0, ""
	for _, f := range fs {
		if len(kinds.Vals) > 0 && !slices.Contains(kinds.Vals, string(f.Kind)) {
			continue
		}
		n++
		fmt.Fprintf(&b, "%s %s", f.Kind, f.Signature)
		if f.Consequence {
			b.WriteString(" (consequence)")
		}
		fmt.Fprintf(&b, "\n  at %d/%d", f.At.Expected, f.At.Actual)
		if f.Path != "" {
			b.WriteString(" " + f.Path)
		}
		if f.Count > 1 {
			fmt.Fprintf(&b, " (%d entries)", f.Count)
		}
		b.WriteString("\n")
		if f.Rule != rule {
			fmt.Fprintf(&b, "  rule: %s\n", f.Rule)
		}
		rule = f.Rule
		if f.RuleID != "" && !strings.HasPrefix(f.Rule, f.RuleID+" ") {
			fmt.Fprintf(&b, "  rule id: %s\n", f.RuleID)
		}
		if f.Invariant != "" {
			fmt.Fprintf(&b, "  invariant: %s\n", f.Invariant)
		}
		fmt.Fprintf(&b, "  says: %s\n", f.Says)
		if show("headline") {
			fmt.Fprintf(&b, "  headline: %s\n", f.Headline)
		}
		if show("member") && f.Member != "" {
			fmt.Fprintf(&b, "  member: %s\n", f.Member)
		}
		for _, field := range []struct{ show, name, value string }{
			{"lines", "expected line", f.ExpectedLine}, {"lines", "actual line", f.ActualLine},
			{"values", "expected", f.Expected}, {"values", "actual", f.Actual},
		} {
			if show(field.show) && field.value != "" {
				fmt.Fprintf(&b, "  %s: %s\n", field.name, field.value)
			}
		}
	}
	if n == 0 {
		return "no findings\n"
	}
	return b.String()
}

// printCauses prints Group's causes, ranked.
func printCauses(causes []diagnose.Cause) string {
	if len(causes) == 0 {
		return "no causes\n"
	}
	var b strings.Builder
	for _, c := range causes {
		fmt.Fprintf(&b, "cause %s: %s\n  rule: %s\n  seen in: %s\n  explains: %s\n",
			c.Signature, c.Title, c.Rule, strings.Join(c.Scenarios, ", "), strings.Join(c.Explains, ", "))
	}
	return b.String()
}
