package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// conformFlags are the flags of turnstile conform.
type conformFlags struct {
	impl, profile, junit, shard, expectFail, format string
	tracks, level, ignoreList                       string
	reportDir                                       string
	suite                                           []string
	proc                                            processFlags
	jobs, maxFindings                               int
	sel                                             selection
	budget                                          budgetFlags
}

func conformCmd() *cobra.Command {
	var o conformFlags
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "Verify a loop implementation against the reference, scenario by scenario",
		Long: `Conform runs every scenario against the reference and against your loop (--impl CMD, speaking
conformance/PROTOCOL.md), compares the traces, and prints each failure's findings and their
causes, ranked; exit 0 exactly when no scenario failed. Details: docs/CLI.md#conform`,
		Example: `  turnstile conform --impl "node conformance/adapters/pi/adapter.mjs" --junit pi.xml
  turnstile conform --impl "python3 my_adapter.py" --run '^queues/' --profile semantic
  turnstile conform --impl "./my-port" --expect-fail known.txt --report conform-report`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.OutOrStdout()) },
	}
	o.register(cmd.Flags())
	mainFlags(cmd, "impl", "run", "profile", "tracks", "expect-fail", "report", "junit")
	return cmd
}

func (o *conformFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.impl, "impl", "", `command of the implementation under test; "" is the built-in reference`)
	f.StringArrayVar(&o.suite, "suite", nil, "scenario file or directory (repeatable); default: the embedded curated suite")
	f.StringVar(&o.profile, "profile", "strict", "comparison profile: strict or semantic")
	f.StringVar(&o.junit, "junit", "", "write a JUnit XML report to this file")
	f.StringVar(&o.reportDir, "report", "", "write an HTML report into this directory")
	f.StringVar(&o.format, "format", "text", "output: text or json")
	f.IntVar(&o.maxFindings, "max-findings", 0, "show at most N findings in full per scenario (0: all)")
	f.StringVar(&o.shard, "shard", "", "run only shard K of N (K/N, from 1), e.g. 2/4")
	o.proc.register(f, protocol.DefaultTimeout, "scenario")
	f.IntVar(&o.jobs, "jobs", 1, "implementations to run at once")
	f.StringVar(&o.expectFail, "expect-fail", "", `file listing scenarios known to fail, one a line ("NAME" or "NAME: CAUSE")`)
	f.StringVar(&o.ignoreList, "ignore", "", "file listing findings to leave out, one a line")
	o.sel.register(f)
	o.budget.register(f)
	f.StringVar(&o.tracks, "tracks", "", `pi version to hold the implementation to (default: its hello's "tracks")`)
	f.StringVar(&o.level, "level", "pi", "pi (every rule) or core (pi's conventions not judged)")
}

// run verifies the implementation on the suite and writes the reports asked for.
func (o *conformFlags) run(out io.Writer) error {
	files, opts, err := o.options()
	if err != nil {
		return err
	}
	list := make([]*sim.Scenario, 0, len(files))
	for _, f := range files {
		list = append(list, f.Scenario)
	}
	st := newStyler(out)
	progress := &conformance.Progress{Max: o.maxFindings, Status: st.status}
	if o.format == "text" {
		opts.OnResult = func(r conformance.Result) { fmt.Fprint(out, progress.Text(r)) }
	}
	newImpl, err := implementationAt(o.impl, o.proc, o.tracks)
	if err != nil {
		return usage(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report := conformance.VerifyParallel(ctx, list, newImpl, o.jobs, opts)
	if report.StartError != "" {
		return usage(fmt.Errorf("the implementation did not start: %s", report.StartError))
	}
	if o.impl != "" && ctx.Err() == nil {
		o.recheck(ctx, &report, list, opts)
	}
	if err := o.write(out, report, files, newImpl); err != nil {
		return err
	}
	if !report.OK() {
		return failed(fmt.Errorf("%d %s failed", report.Failed, plural(report.Failed, "scenario", "scenarios")))
	}
	return nil
}

// options checks the flags and loads the suite and the lists --ignore and --expect-fail name.
func (o *conformFlags) options() ([]*scenarios.File, conformance.Options, error) {
	var opts conformance.Options
	prof, err := trace.ParseProfile(o.profile)
	if err != nil {
		return nil, opts, usage(err)
	}
	if o.format != "text" && o.format != "json" {
		return nil, opts, usage(fmt.Errorf("--format must be text or json, not %q", o.format))
	}
	if o.maxFindings < 0 {
		return nil, opts, usage(fmt.Errorf("--max-findings must be 0 (no cap) or more, not %d", o.maxFindings))
	}
	files, suite, err := load(o.suite, o.sel, o.budget)
	if err != nil {
		return nil, opts, err
	}
	if files, err = applyShard(files, o.shard); err != nil {
		return nil, opts, usage(err)
	}
	if err := checkTracks(o.tracks); err != nil {
		return nil, opts, err
	}
	lvl, err := levels.Parse(o.level)
	if err != nil {
		return nil, opts, usage(err)
	}
	opts = conformance.Options{Profile: prof, Scenarios: diagnose.FromFiles(files), Tracks: o.tracks, Level: lvl}
	if o.ignoreList != "" {
		listed, err := readNameList(o.ignoreList)
		if err != nil {
			return nil, opts, usage(err)
		}
		opts.Ignore = map[string]bool{}
		for _, l := range listed {
			opts.Ignore[l] = true
		}
	}
	if o.expectFail != "" {
		listed, err := readNameList(o.expectFail)
		if err != nil {
			return nil, opts, usage(err)
		}
		if opts.ExpectFail, opts.ExpectFindings, err = conformance.ParseExpectFail(listed, suite); err != nil {
			return nil, opts, usage(fmt.Errorf("--expect-fail %s: %w", o.expectFail, err))
		}
	}
	return files, opts, nil
}

// recheck re-runs a scenario per cause without the exchange's shortcuts, to tell whether
// they are the cause.
func (o *conformFlags) recheck(ctx context.Context, report *conformance.Report, list []*sim.Scenario, opts conformance.Options) {
	plain := o.proc
	plain.oneAtATime = true
	again, err := implementation(o.impl, plain)
	if err != nil {
		return
	}
	p := again()
	conformance.RecheckWithoutShortcuts(ctx, report, list, p, recheckScenarios, opts)
	closeImpl(p)
}

// write prints the report (text or JSON) and writes the --junit and --report files.
func (o *conformFlags) write(out io.Writer, report conformance.Report, files []*scenarios.File, newImpl func() sim.Implementation) error {
	if o.format == "json" {
		if err := report.WriteJSON(out); err != nil {
			return failed(err)
		}
	} else {
		fmt.Fprintf(out, "conformance of %s, profile %s, %d scenarios in %s\n", report.Implementation, report.Profile,
			len(report.Results), report.Duration.Round(time.Millisecond))
		if err := report.WriteSummary(out); err != nil {
			return failed(err)
		}
	}
	if o.junit != "" {
		if err := writeJUnitFile(o.junit, report); err != nil {
			return usage(err)
		}
	}
	if o.reportDir != "" {
		if err := writeConformReport(o.reportDir, report, files, newImpl); err != nil {
			return usage(err)
		}
	}
	return nil
}

// implementation makes the implementation under test: the reference in-process, or a
// command. A command starting with "turnstile" runs this very binary, so that
// --impl "turnstile adapter" works without turnstile on the PATH.
func implementation(command string, proc processFlags) (func() sim.Implementation, error) {
	if strings.TrimSpace(command) == "" {
		return func() sim.Implementation { return sim.NewReference() }, nil
	}
	newProcess, err := process(command, proc)
	if err != nil {
		return nil, err
	}
	return func() sim.Implementation { return newProcess() }, nil
}

// process makes the adapter processes of command, a command line that is not blank.
func process(command string, proc processFlags) (func() *protocol.Process, error) {
	if proc.timeout <= 0 || proc.helloTimeout <= 0 {
		return nil, fmt.Errorf("--timeout and --hello-timeout must be positive (got %v and %v)", proc.timeout, proc.helloTimeout)
	}
	argv, err := splitCommand(command)
	if err != nil {
		return nil, err
	}
	if argv[0] == "turnstile" {
		if self, err := os.Executable(); err == nil {
			argv[0] = self
		}
	}
	return func() *protocol.Process {
		return &protocol.Process{Command: argv, Timeout: proc.timeout, HelloTimeout: proc.helloTimeout, OneAtATime: proc.oneAtATime, Stderr: os.Stderr}
	}, nil
}

// recheckScenarios is how many causes conform and explore re-run one at a time (a scenario
// each) when the exchange's shortcuts were taken, to tell whether they are the cause.
const recheckScenarios = 3

// checkTracks checks a --tracks flag: "" or a pi release the reference can behave as, from
// loop.OldestVersion to loop.NewestVersion. A hello may claim a newer pi (the reference then
// behaves as the newest it knows), but a flag naming one is a mistake ("16.0" for "1.6.0") or
// asks for a pi the reference does not know: either way, a usage error.
func checkTracks(tracks string) error {
	if tracks == "" {
		return nil
	}
	if _, err := loop.BehaviourOf(tracks); err != nil {
		return usage(fmt.Errorf("--tracks: %w", err))
	}
	if loop.VersionLess(loop.NewestVersion, tracks) {
		return usage(fmt.Errorf("--tracks: pi %s is newer than %s, the newest release the reference can behave as (give one from %s to %s)",
			tracks, loop.NewestVersion, loop.OldestVersion, loop.NewestVersion))
	}
	return nil
}

// implementationAt is implementation with the built-in reference behaving as pi version
// tracks ("" for the newest).
func implementationAt(command string, proc processFlags, tracks string) (func() sim.Implementation, error) {
	if strings.TrimSpace(command) == "" {
		b, err := loop.BehaviourOf(tracks)
		if err != nil {
			return nil, err
		}
		return func() sim.Implementation { return sim.NewReferenceWith(b) }, nil
	}
	return implementation(command, proc)
}

// closeImpl closes an implementation that holds a process.
func closeImpl(impl sim.Implementation) {
	if c, ok := impl.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// splitCommand splits a command line into words, honouring single and double quotes and
// backslashes the way a shell does for simple commands.
func splitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("--impl %q: unterminated quote or escape", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("--impl is empty")
	}
	return words, nil
}

// applyShard keeps shard K of N (1-based) of the list: every Nth scenario from the Kth.
func applyShard[T any](list []T, shard string) ([]T, error) {
	if shard == "" {
		return list, nil
	}
	ks, ns, ok := strings.Cut(shard, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	if !ok || errK != nil || errN != nil || n < 1 || k < 1 || k > n {
		return nil, fmt.Errorf("--shard must be K/N with 1 <= K <= N, not %q", shard)
	}
	var out []T
	for i := k - 1; i < len(list); i += n {
		out = append(out, list[i])
	}
	return out, nil
}

// readNameList reads one name a line; blank lines and # comments are ignored.
func readNameList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	return names, sc.Err()
}

func adapterCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "adapter",
		Short: "Serve the reference loop over the conformance protocol (stdin/stdout)",
		Long: `Adapter serves the built-in reference loop over the conformance protocol on stdin and
stdout, as any third-party adapter would.

Details: docs/CLI.md#adapter`,
		Example: `  turnstile conform --impl "turnstile adapter"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := protocol.Serve(os.Stdin, os.Stdout); err != nil {
				return failed(err)
			}
			return nil
		},
	}
}
