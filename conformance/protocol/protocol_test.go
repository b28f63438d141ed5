package protocol_test

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

func TestParseMessage(t *testing.T) {
	valid := []string{
		`{"type":"hello","protocol":1,"name":"x","version":"1","tracks":"1.6.0","capabilities":{"hooks":["finishTurn"]}}`,
		`{"type":"call","id":1,"session":1,"call":{"kind":"stream","data":{"model":{"id":"m","api":"a","provider":"p"},"messages":[{"role":"user","content":"hi"}],"thinkingLevel":"off","apiKey":""}}}`,
		`{"type":"call","id":2,"session":1,"call":{"kind":"tool","data":{"toolCallId":"t","toolName":"n","args":{}}}}`,
		`{"type":"call","id":3,"session":1,"call":{"kind":"hook","name":"getSteeringMessages","data":{}}}`,
		`{"type":"call","id":4,"session":1,"call":{"kind":"hook","name":"getApiKey","data":{"provider":"p"}}}`,
		`{"type":"notify","session":1,"notification":{"kind":"event","data":{"type":"agent_start"}}}`,
		`{"type":"notify","session":1,"notification":{"kind":"event","data":{"type":"tool_execution_end","toolCallId":"t","toolName":"n","result":{"content":null},"isError":true}}}`,
		`{"type":"notify","session":1,"notification":{"kind":"end","data":{"messages":[]}}}`,
		`{"type":"notify","session":1,"notification":{"kind":"end","data":{"error":"boom"}}}`,
		`{"type":"idle","session":3}`,
		`{"type":"stopped","session":3}`,
		`{"type":"error","message":"broken"}`,
	}
	for _, line := range valid {
		if _, err := protocol.ParseMessage([]byte(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	invalid := []struct{ line, want string }{
		{`not json`, "not JSON (stdout carries protocol messages only; was this line meant for stderr?): not json"},
		{`{"type":`, "not JSON: {\"type\":"},
		{`[1,2]`, `expected a JSON object with a "type", got: [1,2]`},
		{`{"type":"ping"}`, `expected a message whose "type" is one of hello, call, notify, idle, stopped, error; got: {"type":"ping"}`},
		{`{"type":"hello","protocol":3,"name":"x","version":"1","tracks":"1.6.0","capabilities":{"hooks":[]}}`, `a "hello" message does not match the protocol schema: at /protocol: value must be one of`},
		// An empty tracks would silently hold the implementation to the newest pi.
		{`{"type":"hello","protocol":1,"name":"x","version":"1","tracks":"","capabilities":{"hooks":[]}}`, `a "hello" message does not match the protocol schema: at /tracks: minLength: got 0, want 1`},
		{`{"type":"call","id":1,"session":1,"call":{"kind":"hook","name":"onTurn","data":{}}}`, `at /call/name: value must be one of`},
		{`{"type":"call","id":1,"session":1,"call":{"kind":"hook","data":{}}}`, `at /call: missing property 'name'`},
		{`{"type":"call","id":0,"session":1,"call":{"kind":"hook","name":"finishTurn","data":{"turn":{}}}}`, `at /call/data/turn: missing properties`},
		{`{"type":"call","id":1,"session":1,"call":{"kind":"stream","data":{"messages":[{"content":"x"}]}}}`, `at /call/data/messages/0: missing property 'role'`},
		{`{"type":"notify","session":1,"notification":{"kind":"event","data":{"type":"turn_done"}}}`, `at /notification/data/type: value must be one of`},
		{`{"type":"notify","session":1,"notification":{"kind":"event","data":{"type":"message_end"}}}`, `at /notification/data: missing property 'message'`},
		{`{"type":"notify","session":1,"notification":{"kind":"end","data":{"messages":[],"error":"x"}}}`, `a "notify" message does not match`},
		{`{"type":"idle"}`, `at /: missing property 'session'`},
	}
	for _, tc := range invalid {
		_, err := protocol.ParseMessage([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %q", tc.line, err, tc.want)
		}
	}
}

func TestSchemaIsEmbedded(t *testing.T) {
	if s := string(protocol.SchemaJSON()); !strings.Contains(s, `"$schema": "https://json-schema.org/draft/2020-12/schema"`) {
		t.Errorf("schema: %.80s", s)
	}
}
