package trace_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestExpandValuesIsTheFullTraceDecoded: restoring every link of a linear trace on decoded
// values gives, entry by entry, the values the full trace's data and answer decode to, and
// leaves the values it was given as they were.
func TestExpandValuesIsTheFullTraceDecoded(t *testing.T) {
	decode := func(b []byte) any {
		if len(b) == 0 {
			return nil
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	linked := 0
	for _, sc := range linearCorpus(t) {
		linear, _ := sim.Run(sc, sim.NewReference())
		full, _ := sim.RunFull(sc, sim.NewReference())
		if len(linear.Entries) != len(full.Entries) {
			t.Fatalf("%s: %d entries linear, %d in full", sc.Name, len(linear.Entries), len(full.Entries))
		}
		data := make([]any, len(linear.Entries))
		answer := make([]any, len(linear.Entries))
		own := make([]any, len(linear.Entries))
		earlier := func(i int) func(int) (any, any, bool) {
			return func(seq int) (any, any, bool) {
				for j := range i {
					if linear.Entries[j].Seq == seq {
						return data[j], answer[j], true
					}
				}
				return nil, nil, false
			}
		}
		for i := range linear.Entries {
			e := &linear.Entries[i]
			own[i] = decode(e.Data)
			var err error
			data[i], answer[i], err = trace.ExpandValues(e, own[i], decode(e.Answer), earlier(i))
			if err != nil {
				t.Fatalf("%s: entry %d: %v", sc.Name, e.Seq, err)
			}
			if e.Link != nil {
				linked++
			}
			if want := decode(full.Entries[i].Data); !reflect.DeepEqual(data[i], want) {
				t.Fatalf("%s: entry %d: data restored\n%s\nin full\n%s", sc.Name, e.Seq, show(data[i]), show(want))
			}
			if want := decode(full.Entries[i].Answer); !reflect.DeepEqual(answer[i], want) {
				t.Fatalf("%s: entry %d: answer restored\n%s\nin full\n%s", sc.Name, e.Seq, show(answer[i]), show(want))
			}
		}
		for i := range linear.Entries {
			if !reflect.DeepEqual(own[i], decode(linear.Entries[i].Data)) {
				t.Fatalf("%s: entry %d: its own data was changed", sc.Name, linear.Entries[i].Seq)
			}
			if !reflect.DeepEqual(data[i], decode(full.Entries[i].Data)) {
				t.Fatalf("%s: entry %d: its data in full was changed by a later entry's", sc.Name, linear.Entries[i].Seq)
			}
		}
	}
	if linked == 0 {
		t.Fatal("no entry was linked")
	}
}

func show(v any) string { b, _ := json.Marshal(v); return string(b) }
