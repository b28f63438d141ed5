package audit

import (
	"encoding/json"
	"fmt"

	"github.com/turnstile-dev/turnstile/loop"
)

// sessionChecker audits a pi-coding-agent session file: a header line, then one entry a line,
// each with an id and the id of its parent (the entries form a tree; a new branch starts at
// an earlier entry). The transcript rules follow the entries in file order while each entry's
// parent is the one before it; at a branch they start over (the state at the branch point is
// not kept, so that memory does not grow with the file).
type sessionChecker struct {
	report func(Finding)
	header bool
	ids    map[string]idInfo
	last   string
	// entries counts message entries.
	entries  int
	branches int
	tr       *transcript
	notes    []string
}

// idInfo is what is kept of an entry: where it is and a digest of its line.
type idInfo struct {
	line int
	d    digest
}

// transcript is the state of the messages along the current branch.
type transcript struct {
	decl *declarations
	// pending are the calls of the last assistant message still waiting for a result.
	pending []*sessionCall
	byID    map[string]*sessionCall
	stop    string
	asst    int
	seenAny bool
}

type sessionCall struct {
	id, name   string
	results    int
	undeclared string
}

func newTranscript() *transcript {
	return &transcript{decl: newDeclarations(), byID: map[string]*sessionCall{}}
}

func (c *sessionChecker) find(line int, rule, format string, args ...any) {
	c.report(Finding{Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

func (c *sessionChecker) line(n int, data []byte) error {
	var e struct {
		Type     string          `json:"type"`
		ID       *string         `json:"id"`
		ParentID *string         `json:"parentId"`
		Message  json.RawMessage `json:"message"`
	}
	if err := decodeLine(n, data, &e); err != nil {
		return err
	}
	if !c.header {
		c.header = true
		if e.Type != "session" || e.ID == nil {
			c.find(n, RuleSession, "the first line is not a session header ({type: session, id})")
		}
		c.tr = newTranscript()
		return nil
	}
	if e.Type == "session" {
		c.find(n, RuleSession, "a second session header")
		return nil
	}
	if e.Type == "" || e.ID == nil || *e.ID == "" {
		c.find(n, RuleSession, "an entry without a type or an id")
		return nil
	}
	id := *e.ID
	d := digestOf(data)
	if prev, dup := c.ids[id]; dup {
		if prev.d != d {
			c.find(n, RuleUnchanged, "entry %q is written again with other content (first at line %d): an entry once written is never edited", id, prev.line)
		} else {
			c.find(n, RuleSession, "entry %q is written twice (first at line %d)", id, prev.line)
		}
		return nil
	}
	c.ids[id] = idInfo{n, d}
	parent := ""
	if e.ParentID != nil {
		parent = *e.ParentID
		if _, ok := c.ids[parent]; !ok || parent == id {
			c.find(n, RuleSession, "entry %q has parent %q, which is not an entry before it", id, parent)
		}
	}
	if parent != c.last && c.last != "" {
		// A branch: the transcript rules start over from here.
		c.branches++
		c.tr = newTranscript()
	}
	c.last = id
	if e.Type == "message" {
		c.entries++
		c.message(n, e.Message)
	}
	return nil
}

func (c *sessionChecker) message(n int, raw json.RawMessage) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		c.find(n, RuleSession, "a message entry whose message is not an object")
		return
	}
	t := c.tr
	first := !t.seenAny
	t.seenAny = true
	switch m.Role {
	case "system":
		if first && len(m.ToolsAdded) > 0 {
			t.decl.complete = true
		}
		t.decl.apply(&m, n)
	case "assistant":
		c.unanswered(n)
		t.pending, t.byID, t.stop, t.asst = nil, map[string]*sessionCall{}, m.StopReason, n
		if !runsTools(m.StopReason) {
			return
		}
		for _, tc := range m.toolCalls() {
			sc := &sessionCall{id: tc.id, name: tc.name, undeclared: t.decl.undeclared(tc.name)}
			if _, dup := t.byID[tc.id]; dup {
				c.find(n, RuleResults, "the response calls tool-call id %q twice", tc.id)
				continue
			}
			t.pending = append(t.pending, sc)
			t.byID[tc.id] = sc
		}
	case "toolResult":
		sc := t.byID[m.ToolCallID]
		if sc == nil {
			c.find(n, RuleResults, "a tool result for %q, which the last assistant message did not call", m.ToolCallID)
			return
		}
		sc.results++
		if sc.results > 1 {
			c.find(n, RuleResults, "a second tool result for call %q (%s)", sc.id, sc.name)
			return
		}
		for _, p := range t.pending {
			if p == sc {
				break
			}
			if p.results == 0 {
				c.find(n, RuleResults, "the result for call %q comes before the one for %q: results follow the calls' source order", sc.id, p.id)
				break
			}
		}
		executed := len(m.DurationMs) > 0 && string(m.DurationMs) != "null"
		if t.stop == "length" {
			if executed {
				c.find(n, RuleTruncation, "call %q (%s) of the length-stopped response at line %d has a durationMs: it was executed", sc.id, sc.name, t.asst)
			} else if !m.IsError || firstText(m.Content) != loop.TruncatedToolCallText(sc.name) {
				c.find(n, RuleTruncation, "call %q (%s) of the length-stopped response at line %d has no truncation error (isError %v, text %q)", sc.id, sc.name, t.asst, m.IsError, firstText(m.Content))
			}
		}
		if sc.undeclared != "" && executed {
			c.find(n, RuleReplay, "tool %q was executed for call %q, but %s", sc.name, sc.id, sc.undeclared)
		}
	}
}

// unanswered reports the calls of the last assistant message that got no result.
func (c *sessionChecker) unanswered(n int) {
	for _, p := range c.tr.pending {
		if p.results == 0 {
			c.find(n, RuleResults, "call %q (%s) of the assistant message at line %d has no tool result before the next assistant message", p.id, p.name, c.tr.asst)
		}
	}
}

func (c *sessionChecker) end() (int, []string) {
	if c.tr != nil {
		var open []string
		for _, p := range c.tr.pending {
			if p.results == 0 {
				open = append(open, p.id)
			}
		}
		if len(open) > 0 {
			c.notes = append(c.notes, fmt.Sprintf("the session ends with %d tool %s of the assistant message at line %d unanswered (%s): a run still going or cut short, not judged", len(open), plural(len(open), "call", "calls"), c.tr.asst, quoteList(open)))
		}
	}
	if c.branches > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d %s: the transcript rules start over at each", c.branches, plural(c.branches, "branch", "branches")))
	}
	return c.entries, sortedNotes(c.notes)
}
