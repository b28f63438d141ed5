package invariant_test

import (
	"os"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/invariant"
	"github.com/turnstile-dev/turnstile/trace"
)

// agentTrace is the reference's trace of the curated Agent scenario of that name.
func agentTrace(t *testing.T, name string) *trace.Trace {
	t.Helper()
	data, err := os.ReadFile("../scenarios/agent/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return refTrace(t, string(data))
}

// swapTexts swaps the texts of two user messages wherever their message events show them.
func swapTexts(t *testing.T, tr *trace.Trace, a, b string) *trace.Trace {
	t.Helper()
	var at, bt []int
	for _, ev := range []string{"message_start", "message_end"} {
		at = append(at, find(t, tr, `ev    `+ev+` user "`+a+`"`, 0))
		bt = append(bt, find(t, tr, `ev    `+ev+` user "`+b+`"`, 0))
	}
	for _, i := range at {
		tr = setText(t, tr, i, b)
	}
	for _, i := range bt {
		tr = setText(t, tr, i, a)
	}
	return tr
}

// setText replaces the text of the message of message event i.
func setText(t *testing.T, tr *trace.Trace, i int, text string) *trace.Trace {
	t.Helper()
	return edit(t, tr, i, false, func(m map[string]any) { m["message"].(map[string]any)["content"] = text })
}

func TestAgentQueues(t *testing.T) {
	steer := agentTrace(t, "steer-one-at-a-time")
	t.Run("two steering messages at one poll in one-at-a-time mode", func(t *testing.T) {
		// Move "steer 2"'s message_start and message_end up, right after "steer 1"'s.
		end1 := find(t, steer, `ev    message_end user "steer 1"`, 0)
		bad := move(steer, find(t, steer, `ev    message_start user "steer 2"`, 0), end1+1)
		bad = move(bad, find(t, bad, `ev    message_end user "steer 2"`, 0), end1+2)
		mustFail(t, "agent-queues", bad)
	})
	t.Run("continue's first poll takes a steering message in one-at-a-time mode", func(t *testing.T) {
		// continue() took "s1" as the prompt; its run's first poll took "s2" too, which should
		// have waited for the next turn. The violation says both drains, not one poll, and
		// names R-AGENT-CONTINUE (continue()'s first poll answers nothing), not the queues'.
		tr := agentTrace(t, "continue-steering-one-at-a-time")
		end1 := find(t, tr, `ev    message_end user "s1"`, 0)
		bad := move(tr, find(t, tr, `ev    message_start user "s2"`, 0), end1+1)
		bad = move(bad, find(t, bad, `ev    message_end user "s2"`, 0), end1+2)
		mustFail(t, "agent-queues", bad)
		inv, _ := invariant.ByName("agent-queues")
		if vs := inv.Check(bad); len(vs) == 0 || !strings.Contains(vs[0].Msg, "the first turn of a run continue() started took 2 steering messages") || vs[0].Rule != "R-AGENT-CONTINUE" {
			t.Errorf("violations %v", vs)
		}
	})
	t.Run("a later message before an earlier one", func(t *testing.T) {
		mustFail(t, "agent-queues", swapTexts(t, steer, "steer 1", "steer 2"))
	})
	t.Run("a follow-up taken after a tool turn", func(t *testing.T) {
		tr := agentTrace(t, "follow-up-waits-for-stop")
		// The follow-up "after" and the steering "now" trade places: the follow-up comes at
		// the poll after the tool turn, while the run has more to do.
		mustFail(t, "agent-queues", swapTexts(t, tr, "now", "after"))
	})
}

func TestAgentRuns(t *testing.T) {
	t.Run("a prompt accepted while a run is active", func(t *testing.T) {
		tr := agentTrace(t, "busy-prompt-refused")
		bad := edit(t, tr, find(t, tr, "out   u2 prompt refused", 0), false, func(m map[string]any) {
			m["outcome"] = trace.OutcomeResolved
			delete(m, "error")
		})
		mustFail(t, "agent-runs", bad)
	})
	t.Run("prompt resolved before agent_end", func(t *testing.T) {
		tr := agentTrace(t, "prompt-basic")
		mustFail(t, "agent-runs", move(tr, find(t, tr, "out   u1 prompt resolved", 0), find(t, tr, "ev    agent_end", 0)))
	})
	t.Run("a steer without outcome", func(t *testing.T) {
		tr := agentTrace(t, "steer-all")
		mustFail(t, "agent-runs", drop(tr, find(t, tr, "out   u2 steer accepted", 0)))
	})
	t.Run("waitForIdle resolved while a listener holds agent_end", func(t *testing.T) {
		tr := agentTrace(t, "listener-holds-agent-end")
		mustFail(t, "agent-runs", move(tr, find(t, tr, "out   u2 waitForIdle resolved", 0), find(t, tr, "dlv   u2 waitForIdle", 0)+1))
	})
	t.Run("two runs at once", func(t *testing.T) {
		tr := agentTrace(t, "prompt-basic")
		mustFail(t, "agent-runs", insert(tr, find(t, tr, "ev    turn_end", 0), tr.Entries[find(t, tr, "ev    agent_start", 0)]))
	})
}
