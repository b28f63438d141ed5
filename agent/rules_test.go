package agent_test

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/agent"
	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/loop"
)

// caseRules maps the start of a case's name to the rules of docs/SEMANTICS.md it pins; the
// longest matching start wins.
var caseRules = map[string][]string{
	"prompt text":                          {"R-AGENT-PROMPT", "R-AGENT-STATE"},
	"prompt messages":                      {"R-AGENT-PROMPT"},
	"busy":                                 {"R-AGENT-BUSY", "R-AGENT-QUEUES"},
	"continue empty":                       {"R-AGENT-CONTINUE"},
	"continue system only":                 {"R-AGENT-CONTINUE"},
	"continue assistant":                   {"R-AGENT-CONTINUE", "R-AGENT-QUEUES"},
	"continue user tail":                   {"R-AGENT-CONTINUE"},
	"continue after error":                 {"R-AGENT-CONTINUE", "R-AGENT-ERROR-TURN"},
	"queued before prompt":                 {"R-AGENT-QUEUES"},
	"steer during run":                     {"R-AGENT-QUEUES"},
	"follow-up during run":                 {"R-AGENT-QUEUES"},
	"switch":                               {"R-AGENT-QUEUES"},
	"peek and clear":                       {"R-AGENT-QUEUES"},
	"error turn":                           {"R-AGENT-ERROR-TURN", "R-AGENT-STATE"},
	"hook failure":                         {"R-AGENT-ERROR-TURN"},
	"error cleared":                        {"R-AGENT-STATE"},
	"abort between turns":                  {"R-AGENT-ABORT", "R-AGENT-QUEUES"},
	"abort during hook":                    {"R-AGENT-ABORT", "R-AGENT-ERROR-TURN"},
	"idle calls":                           {"R-AGENT-ABORT", "R-AGENT-LISTENERS"},
	"listener barrier":                     {"R-AGENT-LISTENERS", "R-AGENT-BUSY"},
	"listeners in order":                   {"R-AGENT-LISTENERS"},
	"listener set changes during an event": {"R-AGENT-LISTENERS"},
	"initial state":                        {"R-AGENT-STATE"},
	"state during run":                     {"R-AGENT-STATE"},
	"tools change":                         {"R-AGENT-PROMPT"},
	"reset":                                {"R-AGENT-RESET"},
	"model and thinking level":             {"R-AGENT-PROMPT"},
	"continue tool-result tail":            {"R-AGENT-CONTINUE", "R-AGENT-QUEUES"},
	"transcript replaced":                  {"R-AGENT-CONTINUE", "R-AGENT-STATE"},
	"refusals keep the queues":             {"R-AGENT-BUSY", "R-AGENT-QUEUES"},
	"error after a tool turn":              {"R-AGENT-ERROR-TURN"},
	"default model":                        {"R-AGENT-ERROR-TURN", "R-AGENT-STATE"},
}

// rulesOf returns the rules a case pins.
func rulesOf(name string) []string {
	best := ""
	for prefix := range caseRules {
		if strings.HasPrefix(name, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	return caseRules[best]
}

// ruleNames renders a case's rules with their titles, for a finding.
func ruleNames(t *testing.T, name string) string {
	t.Helper()
	var parts []string
	for _, id := range rulesOf(name) {
		r, ok := docs.Lookup(id)
		if !ok {
			t.Fatalf("case %q cites %s, which docs/SEMANTICS.md does not define", name, id)
		}
		parts = append(parts, id+" ("+r.Title+")")
	}
	if len(parts) == 0 {
		t.Fatalf("case %q pins no rule; add it to caseRules", name)
	}
	return strings.Join(parts, ", ")
}

// TestEveryCasePinsRules requires every case to cite rules that exist, and every R-AGENT rule
// to be pinned by a case.
func TestEveryCasePinsRules(t *testing.T) {
	pinned := map[string]bool{}
	for _, name := range readPiOutput(t).names {
		ruleNames(t, name)
		for _, id := range rulesOf(name) {
			pinned[id] = true
		}
	}
	for _, r := range docs.Rules() {
		if strings.HasPrefix(r.ID, "R-AGENT-") && !pinned[r.ID] {
			t.Errorf("%s is pinned by no case of testdata/pi/agent.mjs", r.ID)
		}
	}
}

// TestRefusalTextsInSemantics keeps the refusal texts of SEMANTICS.md byte-identical to the
// package's.
func TestRefusalTextsInSemantics(t *testing.T) {
	doc := docs.Semantics()
	for _, err := range []error{agent.ErrBusyPrompt, agent.ErrBusyContinue, agent.ErrBusyReset, agent.ErrNothingToContinue, agent.ErrContinueFromAssistant} {
		if !strings.Contains(doc, "```text\n"+err.Error()+"\n```") {
			t.Errorf("docs/SEMANTICS.md has no text block holding %q", err.Error())
		}
	}
}

// drainsAll is a wrong Agent: every poll takes every queued message, whatever the mode.
type drainsAll struct{ *recorded }

func newDrainsAll(p *provider, opts agent.Options) subject {
	opts.SteeringMode, opts.FollowUpMode = loop.All, loop.All
	return drainsAll{newRecorded(p, opts)}
}

func (drainsAll) SetSteeringMode(loop.QueueMode) {}
func (drainsAll) SetFollowUpMode(loop.QueueMode) {}

// followUpWhileRunning is a wrong Agent: a follow-up queued during a run is delivered at the
// next steering poll.
type followUpWhileRunning struct{ *recorded }

func newFollowUpWhileRunning(p *provider, opts agent.Options) subject {
	return followUpWhileRunning{newRecorded(p, opts)}
}

func (a followUpWhileRunning) FollowUp(m loop.Message) {
	if a.State().IsStreaming {
		a.Steer(m)
		return
	}
	a.recorded.FollowUp(m)
}

// TestWrongAgentsNamed runs the cases on deliberately wrong Agents: each must fail, and the
// findings must name the rule it breaks.
func TestWrongAgentsNamed(t *testing.T) {
	for _, c := range []struct {
		name  string
		build builder
		rule  string
	}{
		{"drains every message in one-at-a-time mode", newDrainsAll, "R-AGENT-QUEUES"},
		{"delivers a follow-up while the run is active", newFollowUpWhileRunning, "R-AGENT-QUEUES"},
	} {
		t.Run(c.name, func(t *testing.T) {
			found := findings(t, c.build)
			if len(found) == 0 {
				t.Fatal("the wrong Agent passed every case")
			}
			named := false
			for _, f := range found {
				named = named || strings.Contains(f, c.rule+" (")
			}
			if !named {
				t.Errorf("no finding names %s:\n%s", c.rule, strings.Join(found, "\n"))
			}
			t.Logf("%d findings, the first:\n%s", len(found), found[0])
		})
	}
}
