package audit

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recording is a recording's lines.
type recording []string

func load(t *testing.T, name string) recording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pi", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func (r recording) text() string { return strings.Join(r, "\n") + "\n" }

// index is the 0-based index of the nth (from 1) line whose JSON matches every key: value
// (a key "message.role" reads a member's member).
func (r recording) index(t *testing.T, nth int, match map[string]string) int {
	t.Helper()
	for i, l := range r {
		var v map[string]any
		if json.Unmarshal([]byte(l), &v) != nil {
			continue
		}
		ok := true
		for k, want := range match {
			var cur any = v
			for _, part := range strings.Split(k, ".") {
				m, _ := cur.(map[string]any)
				cur = m[part]
			}
			if s, _ := cur.(string); s != want {
				ok = false
				break
			}
		}
		if ok {
			nth--
			if nth == 0 {
				return i
			}
		}
	}
	t.Fatalf("no line %d matching %v", nth, match)
	return -1
}

// edit decodes line i, lets f change it, and encodes it back.
func (r recording) edit(t *testing.T, i int, f func(v map[string]any)) recording {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r[i]), &v); err != nil {
		t.Fatal(err)
	}
	f(v)
	out, _ := json.Marshal(v)
	c := append(recording(nil), r...)
	c[i] = string(out)
	return c
}

func (r recording) without(idx ...int) recording {
	drop := map[int]bool{}
	for _, i := range idx {
		drop[i] = true
	}
	var c recording
	for i, l := range r {
		if !drop[i] {
			c = append(c, l)
		}
	}
	return c
}

func (r recording) insert(i int, lines ...string) recording {
	c := append(recording(nil), r[:i]...)
	c = append(c, lines...)
	return append(c, r[i:]...)
}

func audit(t *testing.T, text string) ([]Finding, Summary, error) {
	t.Helper()
	var fs []Finding
	sum, err := Check(strings.NewReader(text), Options{}, func(f Finding) { fs = append(fs, f) })
	return fs, sum, err
}

// Every recording of pi on the curated scenarios passes: its event stream and the session
// file pi-coding-agent wrote from it.
func TestHonestRecordingsPass(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "pi", "*.jsonl"))
	if err != nil || len(files) < 40 {
		t.Fatalf("%d recordings (%v)", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fs, sum, err := audit(t, string(data))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, x := range fs {
			t.Errorf("%s: %s", f, x)
		}
		want := Events
		if strings.HasSuffix(f, ".session.jsonl") {
			want = Session
		}
		if sum.Format != want || sum.Runs == 0 {
			t.Errorf("%s: format %q, %d runs; want %q", f, sum.Format, sum.Runs, want)
		}
	}
}

// An app's log holds run after run: the honest runs one after another pass too.
func TestHonestRunsInOneLog(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "pi", "*.events.jsonl"))
	var all strings.Builder
	runs := 0
	for _, f := range files {
		if strings.Contains(f, "fails-run") {
			continue // a failed agentLoop run has no agent_end: it cannot be followed
		}
		data, _ := os.ReadFile(f)
		all.Write(data)
		runs += strings.Count(string(data), `{"type":"agent_start"}`)
	}
	fs, sum, err := audit(t, all.String())
	if err != nil || len(fs) > 0 {
		t.Fatalf("err %v, findings %v", err, fs)
	}
	if sum.Runs != runs || len(sum.Notes) != 0 {
		t.Errorf("%d runs, notes %q; want %d runs, no note", sum.Runs, sum.Notes, runs)
	}
}

// A run that fails inside agentLoop ends without agent_end: the audit says it cannot judge
// its end instead of calling it a defect.
func TestUnfinishedRunIsANote(t *testing.T) {
	fs, sum, err := audit(t, load(t, "abort-error--stream-throws-fails-run.events.jsonl").text())
	if err != nil || len(fs) > 0 {
		t.Fatalf("err %v, findings %v", err, fs)
	}
	if len(sum.Notes) != 1 || !strings.Contains(sum.Notes[0], "ends inside the run from line 1") {
		t.Errorf("notes %q", sum.Notes)
	}
}

// Each planted defect is caught, at its line, with the rule it breaks.
func TestPlantedDefects(t *testing.T) {
	type planted struct {
		name string
		// plant returns the defective recording and the 1-based line the finding must
		// point at.
		plant func(t *testing.T) (recording, int)
		rule  string
		msg   string
	}
	ev := func(name string) recording { return load(t, name+".events.jsonl") }
	ss := func(name string) recording { return load(t, name+".session.jsonl") }
	cases := []planted{
		{"agent_start missing", func(t *testing.T) (recording, int) {
			r := ev("events--text-only")
			return r.without(0), 1
		}, RuleGrammar, "outside a run"},
		{"turn_end missing", func(t *testing.T) (recording, int) {
			r := ev("events--tool-turn")
			i := r.index(t, 1, map[string]string{"type": "turn_end"})
			return r.without(i), i + 1 // the next turn_start now opens a turn inside a turn
		}, RuleGrammar, "turn_start inside the turn"},
		{"message_update in a user message", func(t *testing.T) (recording, int) {
			r := ev("events--text-only")
			u := r.index(t, 1, map[string]string{"type": "message_update"})
			i := r.index(t, 1, map[string]string{"type": "message_start", "message.role": "user"})
			return r.insert(i+1, r[u]), i + 2
		}, RuleGrammar, "only an assistant message streams"},
		{"tool result lost", func(t *testing.T) (recording, int) {
			r := ev("events--tool-turn")
			i := r.index(t, 1, map[string]string{"type": "message_start", "message.role": "toolResult"})
			end := r.index(t, 1, map[string]string{"type": "turn_end"})
			return r.without(i, i+1), end - 2 + 1
		}, RuleResults, "has no tool-result message"},
		{"tool result edited", func(t *testing.T) (recording, int) {
			r := ev("tools-sequential--updates")
			i := r.index(t, 1, map[string]string{"type": "message_end", "message.role": "toolResult"})
			r = r.edit(t, i, func(v map[string]any) {
				v["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "forged"}}
			})
			return r, i + 1
		}, RuleResults, "does not carry the result"},
		{"a call executed twice", func(t *testing.T) (recording, int) {
			r := ev("events--tool-turn")
			i := r.index(t, 1, map[string]string{"type": "tool_execution_end"})
			return r.insert(i+1, r[i]), i + 2
		}, RuleGrammar, "a second tool_execution_end"},
		{"tool run for an aborted response", func(t *testing.T) (recording, int) {
			r := ev("abort-error--error-with-tool-calls")
			i := r.index(t, 1, map[string]string{"type": "message_end", "message.role": "assistant"})
			start := `{"type":"tool_execution_start","toolCallId":"x1","toolName":"x","args":{}}`
			return r.insert(i+1, start), i + 2
		}, RuleResults, "so nothing runs"},
		{"truncated call executed", func(t *testing.T) (recording, int) {
			r := ev("truncation--basic")
			i := r.index(t, 1, map[string]string{"type": "tool_execution_end"})
			return r.edit(t, i, func(v map[string]any) { v["durationMs"] = 3 }), i + 1
		}, RuleTruncation, "it was executed"},
		{"truncated call without the truncation error", func(t *testing.T) (recording, int) {
			r := ev("truncation--basic")
			i := r.index(t, 1, map[string]string{"type": "tool_execution_end"})
			return r.edit(t, i, func(v map[string]any) { v["isError"] = false }), i + 1
		}, RuleTruncation, "without the truncation error"},
		{"removed tool executed", func(t *testing.T) (recording, int) {
			r := ev("events--tool-turn")
			// A system message removing the tool before the response that calls it.
			i := r.index(t, 1, map[string]string{"type": "message_start", "message.role": "assistant"})
			sys := `{"message":{"content":"","role":"system","timestamp":0,"toolsRemoved":[{"name":"echo"}]},"type":"message_%s"}`
			r = r.insert(i, strings.ReplaceAll(sys, "%s", "start"), strings.ReplaceAll(sys, "%s", "end"))
			// agent_end must carry it too, or the audit would (rightly) name that first.
			a := r.index(t, 1, map[string]string{"type": "agent_end"})
			var sysMsg any
			_ = json.Unmarshal([]byte(`{"content":"","role":"system","timestamp":0,"toolsRemoved":[{"name":"echo"}]}`), &sysMsg)
			r = r.edit(t, a, func(v map[string]any) {
				msgs := v["messages"].([]any)
				v["messages"] = append(msgs[:2:2], append([]any{sysMsg}, msgs[2:]...)...)
			})
			return r, r.index(t, 1, map[string]string{"type": "tool_execution_end"}) + 1
		}, RuleReplay, "the transcript removed it at line"},
		{"agent_end edits a message", func(t *testing.T) (recording, int) {
			r := ev("events--several-turns")
			i := r.index(t, 1, map[string]string{"type": "agent_end"})
			return r.edit(t, i, func(v map[string]any) {
				v["messages"].([]any)[0].(map[string]any)["content"] = "edited"
			}), i + 1
		}, RuleUnchanged, "agent_end's message 1 differs"},
		{"turn_end edits the response", func(t *testing.T) (recording, int) {
			r := ev("events--text-only")
			i := r.index(t, 1, map[string]string{"type": "turn_end"})
			return r.edit(t, i, func(v map[string]any) {
				v["message"].(map[string]any)["stopReason"] = "toolUse"
			}), i + 1
		}, RuleUnchanged, "turn_end carries another message"},
		{"progress after the end", func(t *testing.T) (recording, int) {
			r := ev("agent-app-log")
			u := r.index(t, 1, map[string]string{"type": "tool_execution_update"})
			e := r.index(t, 3, map[string]string{"type": "tool_execution_end"}) // b1's end (after e1's and f1's)
			moved := r.insert(e+1, r[u]).without(u)
			return moved, e + 1
		}, RuleGrammar, "after its tool_execution_end"},
		{"the Agent's failure epilogue edited", func(t *testing.T) (recording, int) {
			r := ev("agent-app-log")
			i := r.index(t, 3, map[string]string{"type": "agent_end"})
			return r.edit(t, i, func(v map[string]any) {
				v["messages"].([]any)[0].(map[string]any)["errorMessage"] = "something else"
			}), i + 1
		}, RuleUnchanged, "agent_end's message 1 differs from the assistant message"},
		{"session: entry rewritten", func(t *testing.T) (recording, int) {
			r := ss("events--tool-turn")
			c := r.edit(t, 1, func(v map[string]any) { v["message"].(map[string]any)["content"] = "edited" })
			return append(r, c[1]), len(r) + 1
		}, RuleUnchanged, "written again with other content"},
		{"session: tool result lost", func(t *testing.T) (recording, int) {
			r := ss("events--tool-turn")
			i := r.index(t, 1, map[string]string{"type": "message", "message.role": "toolResult"})
			r = r.without(i)
			// Keep the chain: the next entry's parent is the dropped one's parent.
			r = r.edit(t, i, func(v map[string]any) {
				var prev map[string]any
				_ = json.Unmarshal([]byte(r[i-1]), &prev)
				v["parentId"] = prev["id"]
			})
			return r, i + 1
		}, RuleResults, "has no tool result before the next assistant message"},
		{"session: truncated call executed", func(t *testing.T) (recording, int) {
			r := ss("truncation--basic")
			i := r.index(t, 1, map[string]string{"type": "message", "message.role": "toolResult"})
			return r.edit(t, i, func(v map[string]any) { v["message"].(map[string]any)["durationMs"] = 2 }), i + 1
		}, RuleTruncation, "it was executed"},
		{"session: unknown parent", func(t *testing.T) (recording, int) {
			r := ss("events--text-only")
			return r.edit(t, 2, func(v map[string]any) { v["parentId"] = "nowhere" }), 3
		}, RuleSession, "not an entry before it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, line := c.plant(t)
			fs, _, err := audit(t, r.text())
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) == 0 {
				t.Fatalf("the planted defect is not caught")
			}
			for _, f := range fs {
				if f.Rule == c.rule && f.Line == line && strings.Contains(f.Msg, c.msg) {
					return
				}
			}
			t.Errorf("want a %s finding at line %d saying %q; got %v", c.rule, line, c.msg, fs)
		})
	}
}

// Input that cannot be read is an *InputError with its line and column.
func TestUnreadableInput(t *testing.T) {
	r := load(t, "events--text-only.events.jsonl")
	cases := []struct {
		name      string
		text      string
		line, col int
	}{
		{"broken JSON", r.insert(2, `{"type":"turn_start",}`).text(), 3, 22},
		{"not an object", r.insert(1, `[1,2]`).text(), 2, 1},
		{"no type", r.insert(1, `{"kind":1}`).text(), 2, 1},
		{"empty", "\n\n", 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := audit(t, c.text)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err %v, want an InputError", err)
			}
			if ie.Line != c.line || ie.Col != c.col {
				t.Errorf("%v: at %d:%d, want %d:%d", ie, ie.Line, ie.Col, c.line, c.col)
			}
		})
	}
	t.Run("line too long", func(t *testing.T) {
		long := 0
		for long < len(r) && len(r[long]) <= 40 {
			long++
		}
		_, err := Check(strings.NewReader(r.text()), Options{MaxLine: 40}, func(Finding) {})
		var ie *InputError
		if !errors.As(err, &ie) || ie.Line != long+1 {
			t.Errorf("err %v, want an InputError at line %d", err, long+1)
		}
	})
}

// zeros is an endless stream of NUL bytes, as /dev/zero.
type zeros struct{ read int }

func (z *zeros) Read(p []byte) (int, error) { clear(p); z.read += len(p); return len(p), nil }

// TestAnEndlessLineIsRefusedAtItsFirstByte: a recording that is not JSON lines at all
// (/dev/zero, which has no line end) is refused at its first byte, not read up to the limit;
// a blank start does not hide it.
func TestAnEndlessLineIsRefusedAtItsFirstByte(t *testing.T) {
	z := &zeros{}
	_, err := Check(z, Options{}, func(Finding) {})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 1 || ie.Col != 1 || !strings.Contains(ie.Msg, `not a JSON object: the line starts with "\x00"`) {
		t.Errorf("err %v, want an InputError at 1:1", err)
	}
	if z.read > 4<<20 {
		t.Errorf("read %d bytes of an endless stream", z.read)
	}
	_, err = Check(io.MultiReader(strings.NewReader("{\"type\":\"agent_start\"}\n  \t"), &zeros{}), Options{}, func(Finding) {})
	if !errors.As(err, &ie) || ie.Line != 2 || ie.Col != 4 {
		t.Errorf("err %v, want an InputError at 2:4", err)
	}
}

// The top-level "type" is found past nested ones, strings with escapes and brackets, and
// not inside nested objects.
func TestTopLevelType(t *testing.T) {
	cases := []struct {
		line, typ string
		ok        bool
	}{
		{`{"type":"message_update","message":{}}`, "message_update", true},
		{`{"message":{"type":"x","c":["]}\"",{"type":"y"}]},"type" : "turn_end"}`, "turn_end", true},
		{` { "a" : 1.5e3 , "b":true, "type":"agent_start" }`, "agent_start", true},
		{`{"message":{"type":"nested"}}`, "", false},
		{`{"type":1}`, "", false},
		{`{"type":"a\"b"}`, "", false},
		{`[{"type":"x"}]`, "", false},
		{`{"a":"unterminated`, "", false},
	}
	for _, c := range cases {
		typ, ok := topLevelType([]byte(c.line))
		if typ != c.typ || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.line, typ, ok, c.typ, c.ok)
		}
	}
}
