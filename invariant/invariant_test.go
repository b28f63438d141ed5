package invariant_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// refTrace runs a scenario written in the file format against the reference.
func refTrace(t *testing.T, yaml string) *trace.Trace {
	t.Helper()
	f, err := scenarios.Parse("test.yaml", "test", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sim.Run(f.Scenario, sim.NewReference())
	if err != nil {
		t.Fatal(err)
	}
	if fl := invariant.CheckAll(tr); len(fl) > 0 {
		t.Fatalf("the reference trace already breaks invariants: %v\n%s", fl, tr.Timeline())
	}
	// The tests edit entries: they do so on the trace in full.
	return tr.Expanded()
}

// copyTrace deep-copies a trace so that edits do not alias.
func copyTrace(tr *trace.Trace) *trace.Trace {
	out := &trace.Trace{Scenario: tr.Scenario, Entries: slices.Clone(tr.Entries)}
	return out
}

// find returns the index of the nth (from 0) entry whose timeline line contains text.
func find(t *testing.T, tr *trace.Trace, text string, nth int) int {
	t.Helper()
	for i, e := range tr.Entries {
		if strings.Contains(trace.TimelineLine(e), text) {
			if nth == 0 {
				return i
			}
			nth--
		}
	}
	t.Fatalf("no entry %q in\n%s", text, tr.Timeline())
	return -1
}

func drop(tr *trace.Trace, i int) *trace.Trace {
	out := copyTrace(tr)
	out.Entries = slices.Delete(out.Entries, i, i+1)
	return out
}

func move(tr *trace.Trace, from, to int) *trace.Trace {
	out := copyTrace(tr)
	e := out.Entries[from]
	out.Entries = slices.Delete(out.Entries, from, from+1)
	if to > from {
		to--
	}
	out.Entries = slices.Insert(out.Entries, to, e)
	return out
}

func insert(tr *trace.Trace, at int, e trace.Entry) *trace.Trace {
	out := copyTrace(tr)
	out.Entries = slices.Insert(out.Entries, at, e)
	return out
}

// edit changes the decoded data (or answer) of entry i.
func edit(t *testing.T, tr *trace.Trace, i int, answer bool, f func(m map[string]any)) *trace.Trace {
	t.Helper()
	out := copyTrace(tr)
	raw := out.Entries[i].Data
	if answer {
		raw = out.Entries[i].Answer
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	data, _ := json.Marshal(m)
	if answer {
		out.Entries[i].Answer = data
	} else {
		out.Entries[i].Data = data
	}
	return out
}

// replaceAll substitutes text in every entry's data and answer.
func replaceAll(t *testing.T, tr *trace.Trace, old, new string) *trace.Trace {
	t.Helper()
	out := copyTrace(tr)
	n := 0
	for i := range out.Entries {
		e := &out.Entries[i]
		if strings.Contains(string(e.Data), old) || strings.Contains(string(e.Answer), old) {
			n++
		}
		e.Data = []byte(strings.ReplaceAll(string(e.Data), old, new))
		if e.Answer != nil {
			e.Answer = []byte(strings.ReplaceAll(string(e.Answer), old, new))
		}
	}
	if n == 0 {
		t.Fatalf("%q occurs nowhere", old)
	}
	return out
}

// mustFail asserts that the named invariant reports the bad trace (and shows what it says).
func mustFail(t *testing.T, name string, bad *trace.Trace) {
	t.Helper()
	inv, ok := invariant.ByName(name)
	if !ok {
		t.Fatalf("no invariant %s", name)
	}
	vs := inv.Check(bad)
	if len(vs) == 0 {
		t.Fatalf("%s accepts the bad trace:\n%s", name, bad.Timeline())
	}
	for _, v := range vs {
		if v.Rule != "" && !slices.Contains(inv.Rules, v.Rule) {
			t.Errorf("%s: a violation names %s, which the invariant does not list in its Rules", name, v.Rule)
		}
	}
	t.Logf("%s: %s", name, vs[0])
}

const toolTurn = `
tools:
  - name: echo
    description: Echo
    parameters: {type: object, properties: {v: {type: string}}, required: [v]}
    behaviour: {duration: 5, updates: [{at: 2, result: "half"}], result: "echoed"}
  - name: slow
    description: Slow
    behaviour: {duration: 9, result: "slow"}
provider:
  - content:
      - {toolCall: {id: a, name: slow, arguments: {}}}
      - {toolCall: {id: b, name: echo, arguments: {v: x}}}
  - "done"
run: ["go"]
`

func TestGrammar(t *testing.T) {
	tr := refTrace(t, toolTurn)
	t.Run("no agent_end", func(t *testing.T) {
		mustBreak(t, "grammar", "R-EV-ONE-END", drop(tr, find(t, tr, "ev    agent_end", 0)))
	})
	t.Run("agent_start not first", func(t *testing.T) { mustFail(t, "grammar", move(tr, 0, 3)) })
	t.Run("nested turn", func(t *testing.T) {
		mustFail(t, "grammar", drop(tr, find(t, tr, "ev    turn_end", 0)))
	})
	t.Run("two requests in a turn", func(t *testing.T) {
		i := find(t, tr, "call  stream #1", 0)
		mustBreak(t, "grammar", "R-TURN-REQUEST", insert(tr, i, tr.Entries[i]))
	})
	t.Run("unclosed message", func(t *testing.T) {
		mustFail(t, "grammar", drop(tr, find(t, tr, "ev    message_end user", 0)))
	})
	t.Run("update outside a message", func(t *testing.T) {
		i := find(t, tr, "ev    message_update", 0)
		mustFail(t, "grammar", move(tr, i, find(t, tr, "ev    message_start assistant", 0)))
	})
	t.Run("tool ends twice", func(t *testing.T) {
		i := find(t, tr, "ev    tool_execution_end a", 0)
		mustBreak(t, "grammar", "R-EV-GRAMMAR", insert(tr, i, tr.Entries[i]))
	})
	t.Run("tool end before start", func(t *testing.T) {
		mustFail(t, "grammar", move(tr, find(t, tr, "ev    tool_execution_end b", 0), find(t, tr, "ev    tool_execution_start b", 0)))
	})
	t.Run("failed run with agent_end", func(t *testing.T) {
		bad := copyTrace(tr)
		bad.Entries[len(bad.Entries)-1].Error = "boom"
		mustFail(t, "grammar", bad)
	})
}

func TestReplay(t *testing.T) {
	tr := refTrace(t, `
tools:
  - {name: first, description: one, behaviour: {result: "one"}}
  - {name: second, description: two, inactive: true}
hooks:
  prepareNextTurn: {calls: {1: {context: {tools: [second]}}}}
provider:
  - content: [{toolCall: {id: c1, name: first, arguments: {}}}]
  - content: [{toolCall: {id: c2, name: second, arguments: {}}}]
  - "done"
toolCalls: {c2: {result: "two"}}
run: ["go"]
`)
	t.Run("change not declared", func(t *testing.T) {
		// The delta system message loses its removal everywhere: the second request declares
		// [first second] although prepareNextTurn made the tools [second].
		mustFail(t, "replay", replaceAll(t, tr, `,"toolsRemoved":[{"name":"first"}]`, ""))
	})
	t.Run("transcript loses a result", func(t *testing.T) {
		i := find(t, tr, "call  stream #2", 0)
		mustFail(t, "replay", edit(t, tr, i, false, func(m map[string]any) {
			msgs := m["messages"].([]any)
			m["messages"] = slices.Delete(msgs, 3, 4)
		}))
	})
	t.Run("executed an undeclared tool", func(t *testing.T) {
		i := find(t, tr, "call  tool c1", 0)
		mustFail(t, "replay", edit(t, tr, i, false, func(m map[string]any) { m["toolName"] = "second" }))
	})
}

// TestReplayReportsInTraceOrder: two undeclared tools executed in one stretch are reported in
// the order the trace executed them, every time (they were kept in a map).
func TestReplayReportsInTraceOrder(t *testing.T) {
	tr := refTrace(t, `
tools:
  - {name: first, description: one, behaviour: {result: "one"}}
  - {name: second, description: two, behaviour: {result: "two"}}
provider:
  - content: [{toolCall: {id: c1, name: first, arguments: {}}}, {toolCall: {id: c2, name: second, arguments: {}}}]
  - "done"
run: ["go"]
`)
	bad := edit(t, tr, find(t, tr, "call  tool c1", 0), false, func(m map[string]any) { m["toolName"] = "zeta" })
	bad = edit(t, bad, find(t, bad, "call  tool c2", 0), false, func(m map[string]any) { m["toolName"] = "alpha" })
	inv, _ := invariant.ByName("replay")
	for range 20 {
		vs := inv.Check(bad)
		if len(vs) != 2 || !strings.Contains(vs[0].Msg, "tool zeta") || !strings.Contains(vs[1].Msg, "tool alpha") {
			t.Fatalf("want zeta then alpha, in trace order: %v", vs)
		}
	}
}

func TestTruncation(t *testing.T) {
	tr := refTrace(t, `
tools:
  - {name: write, description: Write, behaviour: {result: ok}}
provider:
  - content: [{toolCall: {id: w1, name: write, arguments: {}}}, {toolCall: {id: w2, name: write, arguments: {}}}]
    stopReason: length
  - "sorry"
run: ["go"]
`)
	t.Run("other text", func(t *testing.T) {
		mustFail(t, "truncation", replaceAll(t, tr, "was not executed", "was skipped"))
	})
	t.Run("executed", func(t *testing.T) {
		i := find(t, tr, "ev    tool_execution_start w1", 0)
		mustFail(t, "truncation", insert(tr, i+1, trace.Entry{Seq: 999, Kind: trace.KindCall, Name: trace.CallTool,
			Data: json.RawMessage(`{"toolCallId":"w1","toolName":"write","args":{}}`), Answer: json.RawMessage(`{}`)}))
	})
	t.Run("out of order", func(t *testing.T) {
		mustFail(t, "truncation", move(tr, find(t, tr, "ev    tool_execution_start w2", 0), find(t, tr, "ev    message_start toolResult w1", 0)))
	})
}

func TestTermination(t *testing.T) {
	tr := refTrace(t, `
tools:
  - {name: stop, description: Stop, behaviour: {result: {content: "bye", terminate: true}}}
provider:
  - content: [{toolCall: {id: s1, name: stop, arguments: {}}}, {toolCall: {id: s2, name: stop, arguments: {}}}]
run: ["go"]
`)
	t.Run("non-unanimous batch ends the run", func(t *testing.T) {
		i := find(t, tr, "ev    tool_execution_end s2", 0)
		mustBreak(t, "termination", "R-TERM-UNANIMOUS", edit(t, tr, i, false, func(m map[string]any) {
			delete(m["result"].(map[string]any), "terminate")
		}))
	})
	more := refTrace(t, toolTurn)
	t.Run("terminating batch requests again", func(t *testing.T) {
		bad := more
		for _, id := range []string{"a", "b"} {
			i := find(t, bad, "ev    tool_execution_end "+id, 0)
			bad = edit(t, bad, i, false, func(m map[string]any) { m["result"].(map[string]any)["terminate"] = true })
		}
		mustBreak(t, "termination", "R-TERM-UNANIMOUS", bad)
	})
}

func TestFinishTurn(t *testing.T) {
	end := refTrace(t, `
tools:
  - {name: echo, description: Echo, behaviour: {result: ok}}
hooks:
  finishTurn: {calls: {1: end}}
provider:
  - content: [{toolCall: {id: e1, name: echo, arguments: {}}}]
run: ["go"]
`)
	t.Run("end then polls", func(t *testing.T) {
		i := find(t, end, "ev    agent_end", 0)
		mustFail(t, "finish-turn", insert(end, i, trace.Entry{Seq: 999, Kind: trace.KindCall, Name: trace.HookSteering,
			Data: json.RawMessage(`{}`), Answer: json.RawMessage(`{"messages":[]}`)}))
	})
	plain := refTrace(t, `
hooks:
  finishTurn: {}
provider: ["hi"]
run: ["go"]
`)
	t.Run("continue ignored", func(t *testing.T) {
		i := find(t, plain, "call  finishTurn", 0)
		mustFail(t, "finish-turn", edit(t, plain, i, true, func(m map[string]any) { m["action"] = "continue" }))
	})
	aborted := refTrace(t, `
hooks:
  finishTurn: {default: continue}
provider:
  - {text: "cut", stopReason: error, errorMessage: "overloaded"}
run: ["go"]
`)
	t.Run("error does not end at once", func(t *testing.T) {
		i := find(t, aborted, "ev    agent_end", 0)
		mustFail(t, "finish-turn", insert(aborted, i, trace.Entry{Seq: 999, Kind: trace.KindCall, Name: trace.HookFollowUp,
			Data: json.RawMessage(`{}`), Answer: json.RawMessage(`{"messages":[]}`)}))
	})
}

func TestQueueTiming(t *testing.T) {
	tr := refTrace(t, toolTurn)
	poll := func(name string) trace.Entry {
		return trace.Entry{Seq: 999, Kind: trace.KindCall, Name: name, Data: json.RawMessage(`{}`), Answer: json.RawMessage(`{"messages":[]}`)}
	}
	t.Run("follow-up while tool results wait", func(t *testing.T) {
		i := find(t, tr, "call  getSteeringMessages", 1) // poll C after turn 1
		bad := insert(tr, i+1, poll(trace.HookFollowUp))
		mustBreak(t, "queue-timing", "R-POLL-FOLLOW-UP", bad)
		inv, _ := invariant.ByName("queue-timing")
		if vs := inv.Check(bad); !strings.Contains(vs[0].Msg, "so the loop was not stopping") {
			t.Errorf("the violation does not say why no follow-up poll was due: %s", vs[0].Msg)
		} else if strings.Contains(vs[0].Msg, "terminating") {
			// It polled steering again after: it was not stopping, nor judging the batch so.
			t.Errorf("a loop that went on is asked whether it took the batch as terminating: %s", vs[0].Msg)
		}
		// Polled last, as a stopping loop polls: the loop may have judged the batch terminating.
		stopping := drop(bad, i+2)
		if vs := inv.Check(stopping); len(vs) == 0 || !strings.Contains(vs[0].Msg, "did it take the batch as terminating? R-TERM-UNANIMOUS") {
			t.Errorf("a follow-up polled last does not ask about termination: %v\n%s", vs, stopping.Timeline())
		}
	})
	t.Run("poll C inside the turn", func(t *testing.T) {
		mustBreak(t, "queue-timing", "R-POLL-NEVER-ELSE", move(tr, find(t, tr, "ev    turn_end", 0), find(t, tr, "call  getSteeringMessages", 2)))
	})
	t.Run("no poll A", func(t *testing.T) {
		mustBreak(t, "queue-timing", "R-POLL-A", drop(tr, find(t, tr, "call  getSteeringMessages", 0)))
	})
	t.Run("no poll C", func(t *testing.T) {
		// With prepareNextTurn between them, poll C and poll B are told apart.
		prepared := refTrace(t, toolTurn+"hooks: {prepareNextTurn: {}}\n")
		mustBreak(t, "queue-timing", "R-POLL-C", drop(prepared, find(t, prepared, "call  getSteeringMessages", 1)))
	})
	t.Run("poll B with messages pending", func(t *testing.T) {
		steered := refTrace(t, `
provider: ["one", "two"]
user: [{on: {event: turn_end}, steer: ["more"]}]
run: ["go"]
`)
		i := find(t, steered, "ev    turn_start", 1)
		mustBreak(t, "queue-timing", "R-POLL-B", insert(steered, i, poll(trace.HookSteering)))
	})
}

// mustBreak is mustFail, and one of the violations names rule as the one it breaks.
func mustBreak(t *testing.T, name, rule string, bad *trace.Trace) {
	t.Helper()
	mustFail(t, name, bad)
	inv, _ := invariant.ByName(name)
	var rules []string
	for _, v := range inv.Check(bad) {
		if v.Rule == rule {
			return
		}
		rules = append(rules, v.Rule)
	}
	t.Errorf("%s: no violation names %s (they name %q)", name, rule, rules)
}

// TestEveryInvariantNamesItsRules: each invariant lists the rules of docs/SEMANTICS.md it
// checks, and a violation names only one of them.
func TestEveryInvariantNamesItsRules(t *testing.T) {
	for _, inv := range invariant.All() {
		if len(inv.Rules) == 0 {
			t.Errorf("%s names no rule", inv.Name)
		}
		for _, id := range inv.Rules {
			if !docs.HasRule(id) {
				t.Errorf("%s: docs/SEMANTICS.md has no rule %s", inv.Name, id)
			}
		}
	}
	for _, name := range []string{"R-POLL-A", "R-POLL-B", "R-POLL-C", "R-POLL-FOLLOW-UP", "R-POLL-NEVER-ELSE", "R-PREPARE-NEXT-TURN"} {
		if inv, _ := invariant.ByName("queue-timing"); !slices.Contains(inv.Rules, name) {
			t.Errorf("queue-timing's violations name %s, which it does not list", name)
		}
	}
}

func TestHookTiming(t *testing.T) {
	tr := refTrace(t, `
tools:
  - {name: echo, description: Echo, behaviour: {duration: 3, result: ok}}
hooks:
  prepareRequest: {}
  finishTurn: {}
  beforeToolCall: {}
  afterToolCall: {}
provider:
  - content: [{toolCall: {id: e1, name: echo, arguments: {}}}]
  - "done"
run: ["go"]
`)
	t.Run("no prepareRequest", func(t *testing.T) {
		mustFail(t, "hook-timing", drop(tr, find(t, tr, "call  prepareRequest", 1)))
	})
	t.Run("finishTurn before the results", func(t *testing.T) {
		mustFail(t, "hook-timing", move(tr, find(t, tr, "call  finishTurn", 0), find(t, tr, "ev    message_start toolResult", 0)))
	})
	t.Run("afterToolCall before execution", func(t *testing.T) {
		mustFail(t, "hook-timing", move(tr, find(t, tr, "call  afterToolCall", 0), find(t, tr, "call  tool e1", 0)))
	})
}

func TestResults(t *testing.T) {
	tr := refTrace(t, toolTurn)
	t.Run("result dropped", func(t *testing.T) {
		bad := drop(tr, find(t, tr, "ev    message_start toolResult b", 0))
		mustFail(t, "results", drop(bad, find(t, bad, "ev    message_end toolResult b", 0)))
	})
	t.Run("results out of source order", func(t *testing.T) {
		i := find(t, tr, "ev    message_start toolResult a", 0)
		bad := move(tr, i, find(t, tr, "ev    turn_end", 0))
		mustBreak(t, "results", "R-EXEC-PARALLEL", move(bad, i, find(t, bad, "ev    turn_end", 0)))
	})
	t.Run("a tool call not taken from the content", func(t *testing.T) {
		// A response that stops with "stop" and calls a tool, which the loop never runs.
		text := refTrace(t, "tools:\n  - {name: echo, description: Echo}\nprovider: [\"done\"]\nrun: [\"go\"]\n")
		bad := edit(t, text, find(t, text, "ev    message_end assistant", 0), false, func(m map[string]any) {
			msg := m["message"].(map[string]any)
			msg["content"] = append(msg["content"].([]any), map[string]any{"type": "toolCall", "id": "t1", "name": "echo", "arguments": map[string]any{}})
		})
		mustBreak(t, "results", "R-CONTENT-DECIDES", bad)
		mustBreak(t, "termination", "R-CONTENT-DECIDES", bad)
	})
	t.Run("ends not in completion order", func(t *testing.T) {
		// b (5ms) completes before a (9ms); make a end first.
		mustFail(t, "results", move(tr, find(t, tr, "ev    tool_execution_end a", 0), find(t, tr, "ev    tool_execution_end b", 0)))
	})
	t.Run("wrong duration", func(t *testing.T) {
		i := find(t, tr, "ev    tool_execution_end b", 0)
		mustFail(t, "results", edit(t, tr, i, false, func(m map[string]any) { m["durationMs"] = 4 }))
	})
	t.Run("update lost", func(t *testing.T) {
		mustFail(t, "results", drop(tr, find(t, tr, "ev    tool_execution_update b", 0)))
	})
	t.Run("isError a string", func(t *testing.T) {
		// The message says what differs: "true" the string is not true the boolean.
		bad := tr
		for _, k := range []string{"ev    message_start toolResult b", "ev    message_end toolResult b"} {
			bad = edit(t, bad, find(t, bad, k, 0), false, func(m map[string]any) { m["message"].(map[string]any)["isError"] = "true" })
		}
		inv, _ := invariant.ByName("results")
		vs := inv.Check(bad)
		if len(vs) == 0 || !strings.Contains(vs[0].Msg, `has isError "true", its end false`) {
			t.Errorf("violations %v", vs)
		}
	})
}

func TestSnapshots(t *testing.T) {
	tr := refTrace(t, `
config: {thinkingLevel: high}
provider:
  - {content: [{thinking: "hmm"}, {text: "hello there"}], deltaSize: 4}
run: ["go"]
`)
	t.Run("thinkingLevel missing", func(t *testing.T) {
		i := find(t, tr, "ev    message_end assistant", 0)
		mustFail(t, "snapshots", edit(t, tr, i, false, func(m map[string]any) {
			delete(m["message"].(map[string]any), "thinkingLevel")
		}))
	})
	t.Run("update shows a later state", func(t *testing.T) {
		i := find(t, tr, "ev    message_update text_delta", 0)
		j := find(t, tr, "ev    message_update text_delta", 1)
		bad := edit(t, tr, i, false, func(m map[string]any) {
			var later map[string]any
			_ = json.Unmarshal(tr.Entries[j].Data, &later)
			m["message"] = later["message"]
		})
		mustFail(t, "snapshots", bad)
	})
	t.Run("update lost", func(t *testing.T) {
		mustFail(t, "snapshots", drop(tr, find(t, tr, "ev    message_update", 2)))
	})
}

func TestReports(t *testing.T) {
	tr := refTrace(t, toolTurn)
	t.Run("agent_end misses a message", func(t *testing.T) {
		i := find(t, tr, "ev    agent_end", 0)
		mustFail(t, "reports", edit(t, tr, i, false, func(m map[string]any) {
			msgs := m["messages"].([]any)
			m["messages"] = msgs[1:]
		}))
	})
	t.Run("turn_end without results", func(t *testing.T) {
		i := find(t, tr, "ev    turn_end", 0)
		mustFail(t, "reports", edit(t, tr, i, false, func(m map[string]any) { m["toolResults"] = []any{} }))
	})
}

// TestEveryInvariantIsTested keeps this file in step with All.
func TestEveryInvariantIsTested(t *testing.T) {
	tested := map[string]bool{"grammar": true, "replay": true, "truncation": true, "termination": true, "finish-turn": true,
		"queue-timing": true, "hook-timing": true, "results": true, "snapshots": true, "reports": true,
		"agent-queues": true, "agent-runs": true}
	for _, inv := range invariant.All() {
		if !tested[inv.Name] {
			t.Errorf("invariant %s has no bad-trace test", inv.Name)
		}
		if inv.Doc == "" {
			t.Errorf("invariant %s has no doc", inv.Name)
		}
	}
}
