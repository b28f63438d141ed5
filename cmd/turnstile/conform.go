package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

func conformCmd() *cobra.Command {
	var (
		impl, profile, junit, shard, expectFail, format string
		tracks, level, ignoreList                       string
		reportDir                                       string
		suite                                           []string
		proc                                            processFlags
		jobs, maxFindings                               int
		sel                                             selection
		budget                                          budgetFlags
	)
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "Verify a loop implementation against the reference, scenario by scenario",
		Long: `Conform runs every scenario of the suite against the reference loop and against an
implementation, and compares the two traces. The implementation is the built-in reference
(default), or a command speaking the conformance protocol (conformance/PROTOCOL.md) on its
stdin and stdout, e.g. pi's own loop through its adapter.

Each failure lists its findings, every one, each named by the rule it breaks:
  divergence   a region of entries missing, extra or of another kind than the reference's
               (the two traces are aligned, so the comparison goes on past the first), or
               a field that differs in a pair of matching entries (its path, both values;
               a list holding the reference's items in another order is one finding);
  invariant    a named invariant the implementation's trace breaks (package invariant);
  expectation  a line of the scenario's own expect: block the trace does not meet;
  error        the implementation timed out, crashed or broke the protocol.
Findings after the first divergence are marked: they may be its consequences. A finding
whose kind was already shown in full is only counted (the line names the scenario it was
shown under), so the output grows with the number of defects, not of scenarios
(--max-findings caps the display further; the JSON and JUnit reports always hold
everything).

The run ends with the causes: the findings grouped by signature across the suite (what
differs, where, in which shape; or the pi behaviour change the trace shows, when it equals
the reference's with that change turned the other way), ranked by the number of scenarios
they explain (a scenario's first finding is its explanation), each with its rule and an
example; then why scenarios were skipped (each reason once, with its count: a SKIP line
whose reason was given before names the scenario it was given under); then a profile by
rule family (the suite's folders) and by invariant; then the line "N passed, M failed, K
skipped". When an --impl took the exchange's shortcuts (deliveries ahead, standing answers:
PROTOCOL.md §14-15) and scenarios failed, one scenario of each of the first three causes is
re-run one at a time, and the report says whether the shortcuts are their cause. The exit
code is 0 exactly when no scenario failed. An implementation that cannot start is one error
and exit code 2.

Profiles: strict compares canonical traces byte for byte; semantic allows free texts such as
schema-validator messages to differ (conformance/PROTOCOL.md lists the rules).
The reference behaves as the pi release the implementation tracks (its hello's "tracks", any
pi from 0.87.0 on; docs/VERSIONS.md lists what changed when); --tracks X holds it to pi X
instead. Scenarios that install a hook the implementation does not declare, or whose
situation first exists in a later pi than it tracks (since), are skipped. --expect-fail FILE
lists known failures (one scenario name a line, # comments; a name not in the suite is an
error): they are counted as expected failures, apart from the failed and the skipped, and a
listed scenario that passes fails the run, so the list shrinks as the implementation
improves.`,
		Example: `  turnstile conform
  turnstile conform --impl "turnstile adapter"
  turnstile conform --impl "node conformance/adapters/pi/adapter.mjs" --junit pi.xml
  turnstile conform --impl "python3 my_adapter.py" --suite scenarios/queues --profile semantic --jobs 2
  turnstile conform --impl "./my-port" --expect-fail known.txt --format json > report.json
  turnstile conform --impl "./my-port" --report conform-report   # then open conform-report/index.html
  turnstile conform --impl "node conformance/adapters/pi/adapter.mjs --pi 1.3.0"
  turnstile conform --impl "./my-port" --tracks 1.6.0     # hold a port to a newer pi than it claims`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prof, err := trace.ParseProfile(profile)
			if err != nil {
				return usage(err)
			}
			if format != "text" && format != "json" {
				return usage(fmt.Errorf("--format must be text or json, not %q", format))
			}
			if maxFindings < 0 {
				return usage(fmt.Errorf("--max-findings must be 0 (no cap) or more, not %d", maxFindings))
			}
			files, err := load(suite, sel, budget)
			if err != nil {
				return err
			}
			if files, err = applyShard(files, shard); err != nil {
				return usage(err)
			}
			list := make([]*sim.Scenario, 0, len(files))
			names := make([]string, 0, len(files))
			for _, f := range files {
				list = append(list, f.Scenario)
				names = append(names, f.Scenario.Name)
			}
			if err := checkTracks(tracks); err != nil {
				return err
			}
			lvl, err := levels.Parse(level)
			if err != nil {
				return usage(err)
			}
			opts := conformance.Options{Profile: prof, Scenarios: diagnose.FromFiles(files), Tracks: tracks, Level: lvl}
			if ignoreList != "" {
				listed, err := readNameList(ignoreList)
				if err != nil {
					return usage(err)
				}
				opts.Ignore = map[string]bool{}
				for _, l := range listed {
					opts.Ignore[l] = true
				}
			}
			if expectFail != "" {
				listed, err := readNameList(expectFail)
				if err != nil {
					return usage(err)
				}
				if opts.ExpectFail, opts.ExpectFindings, err = conformance.ParseExpectFail(listed, names); err != nil {
					return usage(fmt.Errorf("--expect-fail %s: %w", expectFail, err))
				}
			}
			out := cmd.OutOrStdout()
			st := newStyler(out)
			progress := &conformance.Progress{Max: maxFindings, Status: st.status}
			if format == "text" {
				opts.OnResult = func(r conformance.Result) { fmt.Fprint(out, progress.Text(r)) }
			}
			newImpl, err := implementationAt(impl, proc, tracks)
			if err != nil {
				return usage(err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			report := conformance.VerifyParallel(ctx, list, newImpl, jobs, opts)
			if report.StartError != "" {
				return usage(fmt.Errorf("the implementation did not start: %s", report.StartError))
			}
			if impl != "" && ctx.Err() == nil {
				// Were the exchange's shortcuts the cause? A scenario per cause re-run without them says.
				plain := proc
				plain.oneAtATime = true
				if again, err := implementation(impl, plain); err == nil {
					p := again()
					conformance.RecheckWithoutShortcuts(ctx, &report, list, p, recheckScenarios, opts)
					closeImpl(p)
				}
			}
			if format == "json" {
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
			if junit != "" {
				if err := writeJUnitFile(junit, report); err != nil {
					return usage(err)
				}
			}
			if reportDir != "" {
				if err := writeConformReport(reportDir, report, files, newImpl); err != nil {
					return usage(err)
				}
			}
			if !report.OK() {
				return failed(fmt.Errorf("%d %s failed", report.Failed, plural(report.Failed, "scenario", "scenarios")))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&impl, "impl", "", `command of the implementation under test; "" is the built-in reference`)
	f.StringArrayVar(&suite, "suite", nil, "scenario file or directory (repeatable); default: the embedded curated suite")
	f.StringVar(&profile, "profile", "strict", "comparison profile: strict or semantic")
	f.StringVar(&junit, "junit", "", "write a JUnit XML report to this file (every finding, one testcase per scenario)")
	f.StringVar(&reportDir, "report", "", "write an HTML report into this directory: index.html and a page per failing scenario (an earlier report's pages there that no longer fail are removed)")
	f.StringVar(&format, "format", "text", "output: text (for people) or json (the whole report, for machines)")
	f.IntVar(&maxFindings, "max-findings", 0, "show at most N findings in full per scenario (0: all); reports keep all")
	f.StringVar(&shard, "shard", "", "run only shard K of N (K/N, from 1), e.g. 2/4")
	proc.register(f, conformance.DefaultTimeout, "scenario")
	f.IntVar(&jobs, "jobs", 1, "implementations to run at once")
	f.StringVar(&expectFail, "expect-fail", "", `file listing scenarios known to fail, one a line ("NAME", or "NAME: CAUSE" to expect only that finding)`)
	f.StringVar(&ignoreList, "ignore", "", "file listing findings to leave out (cause keys, signatures, or \"invariant NAME\"), one a line")
	sel.register(f)
	budget.register(f)
	f.StringVar(&tracks, "tracks", "", `pi version to hold the implementation to (default: its hello's "tracks")`)
	f.StringVar(&level, "level", "pi", "pi: every rule; core: the core of any agent loop, pi's conventions not judged (docs/SEMANTICS.md, Levels)")
	return cmd
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
func process(command string, proc processFlags) (func() *conformance.Process, error) {
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
	return func() *conformance.Process {
		return &conformance.Process{Command: argv, Timeout: proc.timeout, HelloTimeout: proc.helloTimeout, OneAtATime: proc.oneAtATime, Stderr: os.Stderr}
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
stdout, as any third-party adapter would. conform --impl "turnstile adapter" exercises the
whole protocol path with the reference; the traces must equal the in-process ones.`,
		Example: `  turnstile conform --impl "turnstile adapter"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := conformance.Serve(os.Stdin, os.Stdout); err != nil {
				return failed(err)
			}
			return nil
		},
	}
}
