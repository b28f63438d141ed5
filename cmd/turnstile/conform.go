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
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

func conformCmd() *cobra.Command {
	var (
		impl, profile, junit, shard, expectFail, tracks string
		suite                                           []string
		timeout                                         time.Duration
		jobs                                            int
	)
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "Verify a loop implementation against the reference, scenario by scenario",
		Long: `Conform runs every scenario of the suite against the reference loop and against an
implementation, and compares the two traces. The implementation is the built-in reference
(default), or a command speaking the conformance protocol (conformance/PROTOCOL.md) on its
stdin and stdout, e.g. pi's own loop through its adapter.

Each failure shows the first divergence: the entry, the expected and actual timeline lines
and the lines before them. The output ends with the line "N passed, M failed"; the exit
code is 0 exactly when M is 0.

Profiles: strict compares canonical traces byte for byte; semantic allows free texts such as
schema-validator messages to differ (conformance/PROTOCOL.md lists the rules).
The reference behaves as the pi release the implementation tracks (its hello's "tracks", any
pi from 0.87.1 on; docs/VERSIONS.md lists what changed when); --tracks X holds it to pi X
instead. Scenarios that install a hook the implementation does not declare, or whose
situation first exists in a later pi than it tracks (since), are skipped. --expect-fail FILE lists known failures (one
scenario name a line, # comments): they are reported as expected, and a listed scenario that
passes fails the run, so the list shrinks as the implementation improves.`,
		Example: `  turnstile conform
  turnstile conform --impl "turnstile adapter"
  turnstile conform --impl "node conformance/adapters/pi/adapter.mjs" --junit pi.xml
  turnstile conform --impl "node conformance/adapters/pi/adapter.mjs --pi 1.3.0"
  turnstile conform --impl "./my-port" --tracks 1.6.0     # hold a port to a newer pi than it claims
  turnstile conform --impl "python3 my_adapter.py" --suite scenarios/queues --profile semantic --jobs 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prof, err := conformance.ParseProfile(profile)
			if err != nil {
				return usage(err)
			}
			files, err := scenarios.Load(suite)
			if err != nil {
				return usage(err)
			}
			list := make([]*sim.Scenario, 0, len(files))
			for _, f := range files {
				list = append(list, f.Scenario)
			}
			if list, err = applyShard(list, shard); err != nil {
				return usage(err)
			}
			if tracks != "" {
				if _, err := loop.BehaviourOf(tracks); err != nil {
					return usage(fmt.Errorf("--tracks: %w", err))
				}
			}
			opts := conformance.Options{Profile: prof, Tracks: tracks}
			if expectFail != "" {
				if opts.ExpectFail, err = readNameList(expectFail); err != nil {
					return usage(err)
				}
			}
			out := cmd.OutOrStdout()
			st := newStyler(out)
			opts.OnResult = func(r conformance.Result) {
				switch r.Status {
				case conformance.Pass:
					fmt.Fprintf(out, "%s  %s\n", st.green("PASS"), r.Scenario)
				case conformance.Skip:
					fmt.Fprintf(out, "SKIP  %s: %s\n", r.Scenario, r.Reason)
				case conformance.Fail:
					fmt.Fprintf(out, "%s  %s: %s\n", st.red("FAIL"), r.Scenario, r.Reason)
					if r.Divergence != nil {
						fmt.Fprint(out, r.Divergence.Text("      "))
					}
					fmt.Fprint(out, r.ViolationsText("      "))
				}
			}
			newImpl, err := implementationAt(impl, timeout, tracks)
			if err != nil {
				return usage(err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			report := conformance.VerifyParallel(ctx, list, newImpl, jobs, opts)
			fmt.Fprintf(out, "conformance of %s, profile %s, %d scenarios in %s\n", report.Implementation, report.Profile,
				len(report.Results), report.Duration.Round(time.Millisecond))
			fmt.Fprintln(out, report.Summary())
			if junit != "" {
				f, err := os.Create(junit)
				if err != nil {
					return usage(err)
				}
				if err := conformance.WriteJUnit(f, report); err != nil {
					f.Close()
					return usage(err)
				}
				if err := f.Close(); err != nil {
					return usage(err)
				}
			}
			if !report.OK() {
				return failed(fmt.Errorf("%d scenarios failed", report.Failed))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&impl, "impl", "", `command of the implementation under test; "" is the built-in reference`)
	f.StringArrayVar(&suite, "suite", nil, "scenario file or directory (repeatable); default: the embedded curated suite")
	f.StringVar(&profile, "profile", "strict", "comparison profile: strict or semantic")
	f.StringVar(&junit, "junit", "", "write a JUnit XML report to this file")
	f.StringVar(&shard, "shard", "", "run only shard K of N (K/N, from 1), e.g. 2/4")
	f.DurationVar(&timeout, "timeout", conformance.DefaultTimeout, "time limit per scenario for an --impl command")
	f.IntVar(&jobs, "jobs", 1, "implementations to run at once")
	f.StringVar(&expectFail, "expect-fail", "", "file listing scenarios known to fail")
	f.StringVar(&tracks, "tracks", "", `pi version to hold the implementation to (default: its hello's "tracks")`)
	return cmd
}

// implementation makes the implementation under test: the reference in-process, or a
// command. A command starting with "turnstile" runs this very binary, so that
// --impl "turnstile adapter" works without turnstile on the PATH.
func implementation(command string, timeout time.Duration) (func() sim.Implementation, error) {
	if strings.TrimSpace(command) == "" {
		return func() sim.Implementation { return sim.NewReference() }, nil
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
	return func() sim.Implementation {
		return &conformance.Process{Command: argv, Timeout: timeout, Stderr: os.Stderr}
	}, nil
}

// implementationAt is implementation with the built-in reference behaving as pi version
// tracks ("" for the newest).
func implementationAt(command string, timeout time.Duration, tracks string) (func() sim.Implementation, error) {
	if strings.TrimSpace(command) == "" {
		b, err := loop.BehaviourOf(tracks)
		if err != nil {
			return nil, err
		}
		return func() sim.Implementation { return sim.NewReferenceWith(b) }, nil
	}
	return implementation(command, timeout)
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
func readNameList(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			names[line] = true
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
