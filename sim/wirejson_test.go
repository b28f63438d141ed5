package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// wireLog is the reference reached as a served one is: through a port other than the world,
// which logs the data of every call and notification, and with its stream events delivered as
// JSON only (the world's canonical bytes, as the harness sends them), each kept in events;
// the run is the same when they are delivered as values.
type wireLog struct {
	*sim.Reference
	log    *bytes.Buffer
	events *[][]byte // nil: stream events are delivered as Go values
}

func (w wireLog) Start(setup sim.Setup, port sim.Port) error {
	return w.Reference.Start(setup, logPort{port, w.log})
}

func (w wireLog) Deliver(d sim.Delivery) error {
	if ev, ok := d.Value.(loop.StreamEvent); ok && w.events != nil {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		d.Data, d.Value = jsonvalue.Canonical(data), nil
		*w.events = append(*w.events, d.Data)
	}
	return w.Reference.Deliver(d)
}

type logPort struct {
	sim.Port
	log *bytes.Buffer
}

func (p logPort) Call(c sim.Call) sim.Answer {
	fmt.Fprintf(p.log, "call %s %s %s\n", c.Kind, c.Name, c.Data)
	return p.Port.Call(c)
}

func (p logPort) Notify(n sim.Notification) {
	fmt.Fprintf(p.log, "notify %s %s\n", n.Kind, n.Data)
	p.Port.Notify(n)
}

// TestServedPayloadsAreJSONMarshal: the served reference's calls and notifications, written
// by hand, are json.Marshal's bytes, in the curated suite (Agent sessions included) and
// generated runs; and the stream events delivered to it, read by hand, are what
// encoding/json reads, as their canonical bytes and as json.Marshal writes them.
func TestServedPayloadsAreJSONMarshal(t *testing.T) {
	list := suiteAndGenerated(t, 17, 50)
	var events [][]byte
	lines := 0
	for _, sc := range list {
		var byHand, byReflection bytes.Buffer
		if _, err := sim.Run(sc, wireLog{sim.NewReference(), &byHand, &events}); err != nil {
			t.Fatal(err)
		}
		if _, err := sim.Run(sc, wireLog{sim.WireByReflection(sim.NewReference()), &byReflection, nil}); err != nil {
			t.Fatal(err)
		}
		if a, b := byHand.Bytes(), byReflection.Bytes(); !bytes.Equal(a, b) {
			al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
			for i := range min(len(al), len(bl)) {
				if !bytes.Equal(al[i], bl[i]) {
					t.Fatalf("%s: line %d differs:\nby hand      %s\njson.Marshal %s", sc.Name, i+1, al[i], bl[i])
				}
			}
			t.Fatalf("%s: %d lines by hand, %d through json.Marshal", sc.Name, len(al), len(bl))
		}
		lines += bytes.Count(byHand.Bytes(), []byte("\n"))
	}
	if lines < 10_000 || len(events) < 1_000 {
		t.Fatalf("only %d lines and %d stream events compared", lines, len(events))
	}
	read, toRead := 0, 0
	for _, data := range events {
		var ev loop.StreamEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatal(err)
		}
		marshaled, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range [][]byte{data, marshaled} {
			byHand := sameStreamEvent(t, d)
			if !bytes.Contains(d, []byte(`"toolCall"`)) { // tool calls are left to encoding/json
				toRead++
				if !byHand {
					t.Errorf("not read by hand: %s", d)
				}
			}
			if byHand {
				read++
			}
		}
	}
	t.Logf("%d lines, %d events, %d of their %d forms read by hand, %d without a tool call", lines, len(events), read, 2*len(events), toRead)
}

// TestReadStreamEventIsEncodingJSON: well-formed stream events are read by hand as encoding/json
// reads them; those it reads otherwise or refuses (keys cased or written twice, nulls, numbers
// that are no int, other messages, a tool call, escapes) are left to it.
func TestReadStreamEventIsEncodingJSON(t *testing.T) {
	partial := `{"role":"assistant","content":[{"type":"text","text":"a<b"}],"api":"faux","provider":"faux","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":3}`
	// Those read by hand, the rest left to encoding/json.
	byHand := []string{
		`{"contentIndex":0,"delta":"x","partial":` + partial + `,"type":"text_delta"}`,
		`{"type":"text_delta","contentIndex":1,"delta":"x","partial":` + partial + `}`,
		`{"type":"done","reason":"stop","message":` + partial + `}`,
		`{"type":"error","reason":"error","error":` + partial + `,"message":` + partial + `}`,
		`{"type":"error","reason":"error","message":` + partial + `}`,
		`{"type":"start"} `,
	}
	for _, data := range byHand {
		if !sameStreamEvent(t, []byte(data)) {
			t.Errorf("not read by hand: %s", data)
		}
	}
	for _, data := range []string{
		`{"Type":"text_delta","contentIndex":1}`,
		`{"type":"text_delta","type":"done"}`,
		`{"type":"text_end","content":"all","contentIndex":2,"partial":null}`,
		`{"type":"text_delta","contentIndex":1.5}`,
		`{"type":"text_delta","contentIndex":1e2}`,
		`{"type":"text_delta","contentIndex":99999999999999999999}`,
		`{"type":"text_delta","partial":{"role":"user","content":"u","timestamp":0}}`,
		`{"type":"toolcall_end","contentIndex":0,"toolCall":{"type":"toolCall","id":"t","name":"n","arguments":{}}}`,
		`{"type":"start","extra":1}`,
		`{"type":"start"}{}`,
		`{"type":"\u0074ext_delta","delta":"\ud83d\ude00"}`,
		`null`,
	} {
		if sameStreamEvent(t, []byte(data)) {
			t.Errorf("read by hand, not left to encoding/json: %s", data)
		}
	}
}

// sameStreamEvent requires data read by hand, when it is, to be what encoding/json reads;
// it reports whether it was read by hand.
func sameStreamEvent(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := sim.ReadStreamEvent(data)
	if !ok {
		return false
	}
	want, err := sim.DecodeStreamEvent(data)
	if err != nil {
		t.Fatalf("%s: read by hand, but encoding/json fails: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nby hand       %#v\nencoding/json %#v", data, got, want)
	}
	return true
}
