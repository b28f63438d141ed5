package explore

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestAgentSessionsAreValidFiles: every generated Agent session is a scenario file the loader
// takes, and reads back as the same file.
func TestAgentSessionsAreValidFiles(t *testing.T) {
	gen, err := generatorOf(Target{}, EntryAgent)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		sc := gen(RunSeed(11, i))
		data, err := scenarios.Write(sc)
		if err != nil {
			t.Fatalf("seed %d: %v", RunSeed(11, i), err)
		}
		back, err := parseScenario(data)
		if err != nil {
			t.Fatalf("seed %d: the loader rejects the written session: %v\n%s", RunSeed(11, i), err, data)
		}
		again, _ := scenarios.Write(back)
		if !bytes.Equal(data, again) {
			t.Fatalf("seed %d: the session does not read back as written:\n%s\n---\n%s", RunSeed(11, i), data, again)
		}
	}
}

// TestAgentSessionInvariants: every invariant holds for the reference Agent on generated
// sessions.
func TestAgentSessionInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := agentSessions().Draw(t, "session")
		tr, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if fl := invariant.CheckAll(tr); len(fl) > 0 {
			data, _ := scenarios.Write(sc)
			t.Fatalf("%v\nscenario:\n%s\ntimeline:\n%s", fl, data, tr.Timeline())
		}
	})
}
