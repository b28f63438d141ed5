package invariant

import (
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestSnapshotsRestoreAnUpdateThatRepeatsAnotherDelivery: a recorded message_update linked to
// the delivery it answers is taken as that delivery's partial and event without restoring it
// (repeatsDelivery, met in the suite's traces); linked to another delivery (an earlier
// text_delta's), it is restored and compared, and snapshots reports it.
func TestSnapshotsRestoreAnUpdateThatRepeatsAnotherDelivery(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	shortcuts, tampered := 0, 0
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			continue
		}
		v := newView(tr)
		for i, e := range tr.Entries {
			if e.Name != "message_update" || e.Link == nil || e.Link.Repeats == 0 {
				continue
			}
			dl := tr.Entries[e.Link.Repeats-1]
			if !v.repeatsDelivery(i, e.Link.Repeats-1) {
				continue
			}
			shortcuts++
			typ := v.eventType(e.Link.Repeats - 1)
			if tampered > 0 || typ != "text_delta" || dl.Link == nil {
				continue
			}
			prev := dl.Link.Advances // the partial before this delta's, which it changes
			es := slices.Clone(tr.Entries)
			es[i].Link = &trace.Link{Repeats: prev}
			bad := &trace.Trace{Scenario: tr.Scenario, Entries: es}
			snapshots, _ := ByName("snapshots")
			vs := snapshots.Check(bad)
			if !slices.ContainsFunc(vs, func(x Violation) bool { return x.Entry == e.Seq && strings.Contains(x.Msg, "another message") }) {
				t.Errorf("%s: message_update %d made to repeat delivery %d instead of %d: snapshots reports %v", f.Rel, e.Seq, prev, dl.Seq, vs)
			}
			tampered++
		}
	}
	if shortcuts == 0 || tampered == 0 {
		t.Fatalf("%d message_updates taken as their delivery's, %d tampered with: the suite should have both", shortcuts, tampered)
	}
}

// TestSnapshotsCompareAFinalMessageThatDiffers: a recorded message_end carrying the done
// event's message plus the thinkingLevel is found so on the bytes (carriesFinal, met in the
// suite's traces); one whose message differs by a letter is decoded, compared and reported.
func TestSnapshotsCompareAFinalMessageThatDiffers(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	snapshots, _ := ByName("snapshots")
	onBytes, tampered := 0, 0
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			continue
		}
		v := newView(tr)
		v.at = snapshots.at
		for _, turn := range v.turns {
			if turn.stream < 0 || tr.Entries[turn.stream].Error != "" || turn.asstEnd < 0 {
				continue
			}
			want, _ := v.expectedEvents(turn.stream, max(turn.end, turn.windowEnd))
			for _, w := range want {
				if w.final == "" || w.name != "message_end" || !v.carriesFinal(turn.asstEnd, w) {
					continue
				}
				onBytes++
				e := tr.Entries[turn.asstEnd]
				at := strings.Index(string(e.Data), `"stopReason":"`)
				if tampered > 0 || at < 0 {
					continue
				}
				es := slices.Clone(tr.Entries)
				data := []byte(strings.Replace(string(e.Data), `"stopReason":"`, `"stopReason":"x`, 1))
				es[turn.asstEnd].Data = data
				vs := snapshots.Check(&trace.Trace{Scenario: tr.Scenario, Entries: es})
				if !slices.ContainsFunc(vs, func(x Violation) bool { return x.Entry == e.Seq && strings.Contains(x.Msg, "another message") }) {
					t.Errorf("%s: message_end %d with another stopReason: snapshots reports %v", f.Rel, e.Seq, vs)
				}
				tampered++
			}
		}
	}
	if onBytes == 0 || tampered == 0 {
		t.Fatalf("%d final messages found on the bytes, %d tampered with: the suite should have both", onBytes, tampered)
	}
}
