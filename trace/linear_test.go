package trace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/explore"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// linearCorpus is every curated scenario and some generated ones (hooks that rewrite
// contexts, steering, aborts, errors).
func linearCorpus(t *testing.T) []*sim.Scenario {
	t.Helper()
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	out := scenarios.Scenarios(files)
	n := 300
	if testing.Short() {
		n = 40
	}
	for i := range n {
		out = append(out, explore.GenerateScenario(explore.RunSeed(11, i)))
	}
	// Hooks that answer with the context whole, every turn: their answers are linked too.
	contexts := toolTurns(4)
	contexts.Name = "context-answers"
	contexts.Hooks.PrepareRequest = &sim.Script[sim.PrepareAnswer]{Default: sim.PrepareAnswer{Context: &sim.ContextChange{}}}
	contexts.Hooks.PrepareNextTurn = &sim.Script[sim.PrepareAnswer]{Default: sim.PrepareAnswer{Context: &sim.ContextChange{}}}
	return append(out, contexts)
}

// TestLinearTraceExpandsToTheFullOne: the linear trace of a run, read back from its JSON
// lines and expanded, is byte for byte the trace the world writes in full, and the linear
// form is never longer (sim's tests check that in-process and through JSON it is the same).
// It also requires each way of linking, and each way of not linking, to occur.
func TestLinearTraceExpandsToTheFullOne(t *testing.T) {
	seen := map[string]int{}
	type run struct {
		sc *sim.Scenario
		// dropping: the implementation drops a message from each later request (dropsOne).
		dropping bool
	}
	var runs []run
	for _, sc := range linearCorpus(t) {
		runs = append(runs, run{sc: sc})
	}
	runs = append(runs, run{sc: toolTurns(4), dropping: true})
	for _, r := range runs {
		sc := r.sc
		impl := func() sim.Implementation { return sim.NewReference() }
		if r.dropping {
			impl = func() sim.Implementation { return dropsOne{sim.NewReference()} }
		}
		linear, err1 := sim.Run(sc, impl())
		full, err2 := sim.RunFull(sc, impl())
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s: errors %v, %v", sc.Name, err1, err2)
		}
		read, err := trace.ReadJSONL(linear.JSONL())
		if err != nil {
			t.Fatal(err)
		}
		expanded, err := read.Expand()
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		if a, b := expanded.JSONL(), full.JSONL(); !bytes.Equal(a, b) {
			d, _ := trace.FirstDivergence(trace.Lines(b), trace.Lines(a), 2)
			t.Fatalf("%s: the expanded linear trace is not the full one (- full, + expanded):\n%s", sc.Name, d)
		}
		// In-process entries are canonical and every link between them is restored on their
		// bytes; the same bytes as restoring it by decoding.
		for how, expand := range map[string]func() (*trace.Trace, error){"on the bytes": linear.ExpandOnBytes, "by decoding": linear.ExpandByDecoding, "as Expand does": linear.Expand} {
			expanded, err := expand()
			if err != nil {
				t.Fatalf("%s: expanding %s: %v", sc.Name, how, err)
			}
			if a, b := expanded.JSONL(), full.JSONL(); !bytes.Equal(a, b) {
				d, _ := trace.FirstDivergence(trace.Lines(b), trace.Lines(a), 2)
				t.Fatalf("%s: the linear trace expanded %s is not the full one (- full, + expanded):\n%s", sc.Name, how, d)
			}
		}
		if len(linear.JSONL()) > len(full.JSONL()) {
			t.Fatalf("%s: the linear trace is longer than the full one", sc.Name)
		}
		if !bytes.Equal(linear.Timeline(), full.Timeline()) {
			t.Fatalf("%s: the timelines differ", sc.Name)
		}
		countLinks(t, full, linear, seen)
	}
	for _, kind := range []string{"extends", "extends all", "extends part", "context in full", "advances", "partial in full", "repeats",
		"transformContext extends", "convertToLlm extends", "transformContext answer extends", "convertToLlm answer extends",
		"prepareRequest extends", "prepareRequest answer extends", "prepareNextTurn extends", "prepareNextTurn new extends",
		"prepareNextTurn answer extends",
		"finishTurn extends", "finishTurn new extends", "agent_end extends", "run extends", "repeats event",
		"message_start message", "message_end message", "turn_end message"} {
		if seen[kind] == 0 {
			t.Errorf("no entry of the corpus shows %q (seen: %v)", kind, seen)
		}
	}
}

// countLinks tallies the ways linear's entries are linked, checking what each link says
// against the full trace.
func countLinks(t *testing.T, full, linear *trace.Trace, seen map[string]int) {
	t.Helper()
	prevContext := -1
	for i, e := range linear.Entries {
		l := e.Link
		switch {
		case e.Kind == trace.KindCall && e.Name == trace.CallStream:
			n := len(messagesOf(t, full.Entries[i]))
			switch {
			case l != nil && l.Keep == prevContext:
				seen["extends all"]++
			case l != nil:
				seen["extends part"]++
			case prevContext > 0:
				seen["context in full"]++
			}
			if l != nil {
				seen["extends"]++
				if l.Keep > prevContext || l.Keep < 1 {
					t.Fatalf("entry %d keeps %d messages of a context of %d", e.Seq, l.Keep, prevContext)
				}
			}
			prevContext = n
		case e.Kind == trace.KindDeliver && e.Name == trace.DeliverStreamEvent:
			switch {
			case l != nil && l.Advances > 0:
				seen["advances"]++
			case bytes.Contains(e.Data, []byte(`"partial":`)) && !strings.Contains(string(e.Data), `"type":"start"`):
				seen["partial in full"]++
			}
		case e.Kind == trace.KindEvent && e.Name == "message_update" && l != nil && l.Repeats > 0:
			seen["repeats"]++
			if !bytes.Contains(e.Data, []byte(`"assistantMessageEvent"`)) {
				seen["repeats event"]++
			}
		case e.Kind == trace.KindEvent && l != nil && l.Repeats > 0:
			seen[e.Name+" message"]++
			base := full.Entries[l.Repeats-1]
			want := map[string]string{"message_start": "streamEvent", "message_end": "message_start", "turn_end": "message_end"}[e.Name]
			if base.Name != want || l.Repeats >= e.Seq {
				t.Fatalf("entry %d (%s) names the message of entry %d (%s), not of a %s", e.Seq, e.Name, l.Repeats, base.Name, want)
			}
		case (e.Kind == trace.KindEvent && e.Name == "agent_end" || e.Kind == trace.KindEnd) && l != nil:
			seen[e.Name+" extends"]++
			base := full.Entries[l.Extends-1]
			if base.Kind != trace.KindCall || base.Name != trace.CallStream {
				t.Fatalf("entry %d (%s) extends entry %d (%s), not a stream call", e.Seq, e.Name, l.Extends, base.Name)
			}
			if n := len(messagesOf(t, base)); l.Keep < 1 || l.Keep > n || l.Keep > len(messagesOf(t, full.Entries[i])) {
				t.Fatalf("entry %d keeps %d messages of %d", e.Seq, l.Keep, n)
			}
		case e.Kind == trace.KindCall && e.Name != trace.CallStream && l != nil:
			for _, part := range []struct {
				what          string
				extends, keep int
				messages      func(trace.Entry) []json.RawMessage
			}{
				{"extends", l.Extends, l.Keep, func(e trace.Entry) []json.RawMessage { return listOf(t, e.Data, contextPath(e.Name)) }},
				{"new extends", l.NewExtends, l.NewKeep, func(e trace.Entry) []json.RawMessage { return listOf(t, e.Data, []string{"turn", "newMessages"}) }},
				{"answer extends", l.AnswerExtends, l.AnswerKeep, func(e trace.Entry) []json.RawMessage { return listOf(t, e.Answer, answerPath(e.Name)) }},
			} {
				if part.extends == 0 {
					continue
				}
				seen[e.Name+" "+part.what]++
				base := full.Entries[part.extends-1]
				if base.Name != e.Name || base.Seq != part.extends {
					t.Fatalf("entry %d (%s) %s entry %d (%s), not a call of the same hook", e.Seq, e.Name, part.what, part.extends, base.Name)
				}
				if n := len(part.messages(base)); part.keep < 1 || part.keep > n {
					t.Fatalf("entry %d keeps %d messages of %d (%s)", e.Seq, part.keep, n, part.what)
				}
			}
		}
	}
}

// dropsOne is the reference with a transformContext of its own: from the second request on,
// the one before the last message of the context is left out of the request, so a request's
// context keeps only part of the previous one.
type dropsOne struct{ *sim.Reference }

func (d dropsOne) Start(setup sim.Setup, port sim.Port) error {
	return d.Reference.Start(setup, droppingPort{port})
}

type droppingPort struct{ sim.Port }

func (p droppingPort) Call(c sim.Call) sim.Answer {
	if c.Kind != trace.CallStream {
		return p.Port.Call(c)
	}
	var d map[string]any
	if err := json.Unmarshal(c.Data, &d); err != nil {
		return sim.Answer{Error: err.Error()}
	}
	if msgs, _ := d["messages"].([]any); len(msgs) > 2 {
		d["messages"] = append(msgs[:len(msgs)-2:len(msgs)-2], msgs[len(msgs)-1])
	}
	c.Data, _ = json.Marshal(d)
	return p.Port.Call(c)
}

// toolTurns is a scenario of n turns calling a tool, then a text turn.
func toolTurns(n int) *sim.Scenario {
	sc := &sim.Scenario{Name: "tool-turns", Prompts: []loop.Message{&loop.UserMessage{Text: "go"}},
		Tools: []sim.ToolSpec{{Name: "a", Behaviour: sim.Behaviour{Result: loop.ToolResult{Content: loop.Text("ok")}}}}}
	for i := range n {
		sc.Responses = append(sc.Responses, sim.Response{Content: []loop.Block{loop.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "a"}}})
	}
	sc.Responses = append(sc.Responses, sim.Response{Content: loop.Text("done")})
	return sc
}

func messagesOf(t *testing.T, e trace.Entry) []json.RawMessage {
	t.Helper()
	var d struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.Messages
}

// contextPath and answerPath are where a hook's call holds the context's messages and
// where its answer holds messages (PROTOCOL.md §4).
func contextPath(hook string) []string {
	switch hook {
	case trace.HookPrepareRequest:
		return []string{"context", "messages"}
	case trace.HookPrepareNextTurn, trace.HookFinishTurn:
		return []string{"turn", "context", "messages"}
	}
	return []string{"messages"}
}

func answerPath(hook string) []string {
	if hook == trace.HookPrepareRequest || hook == trace.HookPrepareNextTurn {
		return []string{"context", "messages"}
	}
	return []string{"messages"}
}

// listOf is the list at path in a JSON object.
func listOf(t *testing.T, data []byte, path []string) []json.RawMessage {
	t.Helper()
	var v any = json.RawMessage(data)
	for _, key := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v.(json.RawMessage), &m); err != nil {
			t.Fatal(err)
		}
		v = m[key]
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v.(json.RawMessage), &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// TestExpandRejectsLinksThatDoNotResolve: a link to no earlier entry, to an entry without
// the part it names, keeping more than there is, or of no known kind, is an error naming the
// entry.
func TestExpandRejectsLinksThatDoNotResolve(t *testing.T) {
	stream := `{"seq":1,"t":0,"kind":"call","name":"stream","data":{"messages":[{"role":"user","content":"a","timestamp":0}]}}`
	delivery := `{"seq":2,"t":0,"kind":"deliver","name":"streamEvent","target":"1","data":{"partial":{"content":[]},"type":"start"}}`
	for _, c := range []struct{ line, want string }{
		{`{"seq":3,"t":0,"kind":"call","name":"stream","data":{"messages":[]},"link":{"extends":9,"keep":1}}`, "entry 3: the link refers to entry 9"},
		{`{"seq":3,"t":0,"kind":"call","name":"stream","data":{"messages":[]},"link":{"extends":1,"keep":2}}`, "entry 3: link keeps 2 messages of entry 1, which has 1"},
		{`{"seq":3,"t":0,"kind":"deliver","name":"streamEvent","data":{"contentIndex":0,"delta":"x","type":"text_delta"},"link":{"advances":1}}`, "entry 3: the link refers to entry 1, which holds no partial"},
		{`{"seq":3,"t":0,"kind":"deliver","name":"streamEvent","data":{"contentIndex":0,"delta":"x","type":"text_delta"},"link":{"advances":2}}`, "entry 3: text_delta at content index 0 of a partial with 0 blocks"},
		{`{"seq":3,"t":0,"kind":"deliver","name":"streamEvent","data":{"type":"start"},"link":{"advances":2}}`, `entry 3: a "start" event does not advance a partial`},
		{`{"seq":3,"t":0,"kind":"event","name":"message_update","data":{"assistantMessageEvent":7,"type":"message_update"},"link":{"repeats":2}}`, "entry 3: a repeating entry has no assistantMessageEvent"},
		{`{"seq":3,"t":0,"kind":"event","name":"message_update","data":{"message":{},"type":"message_update"},"link":{"repeats":2}}`, "entry 3: a repeating entry without assistantMessageEvent holds a message"},
		{`{"seq":3,"t":0,"kind":"event","name":"message_end","data":{"type":"message_end"},"link":{"repeats":1}}`, "entry 3: the link refers to entry 1, which holds no message"},
		{`{"seq":3,"t":0,"kind":"event","name":"turn_end","data":{"message":null,"type":"turn_end"},"link":{"repeats":2}}`, "entry 3: link {\"repeats\":2} on a turn_end entry, which cannot leave its message out"},
		{`{"seq":3,"t":0,"kind":"call","name":"stream","data":{"messages":[]},"link":{"extends":1,"keep":1,"repeats":2}}`, `entry 3: link {"extends":1,"keep":1,"repeats":2} is not one the linear form knows`},
		{`{"seq":3,"t":0,"kind":"call","name":"stream","data":{"messages":[]},"link":{"extends":3,"keep":1}}`, "entry 3: the link refers to entry 3, which is not an earlier entry"},
		{`{"seq":3,"t":0,"kind":"call","name":"stream","data":{"messages":[]},"link":{"newExtends":1,"newKeep":1}}`, `entry 3: link {"newExtends":1,"newKeep":1} on a stream entry, which sends no such list`},
		{`{"seq":3,"t":0,"kind":"call","name":"stream","data":{"messages":[]},"answer":{"messages":[]},"link":{"answerExtends":1,"answerKeep":1}}`, `entry 3: link {"answerExtends":1,"answerKeep":1} on a stream entry, whose answer holds no messages`},
		{`{"seq":3,"t":0,"kind":"call","name":"finishTurn","data":{"turn":{"context":{"messages":[]},"newMessages":[]}},"link":{"newExtends":1,"newKeep":1}}`, "entry 3: link keeps 1 messages of entry 1, which has 0"},
		{`{"seq":3,"t":0,"kind":"call","name":"convertToLlm","data":{"messages":[]},"answer":{"messages":[]},"link":{"answerExtends":7,"answerKeep":1}}`, "entry 3: the link refers to entry 7, which is not an earlier entry"},
		{`{"seq":3,"t":0,"kind":"call","name":"convertToLlm","data":{"messages":[]},"answer":{"messages":[]},"link":{"answerExtends":1,"answerKeep":1}}`, "entry 3: the link refers to entry 1, whose answer is not an object"},
		{`{"seq":3,"t":0,"kind":"call","name":"convertToLlm","data":{"messages":[]},"answer":{"messages":[]},"link":{"answerExtends":3,"answerKeep":1}}`, "entry 3: the link refers to entry 3, which is not an earlier entry"},
	} {
		tr, err := trace.ReadJSONL([]byte(stream + "\n" + delivery + "\n" + c.line + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Expand(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.line, err, c.want)
		}
	}
}
