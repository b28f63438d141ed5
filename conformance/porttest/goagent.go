package porttest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// AgentPort is a Go port shaped like pi's Agent. Its Run serves the loop scenarios; in
// the Agent scenarios (PROTOCOL.md §13.2) Test and Serve build its Agent with NewAgent
// and drive it through the simulated user's operations, reporting each one's outcome.
type AgentPort interface {
	Port
	// NewAgent builds the Agent of one Agent scenario from env.Setup(): Setup.Agent holds the
	// queue modes and the system prompt; the model, tools, installed hooks and clock reach
	// the world through env as Run's do. pi's Agent has no static API key: a request's key is
	// getApiKey's answer, else "". The Agent owns its queues (getSteeringMessages and
	// getFollowUpMessages are never installed). It starts nothing.
	NewAgent(env Env) (Agent, error)
}

// Agent is the part of pi's Agent that the Agent scenarios use. Prompt, PromptText,
// Continue and WaitForIdle are called on goroutines of their own, and the other methods
// while they wait; all of them from the kit's goroutines, never two at once but for those.
type Agent interface {
	// Subscribe adds a listener. The Agent calls it with each event (pi's JSON shape, as
	// Env.Emit takes) once its state reflects the event, and waits for it to return before
	// going on: the kit's listener may hold the run at a barrier.
	Subscribe(listener func(event any))
	// Prompt runs the Agent with messages (pi's message JSON) as the prompt and returns once
	// the run is over (its agent_end listeners have returned). An error is a refusal (pi
	// throws before any await: a run is active) and its text is compared.
	Prompt(messages []json.RawMessage) error
	// PromptText is Prompt with one user message holding text, stamped now.
	PromptText(text string) error
	// Continue resumes from the transcript, as Prompt.
	Continue() error
	// WaitForIdle returns once the run active at the call, if any, is over.
	WaitForIdle()
	// Steer and FollowUp queue a message (pi's message JSON).
	Steer(message json.RawMessage)
	FollowUp(message json.RawMessage)
	// Abort aborts the active run, if any.
	Abort()
	// Reset clears the transcript, the queues and the error; an error is a refusal.
	Reset() error
	// SetSteeringMode and SetFollowUpMode set a queue's mode: "one-at-a-time" or "all".
	SetSteeringMode(mode string)
	SetFollowUpMode(mode string)
	// ClearQueues clears the "steering" queue, the "followUp" queue, or "all".
	ClearQueues(queue string)
	// SetTools makes the named tools of the setup's the Agent's tools.
	SetTools(names []string)
	// State is the Agent's observable state now.
	State() AgentState
}

// ContextSubscriber is an Agent whose listeners get its active run's abort signal, as pi's
// do (pi: listener(event, signal)): the kit subscribes through it when the Agent has it, and
// a barrier held until the abort (PROTOCOL.md §13.2, feature waitingHooks) is then released
// once ctx is done. Through Subscribe, such a barrier is held until its release.
type ContextSubscriber interface {
	SubscribeContext(listener func(ctx context.Context, event any))
}

// AgentState is an Agent's observable state (pi's agent.state and its queues), the state
// of a state operation's outcome (PROTOCOL.md §13.2).
type AgentState struct {
	IsStreaming bool `json:"isStreaming"`
	// Messages is the transcript: a slice of messages in pi's JSON shape (nil is []).
	Messages any `json:"messages"`
	// ErrorMessage is the last turn's error, "" for none.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// PendingToolCalls are the running tool calls' ids, in the order they started.
	PendingToolCalls []string `json:"pendingToolCalls"`
	// StreamingMessage is the message being streamed, nil for none.
	StreamingMessage any `json:"streamingMessage,omitempty"`
	// Queued is what the next poll would take (pi's peekQueuedMessages), a slice (nil is []).
	Queued            any  `json:"queued"`
	HasQueuedMessages bool `json:"hasQueuedMessages"`
}

// MarshalJSON writes the state with empty lists as [], never null.
func (s AgentState) MarshalJSON() ([]byte, error) {
	type plain AgentState
	out := plain(s)
	if out.PendingToolCalls == nil {
		out.PendingToolCalls = []string{}
	}
	msgs, err := json.Marshal(out.Messages)
	if err != nil {
		return nil, err
	}
	queued, err := json.Marshal(out.Queued)
	if err != nil {
		return nil, err
	}
	out.Messages, out.Queued = emptyIfNull(msgs), emptyIfNull(queued)
	return json.Marshal(out)
}

func emptyIfNull(raw []byte) json.RawMessage {
	if string(raw) == "null" {
		return json.RawMessage("[]")
	}
	return raw
}

// agentSession is what the kit tracks of an Agent scenario's Agent.
type agentSession struct {
	a        Agent
	barriers []*barrier
	// pending are the prompt, continue and waitForIdle operations whose call has not been
	// reported, in delivery order.
	mu      sync.Mutex
	pending []*pendingOp
}

// barrier is one barrier of the kit's listener.
type barrier struct {
	sim.BarrierSetup
	seen    int
	held    bool
	release chan struct{}
}

// pendingOp is an operation whose call runs on a goroutine of its own.
type pendingOp struct {
	id, op string
	done   bool
	err    error
}

// outcome is the data of an outcome notification.
type outcome struct {
	ID      string      `json:"id"`
	Op      string      `json:"op"`
	Outcome string      `json:"outcome"`
	Error   string      `json:"error,omitempty"`
	State   *AgentState `json:"state,omitempty"`
}

// startAgent builds the session's Agent and subscribes the kit's listener.
func (p *inProcess) startAgent(setup sim.Setup) error {
	ap, ok := p.port.(AgentPort)
	if !ok {
		return fmt.Errorf("an Agent scenario, but the port has no NewAgent (it is not a porttest.AgentPort)")
	}
	if setup.Agent == nil {
		return fmt.Errorf("setup: entry agent without an agent object")
	}
	a, err := ap.NewAgent(p)
	if err != nil {
		return fmt.Errorf("NewAgent: %w", err)
	}
	s := &agentSession{a: a}
	for _, b := range setup.Agent.Barriers {
		s.barriers = append(s.barriers, &barrier{BarrierSetup: b, release: make(chan struct{})})
	}
	p.agent = s
	if cs, ok := a.(ContextSubscriber); ok {
		cs.SubscribeContext(p.listen)
	} else {
		a.Subscribe(func(event any) { p.listen(context.Background(), event) })
	}
	return nil
}

// listen is the kit's listener: it reports the event, then holds at a barrier until its
// release (or the session's stop), or, for a barrier held until the abort, until ctx (the
// signal the Agent gave the listener) is done.
func (p *inProcess) listen(ctx context.Context, event any) {
	typ := p.emit(event)
	for _, b := range p.agent.barriers {
		p.mu.Lock()
		hold := false
		if b.Event == typ {
			b.seen++
			hold = b.seen == max(b.Nth, 1)
			b.held = hold
		}
		p.mu.Unlock()
		if hold {
			var aborted <-chan struct{}
			if b.UntilAbort {
				aborted = ctx.Done()
			}
			select {
			case <-b.release:
			case <-aborted:
				p.mu.Lock()
				b.held = false
				p.mu.Unlock()
			case <-p.closed:
			}
		}
	}
}

// operate carries out one operation delivery. An operation that cannot fail is reported
// before the Agent is told, so that what the Agent does next comes after its outcome.
// Kept whole: one case per Agent operation, a table.
func (p *inProcess) operate(d sim.Delivery) error {
	s := p.agent
	if s == nil {
		return fmt.Errorf("an agent delivery in a session that is not an Agent session")
	}
	var op struct {
		Op       string            `json:"op"`
		Text     string            `json:"text"`
		Mode     string            `json:"mode"`
		Queue    string            `json:"queue"`
		Tools    []string          `json:"tools"`
		Barrier  string            `json:"barrier"`
		Messages []json.RawMessage `json:"messages"`
		Message  json.RawMessage   `json:"message"`
	}
	if err := json.Unmarshal(d.Data, &op); err != nil {
		return fmt.Errorf("agent operation %s: %w", d.Target, err)
	}
	report := func(o outcome) {
		o.ID, o.Op = d.Target, op.Op
		p.notify(sim.NotifyOutcome, o)
	}
	accepted := outcome{Outcome: trace.OutcomeAccepted}
	switch op.Op {
	case trace.OpPrompt:
		if op.Messages == nil {
			p.track(d.Target, op.Op, func() error { return s.a.PromptText(op.Text) })
		} else {
			p.track(d.Target, op.Op, func() error { return s.a.Prompt(op.Messages) })
		}
	case trace.OpContinue:
		p.track(d.Target, op.Op, s.a.Continue)
	case trace.OpWaitForIdle:
		p.track(d.Target, op.Op, func() error { s.a.WaitForIdle(); return nil })
	case trace.OpSteer:
		report(accepted)
		s.a.Steer(op.Message)
	case trace.OpFollowUp:
		report(accepted)
		s.a.FollowUp(op.Message)
	case trace.OpAbort:
		report(accepted)
		s.a.Abort()
	case trace.OpReset:
		if err := s.a.Reset(); err != nil {
			report(outcome{Outcome: trace.OutcomeRefused, Error: err.Error()})
		} else {
			report(accepted)
		}
	case trace.OpSetSteeringMode:
		report(accepted)
		s.a.SetSteeringMode(op.Mode)
	case trace.OpSetFollowUpMode:
		report(accepted)
		s.a.SetFollowUpMode(op.Mode)
	case trace.OpClearQueues:
		report(accepted)
		s.a.ClearQueues(op.Queue)
	case trace.OpSetTools:
		report(accepted)
		s.a.SetTools(op.Tools)
	case trace.OpState:
		st := s.a.State()
		report(outcome{Outcome: trace.OutcomeAccepted, State: &st})
	case trace.OpRelease:
		p.mu.Lock()
		i := slices.IndexFunc(s.barriers, func(b *barrier) bool { return b.ID == op.Barrier && b.held })
		if i >= 0 {
			s.barriers[i].held = false
		}
		p.mu.Unlock()
		if i < 0 {
			report(outcome{Outcome: trace.OutcomeRefused, Error: fmt.Sprintf("barrier %s is not held", op.Barrier)})
			break
		}
		report(accepted)
		close(s.barriers[i].release)
	default:
		return fmt.Errorf("agent operation %s: unknown op %q", d.Target, op.Op)
	}
	return nil
}

// track runs an operation whose outcome comes when its call returns, on a goroutine of its
// own; reportSettled reports it.
func (p *inProcess) track(id, op string, call func() error) {
	s := p.agent
	po := &pendingOp{id: id, op: op}
	s.mu.Lock()
	s.pending = append(s.pending, po)
	s.mu.Unlock()
	go func() {
		err := p.safely("Agent."+op, call)
		s.mu.Lock()
		po.done, po.err = true, err
		s.mu.Unlock()
	}()
}

// reportSettled reports the operations whose call has returned, once the port is idle: the
// waitForIdle ones first, then the prompt or continue, as pi's promises settle (waitForIdle
// awaits the run's promise itself, prompt the run's lifecycle around it).
func (p *inProcess) reportSettled() {
	s := p.agent
	if s == nil {
		return
	}
	s.mu.Lock()
	var waits, runs []*pendingOp
	keep := s.pending[:0]
	for _, po := range s.pending {
		switch {
		case !po.done:
			keep = append(keep, po)
		case po.op == trace.OpWaitForIdle:
			waits = append(waits, po)
		default:
			runs = append(runs, po)
		}
	}
	s.pending = keep
	s.mu.Unlock()
	for _, po := range append(waits, runs...) {
		o := outcome{ID: po.id, Op: po.op, Outcome: trace.OutcomeResolved}
		if po.err != nil {
			o.Outcome, o.Error = trace.OutcomeRefused, po.err.Error()
		}
		p.notify(sim.NotifyOutcome, o)
	}
}
