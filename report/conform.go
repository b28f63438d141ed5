package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/trace"
)

//go:embed index.html
var indexHTML string

var indexTemplate = template.Must(template.New("index").Funcs(template.FuncMap{
	"inc":  func(i int) int { return i + 1 },
	"page": func(name string) string { return PageName(name) },
	"code": codeSpans,
}).Parse(indexHTML))

// codeSpans renders text whose `backquoted` parts are code (the rules of docs/SEMANTICS.md
// are written so) as HTML: those parts in <code>, everything escaped.
func codeSpans(text string) template.HTML {
	parts := strings.Split(text, "`")
	if len(parts)%2 == 0 { // an unpaired backquote: the text as it is
		return template.HTML(template.HTMLEscapeString(text))
	}
	var b strings.Builder
	for i, part := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(part) + "</code>")
		} else {
			b.WriteString(template.HTMLEscapeString(part))
		}
	}
	return template.HTML(b.String())
}

// Conformance is a conformance run to report.
type Conformance struct {
	Report conformance.Report
	// Traces gives a failing scenario's two traces: the reference's and the implementation's.
	// Runs are deterministic, so running the scenario again gives the traces the verdict saw.
	Traces func(scenario string) (want, got *trace.Trace, err error)
}

// PageName is the file name of a scenario's page in a conformance report.
func PageName(scenario string) string { return slug(scenario) + ".html" }

// PagesFile is the file, in a conformance report's directory, that lists the scenario pages
// the report wrote, so that the next report written there removes those it does not write
// again (a page of a scenario that has since passed would otherwise look current). No other
// file of the directory is touched.
const PagesFile = ".turnstile-pages"

// WriteConformance writes a conformance run's report into dir (created if needed):
// index.html — the verdict, the causes of failure (each once, with the scenarios it
// explains), the failing scenarios, and the outcome by rule family and by invariant — and a
// page per failing scenario (PageName), its two traces side by side with every finding
// marked. Pages an earlier report listed in dir's PagesFile and this one does not write are
// removed.
func WriteConformance(dir string, c Conformance) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// Each failing scenario's page links the next one's.
	var failingNames []string
	for _, res := range c.Report.Results {
		if res.Status == conformance.Fail || res.Status == conformance.ExpectedFail {
			failingNames = append(failingNames, res.Scenario)
		}
	}
	next := func(name string) string {
		if i := slices.Index(failingNames, name); i >= 0 && i+1 < len(failingNames) {
			return failingNames[i+1]
		}
		return ""
	}
	r := c.Report
	view := newIndexView(&r)
	for _, res := range r.Results {
		switch res.Status {
		case conformance.Fail, conformance.ExpectedFail:
			view.Failing = append(view.Failing, failingOf(res))
			if err := writeScenarioPage(dir, r, res, next(res.Scenario), c.Traces); err != nil {
				return err
			}
		case conformance.Skip:
			view.Others = append(view.Others, otherView{res.Scenario, string(res.Status), res.Reason})
		}
	}
	var buf bytes.Buffer
	if err := indexTemplate.Execute(&buf, view); err != nil {
		return fmt.Errorf("report: rendering the index: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	written := make([]string, len(failingNames))
	for i, name := range failingNames {
		written[i] = PageName(name)
	}
	return replacePages(dir, written)
}

// indexView is what index.html renders.
type indexView struct {
	Title, Profile, Duration, Summary, StartError string
	CSS                                           template.CSS
	Scenarios                                     int
	Failed                                        bool
	Causes                                        []diagnose.Cause
	KnownCauses                                   []diagnose.Cause // of the expected failures
	Failing                                       []failingView
	Others                                        []otherView
	Families, Invariants                          []conformance.Tally
}

// failingView is a failing scenario's line of the index.
type failingView struct {
	Name, Family, Page, Cause, Divergence string
	// Expected and Actual are the first divergence's two timeline lines.
	Expected, Actual string
	Findings         int
}

// otherView is a skipped scenario's line of the index.
type otherView struct{ Name, Status, Reason string }

// newIndexView is the index of a report, its scenarios not listed yet.
func newIndexView(r *conformance.Report) indexView {
	return indexView{
		Title: "conformance of " + or(r.Implementation, "the implementation"), Profile: string(r.Profile),
		Duration: r.Duration.Round(time.Millisecond).String(), Summary: summaryOf(r), StartError: r.StartError,
		CSS: css, Scenarios: len(r.Results), Failed: !r.OK(), Causes: r.Causes, KnownCauses: r.KnownCauses,
		Families: r.Families, Invariants: r.Invariants,
	}
}

// failingOf is a failing scenario's line of the index: its causes, and its first divergence
// or its error.
func failingOf(res conformance.Result) failingView {
	f := failingView{Name: res.Scenario, Family: res.Family, Page: PageName(res.Scenario), Findings: len(res.Findings)}
	causes := map[string]bool{}
	for _, x := range res.Findings {
		if x.Cause != "" && !causes[x.Cause] {
			causes[x.Cause] = true
			if f.Cause != "" {
				f.Cause += "; "
			}
			f.Cause += x.Cause
		}
	}
	if i := slices.IndexFunc(res.Findings, func(x diagnose.Finding) bool { return x.Kind == diagnose.Divergence }); i >= 0 && res.Error == "" {
		d := res.Findings[i]
		f.Divergence = fmt.Sprintf("entry %d", cmp.Or(d.At.Actual, d.At.Expected))
		f.Expected, _, _ = strings.Cut(d.ExpectedLine, "\n")
		f.Actual, _, _ = strings.Cut(d.ActualLine, "\n")
	} else if res.Error != "" {
		f.Divergence = res.Error
	}
	if res.Status == conformance.ExpectedFail {
		f.Cause = "(expected to fail) " + f.Cause
	}
	if res.UnexpectedPass() {
		f.Cause = res.Reason
	}
	return f
}

// replacePages removes from dir the pages its PagesFile lists that are not among written,
// then lists written there instead.
func replacePages(dir string, written []string) error {
	list := filepath.Join(dir, PagesFile)
	before, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("report: %w", err)
	}
	for _, name := range strings.Fields(string(before)) {
		// Only a bare page name, as this function writes them: never a path elsewhere.
		if slices.Contains(written, name) || name != filepath.Base(name) || !strings.HasSuffix(name, ".html") || name == "index.html" {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("report: removing a page of an earlier report: %w", err)
		}
	}
	var b strings.Builder
	for _, name := range written {
		b.WriteString(name + "\n")
	}
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// summaryOf is the run's verdict line, as the terminal's last lines say it: the counts, and
// the expected failures they leave out.
func summaryOf(r *conformance.Report) string {
	if x := r.ExpectedText(); x != "" {
		return r.Summary() + "; " + x
	}
	return r.Summary()
}

// writeScenarioPage writes one failing scenario's page, linking next's ("" for none).
func writeScenarioPage(dir string, r conformance.Report, res conformance.Result, next string, traces func(string) (*trace.Trace, *trace.Trace, error)) error {
	run := Run{Title: res.Scenario, Subtitle: res.Reason, ExpectedLabel: "expected: the reference", ActualLabel: "actual: " + or(r.Implementation, "the implementation"), Failed: true}
	if traces != nil {
		want, got, err := traces(res.Scenario)
		if err != nil {
			run.Subtitle += " (its traces could not be made again: " + err.Error() + ")"
		}
		run.Expected, run.Actual = want, got
	}
	if run.Expected == nil {
		run.Expected = &trace.Trace{}
	}
	if run.Actual == nil {
		run.Actual = &trace.Trace{}
	}
	var causes []string
	seen := map[string]bool{}
	for _, f := range res.Findings {
		rf := Finding{Rule: string(f.Kind), Msg: f.Says}
		if f.Kind == diagnose.Invariant && f.Invariant != "" {
			rf.Rule += " " + f.Invariant
		}
		if f.Rule != "" {
			rf.Detail = "rule: " + f.Rule
		}
		if f.Path != "" && (f.Expected != "" || f.Actual != "") {
			// The terminal says both values; a page that only names the field made one
			// compare two entries' JSON by hand.
			w, g, from := trace.ShowValues(cmp.Or(f.Expected, "(absent)"), cmp.Or(f.Actual, "(absent)"))
			where := ""
			if from > 0 {
				where = fmt.Sprintf(" (from character %d on)", from)
			}
			rf.Msg += fmt.Sprintf(": expected %s, actual %s%s", w, g, where)
		}
		rf.Later = f.Consequence
		if f.Cause != "" && !seen[f.Cause] {
			seen[f.Cause] = true
			causes = append(causes, f.Cause)
		}
		switch {
		case f.ActualLine == "" && f.ExpectedLine != "" && f.At.Expected > 0 && f.At.Expected <= len(run.Expected.Entries):
			// Entries the implementation lacks: marked where the reference has them.
			rf.ExpectedEntry = run.Expected.Entries[f.At.Expected-1].Seq
		case f.At.Actual > 0 && f.At.Actual <= len(run.Actual.Entries):
			rf.Entry = run.Actual.Entries[f.At.Actual-1].Seq
		case f.At.Expected > 0 && f.At.Expected <= len(run.Expected.Entries):
			rf.ExpectedEntry = run.Expected.Entries[f.At.Expected-1].Seq
		}
		run.Findings = append(run.Findings, rf)
	}
	if len(causes) > 0 {
		run.Subtitle += " · " + plural(len(causes), "cause", "causes") + ": " + strings.Join(causes, "; ")
	}
	p := Page{Title: res.Scenario, Intro: "A failing scenario of the conformance run: the reference's trace and the implementation's, aligned entry by entry, with every finding marked where it happens.", Back: "index.html", Runs: []Run{run}}
	if next != "" {
		p.Next, p.NextTitle = PageName(next), next
	}
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, PageName(res.Scenario)), buf.Bytes(), 0o644)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
