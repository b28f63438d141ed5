package protocol_test

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

// harnessSide drives Serve in-process over pipes, line by line.
type harnessSide struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startServe(t *testing.T) *harnessSide {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harnessSide{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := protocol.Serve(inR, outW)
		_ = outW.Close()
		_ = inR.Close()
		h.done <- err
	}()
	t.Cleanup(func() { _ = inW.Close() })
	return h
}

func (h *harnessSide) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("send: %v", err)
	}
}

func (h *harnessSide) recv() protocol.Message {
	h.t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := h.out.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			h.t.Fatalf("recv: %v", r.err)
		}
		m, err := protocol.ParseMessage([]byte(strings.TrimSuffix(r.line, "\n")))
		if err != nil {
			h.t.Fatalf("Serve wrote a bad message: %v", err)
		}
		return m
	case <-time.After(5 * time.Second):
		h.t.Fatal("no message from Serve")
	}
	return protocol.Message{}
}

func (h *harnessSide) end() error {
	h.t.Helper()
	select {
	case err := <-h.done:
		return err
	case <-time.After(5 * time.Second):
		h.t.Fatal("Serve did not return")
	}
	return nil
}

const tinyStart = `{"type":"start","session":1,"setup":{"scenario":"s","messages":[],"tools":[],"activeTools":[],"model":{"id":"m","api":"faux","provider":"faux"},"thinkingLevel":"off","toolExecution":"parallel","hooks":["getSteeringMessages"],"entry":"run","prompts":[{"role":"user","content":"hi","timestamp":0}]}}`

// runUntil reads messages until one of type typ, answering calls with answer(call) (a
// JSON answer line without the id) and collecting the rest.
func (h *harnessSide) runUntil(typ string, answer func(protocol.Message) string) []protocol.Message {
	h.t.Helper()
	var seen []protocol.Message
	for {
		m := h.recv()
		seen = append(seen, m)
		switch {
		case m.Type == typ:
			return seen
		case m.Type == "call" && answer != nil:
			h.send(strings.Replace(answer(m), "{", `{"type":"answer","id":`+strconv.FormatInt(m.ID, 10)+`,`, 1))
		case m.Type != "notify":
			h.t.Fatalf("waiting for %s, got %+v", typ, m)
		}
	}
}

func greet(h *harnessSide) {
	h.t.Helper()
	h.send(`{"type":"hello","protocol":1}`)
	if m := h.recv(); m.Type != "hello" {
		h.t.Fatalf("hello: %+v", m)
	}
}

func TestServeSession(t *testing.T) {
	h := startServe(t)
	h.send(`{"type":"hello","protocol":1}`)
	m := h.recv()
	if m.Type != "hello" || m.Protocol != 1 || m.Name != protocol.ReferenceName || m.Tracks != "1.6.0" || len(m.Capabilities.Hooks) != 10 {
		t.Fatalf("hello %+v", m)
	}
	h.send(tinyStart)
	var calls []string
	seen := h.runUntil("idle", func(m protocol.Message) string {
		calls = append(calls, m.Call.Kind+" "+m.Call.Name)
		if m.Call.Kind == "stream" {
			return `{"error":"no provider"}`
		}
		return `{"data":{"messages":[]}}`
	})
	if strings.Join(calls, ",") != "hook getSteeringMessages,stream " {
		t.Errorf("calls %q", calls)
	}
	end := seen[len(seen)-2]
	if end.Type != "notify" || end.Notification.Kind != "end" || string(end.Notification.Data) != `{"error":"no provider"}` {
		t.Errorf("end %+v", end)
	}
	h.send(`{"type":"stop","session":1}`)
	if m := h.recv(); m.Type != "stopped" || m.Session != 1 {
		t.Errorf("stop: %+v", m)
	}
	h.send(`{"type":"shutdown"}`)
	if err := h.end(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestServeProtocolErrors(t *testing.T) {
	cases := []struct {
		name  string
		steps func(h *harnessSide)
		want  string
	}{
		{"protocol version", func(h *harnessSide) { h.send(`{"type":"hello","protocol":2}`) }, "the harness speaks protocol 2; this implementation speaks 1"},
		{"garbage", func(h *harnessSide) { h.send(`hello?`) }, "protocol error at line 1: not a JSON message"},
		{"unknown type", func(h *harnessSide) { greet(h); h.send(`{"type":"ping"}`) }, `protocol error at line 2: unknown message type "ping"`},
		{"answer without call", func(h *harnessSide) { greet(h); h.send(`{"type":"answer","id":3,"data":{}}`) }, "an answer for call id 3, but no call is outstanding"},
		{"deliver without session", func(h *harnessSide) {
			greet(h)
			h.send(`{"type":"deliver","session":1,"delivery":{"kind":"abort","now":0}}`)
		}, "deliver for session 1, but no session is running"},
		{"wrong answer id", func(h *harnessSide) {
			greet(h)
			h.send(tinyStart)
			h.runUntil("call", nil)
			h.send(`{"type":"answer","id":9,"data":{}}`)
		}, "protocol error at line 3: an answer for unknown call id 9 (the outstanding call is 1)"},
		{"not an answer", func(h *harnessSide) {
			greet(h)
			h.send(tinyStart)
			h.runUntil("call", nil)
			h.send(`{"type":"stop","session":1}`)
		}, `expected the answer to call 1, got a "stop" message`},
		{"wrong session", func(h *harnessSide) {
			greet(h)
			h.send(tinyStart)
			h.runUntil("idle", func(m protocol.Message) string {
				if m.Call.Kind == "stream" {
					return `{"data":{"stream":"1"}}`
				}
				return `{"data":{"messages":[]}}`
			})
			h.send(`{"type":"stop","session":2}`)
		}, "stop for session 2, but session 1 is running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startServe(t)
			tc.steps(h)
			m := h.recv()
			if m.Type != "error" || !strings.Contains(m.Message, tc.want) {
				t.Errorf("got %+v, want an error with %q", m, tc.want)
			}
			if err := h.end(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Serve returned %v", err)
			}
		})
	}
}

func TestServeEndOfInputMidCall(t *testing.T) {
	h := startServe(t)
	greet(h)
	h.send(tinyStart)
	h.runUntil("call", nil)
	_ = h.in.Close()
	if err := h.end(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestServeDeliveryForUnknownTarget(t *testing.T) {
	h := startServe(t)
	greet(h)
	h.send(tinyStart)
	h.runUntil("idle", func(m protocol.Message) string {
		if m.Call.Kind == "stream" {
			return `{"data":{"stream":"1"}}`
		}
		return `{"data":{"messages":[]}}`
	})
	h.send(`{"type":"deliver","session":1,"delivery":{"kind":"toolResult","now":3,"target":"nope","data":{}}}`)
	m := h.recv()
	if m.Type != "error" || m.Session != 1 || m.Message != `delivery toolResult: delivery for unknown tool call "nope"` {
		t.Errorf("got %+v", m)
	}
	h.send(`{"type":"shutdown"}`)
	if err := h.end(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}
