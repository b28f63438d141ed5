package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// wireLines runs part of the curated suite against an implementation and returns every line it
// wrote, keyed by its message type, call kind and name (at most perKey lines each, the
// longest kept last).
func wireLines(t *testing.T, p *protocol.Process, perKey int) [][]byte {
	t.Helper()
	var log bytes.Buffer
	p.Log = &log
	// Three scenarios of each group of the suite give every kind of line.
	var suite []*sim.Scenario
	groups := map[string]int{}
	for _, sc := range curatedSuite(t) {
		group, _, _ := strings.Cut(sc.Name, "/")
		if groups[group]++; groups[group] <= 3 {
			suite = append(suite, sc)
		}
	}
	conformance.Verify(context.Background(), suite, p, conformance.Options{})
	_ = p.Close()
	byKey := map[string][][]byte{}
	var keys []string
	for _, line := range bytes.Split(log.Bytes(), []byte("\n")) {
		raw, ok := bytes.CutPrefix(line, []byte("< "))
		if !ok {
			continue
		}
		var head struct {
			Type         string
			Call         struct{ Kind, Name string }
			Notification struct {
				Kind string
				Data struct{ Type string }
			}
		}
		_ = json.Unmarshal(raw, &head)
		key := strings.Join([]string{head.Type, head.Call.Kind, head.Call.Name, head.Notification.Kind, head.Notification.Data.Type}, "/")
		if _, seen := byKey[key]; !seen {
			keys = append(keys, key)
		}
		if len(byKey[key]) < perKey {
			byKey[key] = append(byKey[key], bytes.Clone(raw))
		}
	}
	var out [][]byte
	for _, k := range keys {
		out = append(out, byKey[k]...)
	}
	return out
}

func decodeWire(t *testing.T, line []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return v
}

// replacements are the values a mutant puts in place of one value of a real line: every JSON
// type, numbers spelled the ways the schema reads alike, and the words the schema names.
var replacements = func() []any {
	out := []any{nil, true, false, "", "x", []any{}, map[string]any{}, []any{"x"}, []any{map[string]any{}},
		json.Number("0"), json.Number("1"), json.Number("1.0"), json.Number("-1"), json.Number("1e0"), json.Number("0.5"),
		"assistant", "toolResult", "toolCall", "user", "stream", "tool", "hook", "event", "end",
		"agent_end", "turn_end", "message_update", "tool_execution_start", "tool_execution_update", "tool_execution_end",
		map[string]any{"role": "user"}, map[string]any{"type": "x"}, map[string]any{"content": nil}}
	for _, h := range protocol.AllHooks {
		out = append(out, h)
	}
	for _, f := range sim.Features {
		out = append(out, f)
	}
	return out
}()

// mutants calls f with every single change of v: each value replaced by each replacement, each
// object member removed; f gets a fresh copy each time.
func mutants(decode func() any, f func(any)) {
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		paths = append(paths, path)
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(c, append(append([]any(nil), path...), k))
			}
		case []any:
			for i, c := range x {
				if i < 2 {
					walk(c, append(append([]any(nil), path...), i))
				}
			}
		}
	}
	walk(decode(), nil)
	for _, p := range paths {
		if len(p) == 0 {
			continue
		}
		for _, r := range append(replacements, removeMember) {
			root := decode()
			parent := root
			for _, step := range p[:len(p)-1] {
				switch s := step.(type) {
				case string:
					parent = parent.(map[string]any)[s]
				case int:
					parent = parent.([]any)[s]
				}
			}
			switch s := p[len(p)-1].(type) {
			case string:
				if r == removeMember {
					delete(parent.(map[string]any), s)
				} else {
					parent.(map[string]any)[s] = r
				}
			case int:
				if r == removeMember {
					continue
				}
				parent.([]any)[s] = r
			}
			f(root)
		}
	}
}

// removeMember stands for deleting the member instead of replacing it.
var removeMember any = struct{ remove bool }{true}

// TestConformsNeverAcceptsWhatTheSchemaRejects holds the plain protocol check to the schema:
// it accepts every line the reference adapter and pi's adapter write in the curated suite
// (so the schema is not run on them), and none of thousands of mutants of those lines that
// the schema rejects. ParseMessage's verdicts therefore stay the schema's.
func TestConformsNeverAcceptsWhatTheSchemaRejects(t *testing.T) {
	t.Parallel() // whole-suite runs, each on one core: two at a time
	impls := map[string]*protocol.Process{"reference adapter": selfadapter.Process(t, "serve")}
	adapter := filepath.Join("..", "adapters", "pi", "adapter.mjs")
	if _, err := os.Stat(filepath.Join("..", "adapters", "pi", "node_modules")); err == nil {
		impls["pi adapter"] = &protocol.Process{Command: []string{"node", adapter}}
	} else {
		t.Log("pi's adapter is not installed (npm ci --prefix conformance/adapters/pi); its lines are not checked")
	}
	// Lines no adapter here writes: a hello that lacks features.
	extra := [][]byte{[]byte(`{"type":"hello","protocol":1,"name":"x","version":"1","tracks":"1.6.0","capabilities":{"hooks":["finishTurn"],"lacks":["continue","argumentsError"]}}`)}
	seen := map[string]bool{}
	var memo protocol.WireMemo
	for name, p := range impls {
		lines := append(wireLines(t, p, 1), extra...)
		if len(lines) < 20 {
			t.Fatalf("%s: only %d kinds of line", name, len(lines))
		}
		checked, rejected := 0, 0
		for _, line := range lines {
			if seen[string(line)] {
				continue // the same line from another adapter
			}
			seen[string(line)] = true
			checkWireDecoding(t, line, true, &memo)
			if !protocol.Conforms(decodeWire(t, line)) {
				t.Errorf("%s: the plain check rejects a line the suite accepts (it would cost the schema): %s", name, line)
				continue
			}
			v := decodeWire(t, line)
			mutants(func() any { return deepCopy(v) }, func(m any) {
				checked++
				// Every 32nd mutant (some 2,000) is also decoded both ways: the one-pass
				// decoding is held to encoding/json on lines no adapter writes.
				if mb, err := json.Marshal(m); err == nil && checked%32 == 0 {
					checkWireDecoding(t, mb, false, &memo)
				}
				fast := protocol.Conforms(m)
				if !fast {
					rejected++
				}
				if fast && !protocol.SchemaAccepts(m) {
					mb, _ := json.Marshal(m)
					t.Errorf("%s: the plain check accepts what the schema rejects:\n%s", name, mb)
				}
			})
		}
		t.Logf("%s: %d kinds of line, %d mutants (%d left to the schema), %d messages remembered", name, len(lines), checked, rejected, memo.Len())
		if rejected == 0 || rejected == checked {
			t.Errorf("%s: the mutants do not exercise both verdicts", name)
		}
	}
	if memo.Len() == 0 {
		t.Error("no message went through the memo: the decoding through it is not checked")
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, c := range x {
			l[i] = deepCopy(c)
		}
		return l
	}
	return v
}

// checkWireDecoding holds the one-pass decoding of a line to encoding/json's two (the generic
// value the protocol check reads, the Message the harness acts on): where it decodes a line,
// both decode it to the same; mustDecode: it decodes this line (one an adapter writes).
func checkWireDecoding(t *testing.T, line []byte, mustDecode bool, memo *protocol.WireMemo) {
	t.Helper()
	v, m, ok := protocol.DecodeWire(line, nil)
	if mv, mm, mok := protocol.DecodeWire(line, memo); mok != ok || !reflect.DeepEqual(mv, v) || !reflect.DeepEqual(mm, m) {
		t.Errorf("the decoding through the session's memo differs (%v, %v):\n%#v\n%#v\nline %s", mok, ok, mv, v, line)
	}
	if !ok {
		var head struct{ Type string }
		_ = json.Unmarshal(line, &head)
		if mustDecode && (head.Type == "call" || head.Type == "notify" || head.Type == "idle" || head.Type == "stopped") {
			t.Errorf("a %s line an adapter writes is not decoded in one pass: %s", head.Type, line)
		}
		return
	}
	want, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		t.Errorf("decoded in one pass, but encoding/json rejects it (%v): %s", err, line)
		return
	}
	var wantMsg protocol.Message
	if err := json.Unmarshal(line, &wantMsg); err != nil {
		t.Errorf("decoded in one pass, but not into a Message by encoding/json (%v): %s", err, line)
		return
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("the one-pass value differs from encoding/json's:\n%#v\n%#v\nline %s", v, want, line)
	}
	if !reflect.DeepEqual(protocol.WithoutStreamModel(m), wantMsg) {
		t.Errorf("the one-pass Message differs from encoding/json's:\n%+v\n%+v\nline %s", m, wantMsg, line)
	}
	checkStreamModel(t, line, m, mustDecode)
}

// checkStreamModel holds the model a stream call's decoding tells (the world then answers
// before reading the context) to what the world reads of the call's data: its canonical
// form's "model" member, by encoding/json. A stream call an adapter writes tells it.
func checkStreamModel(t *testing.T, line []byte, m protocol.Message, mustTell bool) {
	t.Helper()
	got := protocol.StreamModel(m)
	if m.Call == nil || m.Call.Kind != trace.CallStream {
		if got != nil {
			t.Errorf("a model told for a line that is no stream call: %s", line)
		}
		return
	}
	var want struct{ Model sim.ModelSetup }
	err := json.Unmarshal(jsonvalue.Canonical(m.Call.Data), &want)
	switch {
	case got == nil && mustTell:
		t.Errorf("a stream call an adapter writes does not tell its model: %s", line)
	case got != nil && (err != nil || *got != want.Model):
		t.Errorf("the model told is %+v; the world reads %+v (%v) of %s", *got, want.Model, err, line)
	}
}

// TestStreamModelIsWhatTheWorldReads: the model a stream call's decoding tells is the one the
// world reads, or none, when keys match "model" (or its fields) by case, or values are not
// strings.
func TestStreamModelIsWhatTheWorldReads(t *testing.T) {
	call := func(data string) []byte {
		return []byte(`{"type":"call","id":1,"session":1,"call":{"kind":"stream","data":` + data + `}}`)
	}
	rest := `"messages":[],"thinkingLevel":"off","apiKey":""`
	cases := []struct {
		data string
		told bool
	}{
		{`{"model":{"id":"m","api":"a","provider":"p"},` + rest + `}`, true},
		{`{"Model":{"ID":"m","Api":"a","PROVIDER":"p","extra":1},` + rest + `}`, true},
		{`{"model":null,` + rest + `}`, true},
		{`{"model":{"id":null,"api":"a"},` + rest + `}`, true},
		{`{"model":{"id":"m"},"MODEL":{"id":"n"},` + rest + `}`, false},
		{`{"model":{"id":"m","ID":"n"},` + rest + `}`, false},
		{`{"model":{"id":1},` + rest + `}`, false},
		{`{"model":"m",` + rest + `}`, false},
		{`{` + rest + `}`, true},
	}
	for _, c := range cases {
		line := call(c.data)
		_, m, ok := protocol.DecodeWire(line, nil)
		if !ok {
			t.Fatalf("not decoded in one pass: %s", line)
		}
		if told := protocol.StreamModel(m) != nil; told != c.told {
			t.Errorf("told %v, want %v: %s", told, c.told, line)
		}
		checkStreamModel(t, line, m, false)
	}
}

// TestWireDecodingAgreesWithEncodingJSON: lines written otherwise than adapters write them
// (space, escapes, keys twice or in another case, bytes that are not UTF-8, other types)
// decode in one pass to what encoding/json gives, or are left to it.
func TestWireDecodingAgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		`{"type":"idle","session":3}`,
		` { "type" : "stopped" , "session" : 12 } ` + "\n",
		`{"type":"call","id":7,"session":1,"call":{"kind":"hook","name":"finishTurn","data":{"a":[1,2.5e3,-0,{"b":null}],"c":"\u00e9\n\t\"x\\/"}}}`,
		`{"type":"call","id":7,"session":1,"call":{"kind":"hook","name":"finishTurn","data":"\ud83d\ude00"}}`,
		`{"type":"call","id":7,"session":1,"call":{"kind":"hook","name":null,"data":{}}}`,
		`{"type":"call","id":7,"session":1,"call":{"kind":"stream","data":null}}`,
		`{"type":"call","id":7,"session":1,"call":{"kind":"stream","Data":{}}}`,
		`{"type":"call","id":7,"session":1,"Session":2,"call":{"kind":"stream","data":{}}}`,
		`{"type":"call","id":7,"session":1,"call":{"kind":"stream","data":{"x":1,"x":2}}}`,
		`{"type":"call","id":7,"session":1,"call":{"kind":1,"data":{}}}`,
		`{"type":"call","id":7.0,"session":1,"call":{"kind":"tool","data":{}}}`,
		`{"type":"call","id":7,"session":1,"call":{"kind":"tool","data":{"s":"\xff"}}}`,
		"{\"type\":\"call\",\"id\":7,\"session\":1,\"call\":{\"kind\":\"tool\",\"data\":\"\xff\"}}",
		"{\"type\":\"call\",\"id\":7,\"session\":1,\"call\":{\"kind\":\"tool\",\"data\":\"a\tb\"}}",
		`{"type":"notify","session":2,"notification":{"kind":"event","data":{"type":"agent_start"}}}`,
		`{"type":"notify","session":2,"notification":{"kind":"end","data":{"messages":[]}}} x`,
		`{"type":"notify","session":2,"notification":{"kind":"end","data":{"messages":[]}}`,
		`{"type":"notify","session":2,"notification":{"kind":"end","data":[01]}}`,
		`{"type":"notify","session":2,"notification":{"kind":"end","data":[1.]}}`,
		`{"type":"notify","session":2,"notification":{"kind":"end","data":[-]}}`,
		`{"type":"notify","session":2,"notification":{"kind":"end","data":[1e+5,1E-5,tru]}}`,
		`{"type":"notify","session":2,"notification":{"kind":"end"}}`,
		`{"type":"error","message":"x"}`,
		`[1,2]`,
		``,
	}
	decoded := 0
	var memo protocol.WireMemo
	for _, l := range lines {
		if _, _, ok := protocol.DecodeWire([]byte(l), nil); ok {
			decoded++
		}
		checkWireDecoding(t, []byte(l), false, &memo)
	}
	if decoded < 6 || decoded == len(lines) {
		t.Errorf("%d of %d lines decoded in one pass: the cases do not exercise both ways", decoded, len(lines))
	}
}
