// Command turnstile runs agent-loop scenarios in a deterministic simulator, compares them
// with golden traces, and verifies other loop implementations against pi's behaviour.
//
// Exit codes: 0 success; 1 a check failed (a scenario's expectations, a golden, a
// conformance verdict, a validation); 2 a usage or input error (bad flags, unreadable or
// invalid scenario files, an implementation that cannot be started).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/internal/gctarget"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// Exit codes.
const (
	exitFailed = 1
	exitUsage  = 2
)

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// failed is a check failure (exit 1); usage is a usage or input error (exit 2).
func failed(err error) error { return &exitError{exitFailed, err} }
func usage(err error) error  { return &exitError{exitUsage, err} }

func main() {
	gctarget.Set()
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line and returns the exit code, printing an error once, plainly.
func execute(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:   "turnstile",
		Short: "Deterministic simulation and conformance testing for LLM agent loops",
		Long: "Deterministic simulation and conformance testing for LLM agent loops. " +
			"Details: docs/CLI.md#turnstile",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.CompletionOptions.HiddenDefaultCmd = true // still there; listed, it would push the help past a screen
	root.AddCommand(runCmd(), validateCmd(), schemaCmd(), testCmd(), diffCmd(), conformCmd(), adapterCmd(), exploreCmd(), mergeCmd(), auditCmd(), showCmd())
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "turnstile:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		// Cobra's own errors are flag and argument mistakes.
		return exitUsage
	}
	return 0
}

// version is turnstile's version (the module's, or the commit it was built from) and the pi
// release its reference reproduces.
func version() string { return versionOf(debug.ReadBuildInfo()) }

// versionOf is version from the build information: the module's version when built by
// `go install module@version`, else the commit of a checkout's build (when the go command
// stamped it: not in a git worktree, nor with -buildvcs=false), else "devel".
func versionOf(info *debug.BuildInfo, ok bool) string {
	v := "devel"
	if ok && info != nil {
		if info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		} else {
			var rev, modified string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					if s.Value == "true" {
						modified = ", modified"
					}
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" {
				v = "devel (commit " + rev + modified + ")"
			}
		}
	}
	return fmt.Sprintf("turnstile %s\nreference: pi %s (@earendil-works/pi-agent-core@%s), protocol %d",
		v, protocol.Tracks, protocol.Tracks, protocol.ProtocolVersion)
}

// processFlags are how an --impl command is driven: its time limit per scenario and for its
// hello, and whether every delivery waits for its idle even when the implementation takes
// deliveries ahead.
type processFlags struct {
	timeout, defaultTimeout time.Duration
	helloTimeout            time.Duration
	oneAtATime              bool
}

// args is the flags given, as a command line that repeats them needs them.
func (p *processFlags) args() string {
	var s string
	if p.timeout != p.defaultTimeout {
		s += " --timeout " + p.timeout.String()
	}
	if p.helloTimeout != protocol.DefaultHelloTimeout {
		s += " --hello-timeout " + p.helloTimeout.String()
	}
	if p.oneAtATime {
		s += " --one-at-a-time"
	}
	return s
}

// runBound is how long explore lets a run of the --impl command take before it calls it a
// hang: after the process's own timeouts (a run may start the process, so its hello's too),
// which are the better verdict (what it was waiting for, its last lines of stderr).
func (p processFlags) runBound() time.Duration { return 2*p.timeout + p.helloTimeout }

func (p *processFlags) register(f *pflag.FlagSet, timeout time.Duration, per string) {
	p.defaultTimeout = timeout
	f.DurationVar(&p.timeout, "timeout", timeout, "time limit per "+per+" for an --impl command")
	f.DurationVar(&p.helloTimeout, "hello-timeout", protocol.DefaultHelloTimeout, "time limit for an --impl command's hello after it starts")
	f.BoolVar(&p.oneAtATime, "one-at-a-time", false, "plain exchange with the --impl command: no deliveries ahead, no standing answers")
}

// budgetFlags are the --max-* flags; a flag given wins over the scenario file's budget.
type budgetFlags struct {
	requests, entries int
	time              time.Duration
	bytes             int64
}

func (b *budgetFlags) register(f *pflag.FlagSet) {
	d := sim.DefaultBudget
	f.IntVar(&b.requests, "max-requests", 0, fmt.Sprintf("budget: most provider requests per run (default %d or the scenario's)", d.Requests))
	f.DurationVar(&b.time, "max-time", 0, fmt.Sprintf("budget: latest virtual time per run (default %s or the scenario's)", time.Duration(d.Time)*time.Millisecond))
	f.IntVar(&b.entries, "max-entries", 0, fmt.Sprintf("budget: most trace entries per run (default %d or the scenario's)", d.Entries))
	f.Int64Var(&b.bytes, "max-bytes", 0, fmt.Sprintf("budget: most bytes of a run's trace expanded in full (default %d or the scenario's)", d.Bytes))
}

// check rejects negative budgets.
func (b *budgetFlags) check() error {
	if b.requests < 0 || b.entries < 0 || b.time < 0 || b.bytes < 0 {
		return errors.New("--max-requests, --max-time, --max-entries and --max-bytes must be positive")
	}
	if b.time > 0 && b.time < time.Millisecond {
		return errors.New("--max-time must be at least 1ms")
	}
	return nil
}

// apply sets the given budgets on a scenario.
func (b *budgetFlags) apply(sc *sim.Scenario) {
	if b.requests > 0 {
		sc.Budget.Requests = b.requests
	}
	if b.time > 0 {
		sc.Budget.Time = b.time.Milliseconds()
	}
	if b.entries > 0 {
		sc.Budget.Entries = b.entries
	}
	if b.bytes > 0 {
		sc.Budget.Bytes = b.bytes
	}
}

// asDefault makes the given budgets the default of every run (explore's generated
// scenarios have none of their own) and returns what restores the previous default.
func (b *budgetFlags) asDefault() (restore func()) {
	if *b == (budgetFlags{}) {
		return func() {}
	}
	prev := sim.DefaultBudget
	sc := sim.Scenario{Budget: prev}
	b.apply(&sc)
	sim.DefaultBudget = sc.Budget
	return func() { sim.DefaultBudget = prev }
}

// args are the budget flags given, as a command line would repeat them.
func (b *budgetFlags) args() string {
	var s string
	if b.requests > 0 {
		s += fmt.Sprintf(" --max-requests %d", b.requests)
	}
	if b.time > 0 {
		s += " --max-time " + b.time.String()
	}
	if b.entries > 0 {
		s += fmt.Sprintf(" --max-entries %d", b.entries)
	}
	if b.bytes > 0 {
		s += fmt.Sprintf(" --max-bytes %d", b.bytes)
	}
	return s
}

// selection is the --run REGEXP flag: scenarios whose name matches, as go test -run.
type selection struct{ pattern string }

func (s *selection) register(f *pflag.FlagSet) {
	f.StringVar(&s.pattern, "run", "", "only scenarios whose name matches this regular expression")
}

// load loads the scenarios at paths (or the embedded suite), keeps those --run selects and
// applies the budget flags; suite is every scenario's name, selected or not (what an --expect-fail
// list is checked against). An input error is a usage error; selecting nothing is too.
func load(paths []string, sel selection, budget budgetFlags) (kept []*scenarios.File, suite []string, err error) {
	if err := budget.check(); err != nil {
		return nil, nil, usage(err)
	}
	var re *regexp.Regexp
	if sel.pattern != "" {
		if re, err = regexp.Compile(sel.pattern); err != nil {
			return nil, nil, usage(fmt.Errorf("--run: %w", err))
		}
	}
	files, err := scenarios.Load(paths)
	if err != nil {
		return nil, nil, usage(err)
	}
	for _, f := range files {
		suite = append(suite, f.Scenario.Name)
		if re == nil || re.MatchString(f.Scenario.Name) {
			budget.apply(f.Scenario)
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		if re != nil {
			return nil, nil, usage(fmt.Errorf("--run %q matches no scenario", sel.pattern))
		}
		return nil, nil, usage(errors.New("no scenario files found"))
	}
	return kept, suite, nil
}
