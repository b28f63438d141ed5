package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/turnstile-dev/turnstile/agent"
	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim/coop"
	"github.com/turnstile-dev/turnstile/trace"
)

// The reference's side of Agent scenarios (protocol §13.2): package agent's Agent, its runs
// taking turns on the scheduler, driven by operation deliveries.

// refAgent is the Agent of an Agent session and what the reference tracks of it.
type refAgent struct {
	a     *agent.Agent
	tools map[string]*loop.Tool
	// starter is the id of the prompt or continue whose run is active; waiters the
	// waitForIdle operations waiting for that run, in delivery order.
	starter, starterOp string
	waiters            []string
	// barriers are the listener's barriers, as the setup gives them.
	barriers []*refBarrier
}

// refBarrier is one barrier of the listener.
type refBarrier struct {
	BarrierSetup
	seen   int
	held   bool
	waiter *coop.Task
}

// AgentState is the observable state of an Agent (pi's agent.state and its queues), the
// state of a state operation's outcome.
type AgentState struct {
	IsStreaming       bool           `json:"isStreaming"`
	Messages          []loop.Message `json:"messages"`
	ErrorMessage      string         `json:"errorMessage,omitempty"`
	PendingToolCalls  []string       `json:"pendingToolCalls"`
	StreamingMessage  loop.Message   `json:"streamingMessage,omitempty"`
	Queued            []loop.Message `json:"queued"`
	HasQueuedMessages bool           `json:"hasQueuedMessages"`
}

// Outcome is the data of a NotifyOutcome.
type Outcome struct {
	ID      string      `json:"id"`
	Op      string      `json:"op"`
	Outcome string      `json:"outcome"`
	Error   string      `json:"error,omitempty"`
	State   *AgentState `json:"state,omitempty"`
}

// startAgent builds the session's Agent; it starts nothing.
func (r *Reference) startAgent(setup Setup) error {
	if setup.Agent == nil {
		return fmt.Errorf("setup: entry agent without an agent object")
	}
	actx, cfg, _, err := r.build(setup)
	if err != nil {
		return err
	}
	ra := &refAgent{tools: map[string]*loop.Tool{}}
	for _, t := range actx.Tools {
		ra.tools[t.Name] = t
	}
	for _, ts := range setup.Tools {
		if ra.tools[ts.Name] == nil {
			ra.tools[ts.Name] = r.tool(ts)
		}
	}
	for _, b := range setup.Agent.Barriers {
		ra.barriers = append(ra.barriers, &refBarrier{BarrierSetup: b})
	}
	// pi's Agent has no static API key: the key is getApiKey's answer, else none.
	cfg.OnEvent, cfg.APIKey = nil, ""
	ra.a = agent.New(agent.Options{
		SystemPrompt:  setup.Agent.SystemPrompt,
		Tools:         actx.Tools,
		Messages:      actx.Messages,
		Model:         cfg.Model,
		ThinkingLevel: cfg.ThinkingLevel,
		SteeringMode:  loop.QueueMode(setup.Agent.SteeringMode),
		FollowUpMode:  loop.QueueMode(setup.Agent.FollowUpMode),
		Go: func(body func()) {
			r.sched.Go(func() {
				body()
				r.runOver()
			})
		},
		Loop: cfg,
	})
	ra.a.Subscribe(r.listen)
	r.agent = ra
	return nil
}

// listen is the session's one listener: it reports the event, then holds at a barrier until
// it is released, or ctx (pi: the signal the Agent gives its listeners) is done for a barrier
// held until the abort, or the session stops.
func (r *Reference) listen(ctx context.Context, e loop.Event) {
	r.event(&e)
	for _, b := range r.agent.barriers {
		if loop.EventType(b.Event) != e.Type {
			continue
		}
		b.seen++
		if b.seen != max(b.Nth, 1) {
			continue
		}
		b.held = true
		for b.held && !r.closed && !(b.UntilAbort && ctx.Err() != nil) {
			r.park(&b.waiter)
		}
		b.held = false
	}
}

// runOver reports the outcomes of a run that is over: its waitForIdle operations, then the
// prompt or continue that started it.
func (r *Reference) runOver() {
	ra := r.agent
	waiters, starter, op := ra.waiters, ra.starter, ra.starterOp
	ra.waiters, ra.starter, ra.starterOp = nil, "", ""
	for _, id := range waiters {
		r.report(Outcome{ID: id, Op: trace.OpWaitForIdle, Outcome: trace.OutcomeResolved})
	}
	if starter != "" {
		r.report(Outcome{ID: starter, Op: op, Outcome: trace.OutcomeResolved})
	}
}

func (r *Reference) report(o Outcome) { r.notify(NotifyOutcome, o) }

// operate carries out one operation delivery.
// Kept whole: one case per Agent operation, a table.
func (r *Reference) operate(d Delivery) error {
	ra := r.agent
	if ra == nil {
		return fmt.Errorf("an agent delivery in a session that is not an Agent session")
	}
	op, read := readOp(d.Data)
	if !read {
		var wire opJSON
		if err := json.Unmarshal(d.Data, &wire); err != nil {
			return fmt.Errorf("agent operation %s: %w", d.Target, err)
		}
		op = wire.decoded()
	}
	out := Outcome{ID: d.Target, Op: op.Op, Outcome: trace.OutcomeAccepted}
	refuse := func(err error) {
		out.Outcome, out.Error = trace.OutcomeRefused, err.Error()
	}
	message := func() (loop.Message, error) {
		if op.messageErr != nil {
			return nil, fmt.Errorf("agent operation %s: message: %w", d.Target, op.messageErr)
		}
		return op.message, nil
	}
	switch op.Op {
	case trace.OpPrompt, trace.OpContinue:
		var err error
		if op.Op == trace.OpPrompt {
			var msgs []loop.Message
			if !op.hasMessages {
				msgs = []loop.Message{agent.UserText(op.Text, r.now)}
			} else if msgs, err = op.messages, op.messagesErr; err != nil {
				return fmt.Errorf("agent operation %s: messages: %w", d.Target, err)
			}
			_, err = ra.a.StartPrompt(msgs...)
		} else {
			_, err = ra.a.StartContinue()
		}
		if err != nil {
			refuse(err)
			break
		}
		ra.starter, ra.starterOp = d.Target, op.Op
		out.Outcome = ""
	case trace.OpWaitForIdle:
		if !ra.a.IsIdle() {
			ra.waiters = append(ra.waiters, d.Target)
			out.Outcome = ""
			break
		}
		out.Outcome = trace.OutcomeResolved
	case trace.OpSteer, trace.OpFollowUp:
		m, err := message()
		if err != nil {
			return err
		}
		if op.Op == trace.OpSteer {
			ra.a.Steer(m)
		} else {
			ra.a.FollowUp(m)
		}
	case trace.OpAbort:
		ra.a.Abort()
	case trace.OpReset:
		if err := ra.a.Reset(); err != nil {
			refuse(err)
		}
	case trace.OpSetSteeringMode:
		ra.a.SetSteeringMode(loop.QueueMode(op.Mode))
	case trace.OpSetFollowUpMode:
		ra.a.SetFollowUpMode(loop.QueueMode(op.Mode))
	case trace.OpClearQueues:
		switch op.Queue {
		case "steering":
			ra.a.ClearSteeringQueue()
		case "followUp":
			ra.a.ClearFollowUpQueue()
		default:
			ra.a.ClearAllQueues()
		}
	case trace.OpSetTools:
		var tools []*loop.Tool
		for _, name := range op.Tools {
			if t := ra.tools[name]; t != nil {
				tools = append(tools, t)
			}
		}
		ra.a.SetTools(tools)
	case trace.OpState:
		out.State = r.agentState()
	case trace.OpRelease:
		i := slices.IndexFunc(ra.barriers, func(b *refBarrier) bool { return b.ID == op.Barrier && b.held })
		if i < 0 {
			refuse(fmt.Errorf("barrier %s is not held", op.Barrier))
			break
		}
		ra.barriers[i].held = false
		r.wake(&ra.barriers[i].waiter)
	default:
		return fmt.Errorf("agent operation %s: unknown op %q", d.Target, op.Op)
	}
	if out.Outcome != "" {
		r.report(out)
	}
	return nil
}

// opJSON is an operation's delivery data as encoding/json reads it.
type opJSON struct {
	opFields
	Messages []json.RawMessage `json:"messages"`
	Message  json.RawMessage   `json:"message"`
}

// operation is an operation's delivery data read: its fields, its messages and message
// decoded (or why not).
type operation struct {
	opFields
	// hasMessages: the data has a list of messages (not null).
	hasMessages bool
	messages    []loop.Message
	messagesErr error
	message     loop.Message
	messageErr  error
}

// errNoMessage is decoding's error for an operation without a message.
var errNoMessage = func() error {
	_, err := decodeMessages([]json.RawMessage{nil})
	return err
}()

// decoded is the operation of data read by encoding/json, its messages decoded.
func (o opJSON) decoded() operation {
	op := operation{opFields: o.opFields, hasMessages: o.Messages != nil}
	op.messages, op.messagesErr = decodeMessages(o.Messages)
	if msgs, err := decodeMessages([]json.RawMessage{o.Message}); err != nil {
		op.messageErr = err
	} else {
		op.message = msgs[0]
	}
	return op
}

// readOp reads an operation's delivery data by hand, as opJSON's decoded gives it; ok is false
// when the data is left to encoding/json: an unknown or repeated key (encoding/json matches
// keys in any case and keeps the last), null, a message loop.ReadMessage leaves.
func readOp(data []byte) (op operation, ok bool) {
	var r jsonvalue.Reader
	r.Reset(data)
	var seen jsonvalue.Seen
	ok = r.Object(func(key []byte) bool {
		var bit jsonvalue.Seen
		ok := false
		switch string(key) {
		case "op":
			bit = 1
			op.Op, ok = r.String()
		case "text":
			bit = 2
			op.Text, ok = r.String()
		case "mode":
			bit = 4
			op.Mode, ok = r.String()
		case "queue":
			bit = 8
			op.Queue, ok = r.String()
		case "barrier":
			bit = 16
			op.Barrier, ok = r.String()
		case "tools":
			bit = 32
			op.Tools = []string{}
			ok = r.Array(func() bool {
				t, ok := r.String()
				op.Tools = append(op.Tools, t)
				return ok
			})
		case "messages":
			bit = 64
			op.hasMessages, op.messages = true, []loop.Message{}
			ok = r.Array(func() bool {
				m, ok := loop.ReadMessage(&r)
				op.messages = append(op.messages, m)
				return ok
			})
		case "message":
			bit = 128
			op.message, ok = loop.ReadMessage(&r)
		}
		return seen.First(bit) && ok
	})
	if !ok || !r.Done() {
		return operation{}, false
	}
	if seen&128 == 0 {
		op.messageErr = errNoMessage
	}
	return op, true
}

// agentState is the Agent's observable state now.
func (r *Reference) agentState() *AgentState {
	a := r.agent.a
	st := a.State()
	return &AgentState{
		IsStreaming:       st.IsStreaming,
		Messages:          nonNilMessages(st.Messages),
		ErrorMessage:      st.ErrorMessage,
		PendingToolCalls:  append([]string{}, st.PendingToolCalls...),
		StreamingMessage:  st.StreamingMessage,
		Queued:            nonNilMessages(a.PeekQueuedMessages()),
		HasQueuedMessages: a.HasQueuedMessages(),
	}
}
