package invariant

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestDecodeJSON: the fast decoder gives what encoding/json gives.
func TestDecodeJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":-1.5e3,"g":"\u00e9\n\"x\"","h":"é","i":[],"j":{}}`,
		`[]`, `"s"`, `0`, ` {"a" : [ 1 , 2 ] } `, `{"dup":1,"dup":2}`,
		`{"bad":`, `[1,]`, `tru`, `{"a":1}x`,
	} {
		var want any
		_ = json.Unmarshal([]byte(in), &want)
		if got := decodeJSON([]byte(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", in, got, want)
		}
	}
}

// TestDecodeMemoChangesNothing: decoding every entry of the curated suite's traces through
// one memo per trace, as a view does, gives what decoding each alone gives, and the memo is
// used (jsonvalue's tests hold the memo to plain decoding on odd documents).
func TestDecodeMemoChangesNothing(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	remembered := 0
	for _, f := range files {
		tr, err := sim.Run(f.Scenario, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		memo := traceMemo()
		for _, e := range tr.Expanded().Entries {
			for _, data := range [][]byte{e.Data, e.Answer} {
				if len(data) == 0 {
					continue
				}
				if got, want := decodeJSONWith(data, &memo), decodeJSON(data); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: entry %d decodes otherwise through the memo:\n%s", f.Rel, e.Seq, data)
				}
			}
		}
		remembered += memo.Len()
	}
	if remembered == 0 {
		t.Fatal("the memo remembered nothing: the test checks nothing")
	}
}

// TestDeclaredNamesIsCurrentTools: the by-name replay agrees with loop.CurrentTools on the
// requests of the curated suite.
func TestDeclaredNamesIsCurrentTools(t *testing.T) {
	files, _ := scenarios.Suite()
	checked := 0
	for _, f := range files {
		tr, _ := sim.Run(f.Scenario, sim.NewReference())
		for _, e := range tr.Entries {
			if e.Kind != trace.KindCall || e.Name != trace.CallStream {
				continue
			}
			var req struct {
				Messages json.RawMessage `json:"messages"`
			}
			_ = json.Unmarshal(e.Data, &req)
			msgs, err := loop.DecodeMessages(req.Messages)
			if err != nil {
				t.Fatal(err)
			}
			want := names{}
			for _, d := range loop.CurrentTools(msgs) {
				want[d.Name] = true
			}
			got := declaredNames(arr(obj(decodeJSON(e.Data))["messages"]))
			if !got.equal(want) {
				t.Errorf("%s: %v, loop.CurrentTools %v", f.Rel, got, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no requests")
	}
}
