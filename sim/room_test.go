package sim_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestRunInWritesWhatRunWrites runs the suite and generated scenarios, shuffled, through one
// room, interleaved with plain runs: each room trace is the plain run's, and a plain trace
// kept across later room runs is not written over.
func TestRunInWritesWhatRunWrites(t *testing.T) {
	list := suiteAndGenerated(t, 7, 300)
	for i, sc := range concurrencyScenarios()[:3] { // stopped by their budgets
		c := *sc
		c.Name += "-over-budget"
		c.Budget = []sim.Budget{{Entries: 9}, {Bytes: 3000}, {Requests: 1}}[i]
		list = append(list, &c)
	}
	rng := rand.New(rand.NewPCG(7, 9))
	rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	var room sim.Room
	type kept struct {
		name  string
		jsonl []byte
		tr    *trace.Trace
	}
	var plain []kept
	for i, sc := range list {
		want, wantErr := sim.Run(sc, sim.NewReference())
		wantLines := want.JSONL()
		if i%5 == 0 {
			plain = append(plain, kept{sc.Name, wantLines, want})
		}
		got, gotErr := sim.RunIn(&room, sc, sim.NewReference())
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%s: Run gave %v, RunIn %v", sc.Name, wantErr, gotErr)
		}
		if gotLines := got.JSONL(); !bytes.Equal(gotLines, wantLines) {
			t.Fatalf("%s: RunIn's trace differs from Run's:\n%s\nwant\n%s", sc.Name, gotLines, wantLines)
		}
	}
	for _, k := range plain {
		if !bytes.Equal(k.tr.JSONL(), k.jsonl) {
			t.Fatalf("%s: a plain run's trace changed after later runs in a room", k.name)
		}
	}
}

// TestRunInReusesItsRoom: the second run of a scenario in a room writes its entries and its
// links where the first did (counted allocations would not do: under -race sync.Pool drops
// what the encoders give back).
func TestRunInReusesItsRoom(t *testing.T) {
	sc := suiteAndGenerated(t, 3, 0)[0]
	var room sim.Room
	first, _ := sim.RunIn(&room, sc, sim.NewReference())
	linked := slices.IndexFunc(first.Entries, func(e trace.Entry) bool { return e.Link != nil })
	if linked < 0 {
		t.Fatal("the scenario's trace links no entry: the test needs one")
	}
	entryAt, linkAt := &first.Entries[0], first.Entries[linked].Link
	second, _ := sim.RunIn(&room, sc, sim.NewReference())
	if &second.Entries[0] != entryAt || second.Entries[linked].Link != linkAt {
		t.Fatal("the second run in the room did not write its entries and links in the first's")
	}
	if tr, _ := sim.RunIn(nil, sc, sim.NewReference()); !bytes.Equal(tr.JSONL(), second.JSONL()) {
		t.Fatal("RunIn without a room wrote another trace")
	}
}

// TestRunInTraceAppendsElsewhere: an entry appended to a room's trace, before the room's next
// run, is not in the room's spare entries, where the next trace would find it.
func TestRunInTraceAppendsElsewhere(t *testing.T) {
	list := suiteAndGenerated(t, 3, 0)
	long, short, next := list[0], list[1], list[2]
	for _, sc := range list {
		if len(sc.Responses) > len(long.Responses) {
			long = sc
		}
	}
	var room sim.Room
	_, _ = sim.RunIn(&room, long, sim.NewReference()) // the room grows past short's trace
	tr, _ := sim.RunIn(&room, short, sim.NewReference())
	tr.Entries = append(tr.Entries, trace.Entry{Kind: trace.KindFail, Name: "note", Target: "stale", Error: "stale"})
	got, _ := sim.RunIn(&room, next, sim.NewReference())
	want, _ := sim.Run(next, sim.NewReference())
	if !bytes.Equal(got.JSONL(), want.JSONL()) {
		t.Fatalf("an entry appended to the last trace showed in the next:\n%s", got.JSONL())
	}
}
