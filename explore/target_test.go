package explore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// situationsOf lists the version-dependent situations a scenario makes.
func situationsOf(sc *sim.Scenario) map[string]bool {
	out := map[string]bool{}
	h := sc.Hooks
	out[sitPrepareNextTurn] = h.PrepareNextTurn != nil
	out[sitFinishTurn] = h.FinishTurn != nil
	out[sitPrepareRequest] = h.PrepareRequest != nil
	results := func(b sim.Behaviour) {
		out[sitIsErrorResult] = out[sitIsErrorResult] || b.Result.IsError
		out[sitStructured] = out[sitStructured] || b.Result.StructuredContent != nil
	}
	for _, t := range sc.Tools {
		out[sitPrepareArguments] = out[sitPrepareArguments] || t.PrepareArguments != nil
		results(t.Behaviour)
	}
	for _, b := range sc.ToolCalls {
		results(b)
	}
	for _, r := range sc.Responses {
		if r.StopReason == loop.StopLength && len(loop.ToolCalls(r.Content)) > 0 {
			out[sitLengthToolCalls] = true
		}
	}
	for _, m := range sc.Messages {
		if s, ok := m.(*loop.SystemMessage); ok && (len(s.ToolsAdded) > 0 || len(s.ToolsRemoved) > 0) {
			out[sitDeclarations] = true
		}
	}
	if len(callIDs(sc)) > 0 {
		out[sitAbortWithTools] = slices.ContainsFunc(sc.User, func(a sim.UserAction) bool { return a.Abort })
	}
	out[sitAgent] = sc.Agent != nil
	out[sitAgentIdentity] = sc.Agent != nil && sc.Identity != nil
	for _, t := range sc.Tools {
		out[sitResolvesNothing] = out[sitResolvesNothing] || t.Behaviour.Resolves != ""
	}
	for _, b := range sc.ToolCalls {
		out[sitResolvesNothing] = out[sitResolvesNothing] || b.Resolves != ""
	}
	return out
}

// TestGeneratorRespectsTheTrackedVersion: for an implementation tracking pi X, no generated
// scenario makes a situation whose since is later than X, while the unrestricted generator
// makes every situation (so the check can fail).
func TestGeneratorRespectsTheTrackedVersion(t *testing.T) {
	const n = 400
	seen := map[string]int{}
	for i := range n {
		for s, ok := range situationsOf(GenerateScenario(RunSeed(5, i))) {
			if ok {
				seen[s]++
			}
		}
	}
	for _, s := range versionedSituations {
		if seen[s.Name] == 0 {
			t.Errorf("the unrestricted generator never makes %q in %d scenarios", s.Name, n)
		}
	}
	for _, tracks := range []string{"0.74", "0.80", "0.84", "0.87.1", "0.99.1", "1.3.0", "1.5.2", "1.6.0"} {
		target := Target{Tracks: tracks}
		gen := generatorFor(target)
		for i := range n {
			sc := gen(RunSeed(5, i))
			for s, ok := range situationsOf(sc) {
				if ok && !target.Has(s) {
					t.Fatalf("tracks %s: seed %d makes %q", tracks, RunSeed(5, i), s)
				}
			}
		}
	}
	if (Target{Tracks: "0.87.1"}).Has(sitIsErrorResult) || !(Target{Tracks: "0.87.1"}).Has(sitFinishTurn) || !(Target{}).Has(sitAbortWithTools) || !(Target{Tracks: "0.87.1"}).Has(sitAbortWithTools) {
		t.Error("Has disagrees with the version table")
	}
}

// TestGeneratorRespectsDeclaredHooks: an implementation declaring only some hooks gets
// scenarios installing no other; without the queue hooks, steering and follow-up are off and
// the simulated user neither steers nor follows up. Every scenario stays valid.
func TestGeneratorRespectsDeclaredHooks(t *testing.T) {
	queues := []string{trace.HookSteering, trace.HookFollowUp}
	for _, hooks := range [][]string{queues, {}, {trace.HookFinishTurn, trace.HookSteering}, {trace.HookBeforeToolCall}} {
		gen := generatorFor(Target{Hooks: hooks})
		users := 0
		for i := range 60 {
			sc := gen(RunSeed(8, i))
			for _, h := range sc.Hooks.Installed() {
				// An Agent owns its queues: it calls no queue hook through the protocol.
				agentQueue := sc.Agent != nil && (h == trace.HookSteering || h == trace.HookFollowUp)
				if !slices.Contains(hooks, h) && !agentQueue {
					t.Fatalf("hooks %v: seed %d installs %s", hooks, RunSeed(8, i), h)
				}
			}
			for _, a := range sc.User {
				users++
				if len(a.Steer) > 0 && sc.Hooks.NoSteering || len(a.FollowUp) > 0 && sc.Hooks.NoFollowUp {
					t.Fatalf("hooks %v: seed %d queues a message for a queue that is off", hooks, RunSeed(8, i))
				}
			}
			data, err := scenarios.Write(sc)
			if err == nil {
				_, err = scenarios.Parse("gen.yaml", "gen", data)
			}
			if err != nil {
				t.Fatalf("hooks %v: seed %d: %v", hooks, RunSeed(8, i), err)
			}
		}
		if users == 0 {
			t.Errorf("hooks %v: no user action in 60 scenarios", hooks)
		}
	}
}

// introducing is the reference introducing itself with a hello that declares some hooks and
// tracks a version, and recording the hooks each scenario installs.
type introducing struct {
	*sim.Reference
	hello     protocol.Hello
	installed map[string]bool
}

func (r *introducing) Hello() (protocol.Hello, error) { return r.hello, nil }

func (r *introducing) Start(setup sim.Setup, port sim.Port) error {
	for _, h := range setup.Hooks {
		r.installed[h] = true
	}
	return r.Reference.Start(setup, port)
}

// TestHelloSetsTheTarget: explore takes the hooks, the tracked version and the lacked
// features from the implementation's hello; a fault-free implementation declaring only the two queue hooks
// fails nothing, and is never given another hook.
func TestHelloSetsTheTarget(t *testing.T) {
	installed := map[string]bool{}
	hello := protocol.Hello{Name: "queues-only", Tracks: "0.99.1", Hooks: []string{trace.HookSteering, trace.HookFollowUp},
		Lacks: []string{sim.FeatureContinue}}
	res := Run(context.Background(), Options{
		Seed: 21, Runs: 150,
		Impl: func() sim.Implementation {
			return &introducing{Reference: sim.NewReference(), hello: hello, installed: installed}
		},
	})
	if res.Err != nil || len(res.Failures) > 0 {
		t.Fatalf("%v: %s", res.Err, Summary(res))
	}
	// A hello of protocol 1 lacks the features of version 2 as well.
	if res.Implementation != "queues-only" || res.Target.Tracks != "0.99.1" || !slices.Equal(res.Target.Hooks, hello.Hooks) ||
		!slices.Equal(res.Target.Lacks, hello.Lacking()) || !slices.Contains(res.Target.Lacks, sim.FeatureAgent) {
		t.Errorf("explored %q for %+v", res.Implementation, res.Target)
	}
	if len(installed) != 2 || !installed[trace.HookSteering] || !installed[trace.HookFollowUp] {
		t.Errorf("installed %v", installed)
	}
}

// TestTheSemanticProfile: the semantic profile compares numbers by value, a validation
// message up to its first line, everything else strictly.
func TestTheSemanticProfile(t *testing.T) {
	base := trace.Entry{Seq: 4, T: 10, Kind: trace.KindEvent, Name: "tool_execution_end",
		Data: []byte(`{"result":{"content":[{"type":"text","text":"Validation failed for tool \"read\":\n  - path: must be string"}]},"n":1}`)}
	variants := map[string]trace.Entry{}
	with := func(name, data string) {
		e := base
		e.Data = []byte(data)
		variants[name] = e
	}
	with("validator words", `{"result":{"content":[{"type":"text","text":"Validation failed for tool \"read\":\n  - path: expected string"}]},"n":1}`)
	with("tool name", `{"result":{"content":[{"type":"text","text":"Validation failed for tool \"grep\":\n  - path: must be string"}]},"n":1}`)
	with("number form", `{"result":{"content":[{"type":"text","text":"Validation failed for tool \"read\":\n  - path: must be string"}]},"n":1.0}`)
	with("number value", `{"result":{"content":[{"type":"text","text":"Validation failed for tool \"read\":\n  - path: must be string"}]},"n":2}`)
	with("other text", `{"result":{"content":[{"type":"text","text":"Validation failed for tool \"read\":\n  - path: must be string"}]},"n":1,"x":"y"}`)
	late := base
	late.T = 11
	variants["time"] = late
	for name, e := range variants {
		ours := trace.Compare(&trace.Trace{Entries: []trace.Entry{base}}, &trace.Trace{Entries: []trace.Entry{e}}, trace.Semantic).Equal()
		if alike := name == "validator words" || name == "number form"; ours != alike {
			t.Errorf("%s: equal=%v under the semantic profile, want %v", name, ours, alike)
		}
	}
}

// TestGeneratorRespectsLackedFeatures: an implementation lacking optional features gets no
// scenario that needs one (sim.NeededFeatures), while the unrestricted generator needs each
// of them somewhere (so the check can fail).
func TestGeneratorRespectsLackedFeatures(t *testing.T) {
	const n = 400
	needed := map[string]bool{}
	for i := range n {
		for _, f := range sim.NeededFeatures(GenerateScenario(RunSeed(6, i))) {
			needed[f] = true
		}
	}
	for _, f := range sim.Features {
		// Not generated: runToolCall runs one call outside any loop (explore searches loops);
		// defaultModel changes only the model every request names.
		if !needed[f] && f != sim.FeatureRunToolCall && f != sim.FeatureDefaultModel {
			t.Errorf("the unrestricted generator never needs %s in %d scenarios", f, n)
		}
	}
	for _, lacks := range [][]string{sim.Features, {sim.FeatureContinue, sim.FeatureThrowingHooks}, {sim.FeatureSeveralPrompts}} {
		gen := generatorFor(Target{Lacks: lacks})
		for i := range n {
			sc := gen(RunSeed(6, i))
			for _, f := range sim.NeededFeatures(sc) {
				if slices.Contains(lacks, f) {
					t.Fatalf("lacking %v: seed %d needs %s", lacks, RunSeed(6, i), f)
				}
			}
		}
	}
}

// shortcutting is a faulty implementation that introduces itself and tells the exchange's
// shortcuts the harness takes with it, as a protocol.Process does.
type shortcutting struct {
	*faulty
	took protocol.Shortcuts
}

func (r *shortcutting) Hello() (protocol.Hello, error) {
	return protocol.Hello{Name: "port", Tracks: protocol.Tracks, Hooks: protocol.AllHooks}, nil
}

func (r *shortcutting) Shortcuts() (protocol.Shortcuts, error) { return r.took, nil }

// TestShortcutsAreNamedWithTheirCure: when the harness took the exchange's shortcuts with an
// implementation that fails, the summary and each cause's README say how to rule them out;
// the README's replay command repeats the flags of the --impl command and adds
// --one-at-a-time. Without shortcuts neither says a word of them.
func TestShortcutsAreNamedWithTheirCure(t *testing.T) {
	for _, took := range []protocol.Shortcuts{{DeliveriesAhead: true, StandingAnswers: true}, {}} {
		out := t.TempDir()
		fault := faultNamed(t, "drops-a-tool-result")
		res := Run(context.Background(), Options{
			Impl: func() sim.Implementation { return &shortcutting{faulty: &faulty{fault: fault}, took: took} },
			Seed: 5, Runs: 40, Out: out, ShrinkTime: -1, ImplCommand: "node a.mjs", ImplFlags: " --timeout 30s",
			Command: "turnstile explore --impl 'node a.mjs'",
		})
		if len(res.Failures) == 0 {
			t.Fatalf("no failure: %s", Summary(res))
		}
		summary := Summary(res)
		readme, err := os.ReadFile(filepath.Join(res.Failures[0].Dir, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		replay := fmt.Sprintf(`turnstile conform --impl "node a.mjs" --timeout 30s --suite %s`, filepath.Join(res.Failures[0].Dir, "minimal.yaml"))
		if !strings.Contains(string(readme), "Reproduce the minimal scenario: `"+replay+"`") {
			t.Errorf("the README's replay is not %s:\n%s", replay, readme)
		}
		summaryNote := "if the failures go away with turnstile explore --impl 'node a.mjs' --one-at-a-time, they are the cause"
		readmeNote := "if the failures go away with " + replay + " --one-at-a-time, they are the cause"
		if took == (protocol.Shortcuts{}) {
			if strings.Contains(summary, "one-at-a-time") || strings.Contains(string(readme), "one-at-a-time") {
				t.Errorf("no shortcut was taken, yet:\n%s\n%s", summary, readme)
			}
			continue
		}
		if !strings.Contains(summary, summaryNote) || !strings.Contains(summary, "§14") || !strings.Contains(summary, "§15") {
			t.Errorf("the summary does not name the shortcuts:\n%s", summary)
		}
		if !strings.Contains(string(readme), readmeNote) {
			t.Errorf("the README does not name the shortcuts:\n%s", readme)
		}
	}
}

// TestDiagnosisNamesOnlyRulesOfTheTrackedPi: explore's diagnosis holds an implementation to the
// pi it tracks, as conform's does: durationMs missing is R-TIME-DURATION's (since pi 1.3.0) for
// a port of 1.6.0, never for one of 1.0.3.
func TestDiagnosisNamesOnlyRulesOfTheTrackedPi(t *testing.T) {
	files, err := scenarios.Load([]string{"events/tool-turn"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sim.Run(files[0].Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	want := tr.Expanded()
	got := &trace.Trace{Entries: slices.Clone(want.Entries)}
	for i, e := range got.Entries {
		if trace.Key(e) == "event tool_execution_end" {
			got.Entries[i].Data = []byte(strings.Replace(string(e.Data), `"durationMs":`, `"durationMsX":`, 1))
		}
	}
	for _, tracks := range []string{"", "1.0.3"} {
		named := false
		for _, f := range newDiagnosis(trace.Strict, nil, levels.Pi, nil, tracks)(want, got) {
			named = named || f.RuleID == "R-TIME-DURATION"
		}
		if named != (tracks == "") {
			t.Errorf("tracking %q: R-TIME-DURATION named %v", tracks, named)
		}
	}
}
