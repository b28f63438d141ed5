package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestServedReadingIsEncodingJSON: the answers and deliveries the served side reads by hand
// are the messages encoding/json decodes, on every line the harness writes to it over part of
// the curated suite (three scenarios of each group), and on lines encoding/json reads
// otherwise or refuses, which are left to it.
func TestServedReadingIsEncodingJSON(t *testing.T) {
	var suite []*sim.Scenario
	groups := map[string]int{}
	for _, sc := range curatedSuite(t) {
		group, _, _ := strings.Cut(sc.Name, "/")
		if groups[group]++; groups[group] <= 3 {
			suite = append(suite, sc)
		}
	}
	var log bytes.Buffer
	p := selfadapter.Process(t, "serve")
	p.Log = &log
	conformance.Verify(context.Background(), suite, p, conformance.Options{})
	_ = p.Close()
	read, steps := 0, 0
	for _, line := range bytes.Split(log.Bytes(), []byte("\n")) {
		raw, ok := bytes.CutPrefix(line, []byte("> "))
		if !ok {
			continue
		}
		if bytes.HasPrefix(raw, []byte(`{"type":"answer"`)) || bytes.HasPrefix(raw, []byte(`{"type":"deliver"`)) {
			steps++
		}
		if sameMessage(t, raw) {
			read++
		}
	}
	if steps < 500 || read < steps*9/10 {
		t.Errorf("%d of the harness's %d answers and deliveries read by hand", read, steps)
	}
	for _, line := range []string{
		`{"type":"answer","id":3,"data":{"messages":[]}}`,
		`{"type":"answer","id":3,"session":2,"data":null,"error":"e\u003c","abort":true,"wait":"w","untilAbort":false}`,
		` {"type":"answer", "id":3, "data":{"a":1}} `,
		`{"type":"answer","id":3,"data":{"a" : 1}}`,
		`{"type":"answer","id":3,"data":"<b>"}`,
		`{"type":"answer","id":3.0}`,
		`{"type":"answer","ID":3}`,
		`{"type":"answer","id":3,"id":4}`,
		`{"type":"answer","id":99999999999999999999}`,
		`{"type":"answer","session":9999999999}`,
		`{"type":"answer","extra":1}`,
		`{"id":3,"type":"answer"}`,
		`{"id":3}`,
		`{"type":"hello","protocol":1}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"streamEvent","now":10,"target":"1","data":{"type":"start"}}}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"abort","now":10}}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"abort","now":10,"data":null}}`,
		`{"type":"deliver","session":1,"delivery":null}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"abort","Now":10}}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"abort","now":1e3}}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"x","data":{"a":[1,{"b":"\u2028"}]}}}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"x","data":{"a":[1,}}}`,
		`{"type":"deliver","session":1,"delivery":{"kind":"x","data":{"a":tru}}}`,
		`{"type":"\u0061nswer","id":1}`,
		`{"type":"answer","id":1}x`,
		`{"type":"answer","id":1`,
	} {
		sameMessage(t, []byte(line))
	}
}

// sameMessage requires a line read by hand, when it is, to be the message encoding/json
// decodes; it reports whether it was read by hand.
func sameMessage(t *testing.T, line []byte) bool {
	t.Helper()
	got, ok := protocol.ReadHarnessLine(line)
	if !ok {
		return false
	}
	var want protocol.Message
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("%s: read by hand, but encoding/json fails: %v", line, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nby hand       %+v\nencoding/json %+v", line, got, want)
	}
	return true
}
