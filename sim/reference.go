package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim/coop"
	"github.com/turnstile-dev/turnstile/trace"
)

// errSessionClosed is what blocked primitives return once the session is stopped.
var errSessionClosed = errors.New("the simulation session was stopped")

// Reference is the reference loop (package loop) as an Implementation, in-process. Its
// goroutines take turns on a cooperative scheduler, so it is idle exactly when every one of
// them waits for the world.
type Reference struct {
	sched   *coop.Scheduler
	port    Port
	now     int64
	cancel  context.CancelFunc
	streams map[string]*refStream
	calls   map[string]*refToolCall
	closed  bool
	// world is the port when it is the simulator's own world, which takes payloads as Go
	// values; nil for any other port.
	world *world
	// behaviour is the pi release the loop behaves as (loop.Config.Behaviour).
	behaviour loop.Behaviour
	// agent is the Agent of an Agent session.
	agent *refAgent
	// returns are the hook answers waiting for their hookReturn delivery, by its target; held
	// the hooks (and Agent listeners) waiting for the signal they were given.
	returns map[string]*refReturn
	held    []*refHeld
	// workers keeps the scheduler's idle coroutines from one run to the next (UseWorkers).
	workers *coop.Workers
	// streamRoom and callRoom are the chunks the streams and tool calls are taken from,
	// given to the next run once this one is stopped.
	streamRoom recycled[refStream]
	callRoom   recycled[refToolCall]
	// streamData is the room for a stream call's data, made once: the world reads it while
	// the call is made, and keeps nothing of it but its messages.
	streamData streamCall
	// wire writes the session's JSON when the port is not the world (wireJSON).
	wire *wireWriter
	// wireByReflection makes wireJSON and eventJSON use json.Marshal, for tests comparing
	// the two.
	wireByReflection bool
}

// UseWorkers has the reference's runs take their tasks' coroutines from ws and leave them
// there when each run ends, instead of starting new ones (nil: new ones, let go at the end).
// ws's owner drives every run from one goroutine and closes ws.
func (r *Reference) UseWorkers(ws *coop.Workers) { r.workers = ws }

// NewReference returns the reference implementation, ready to Start, behaving as the newest
// pi (loop.NewestVersion).
func NewReference() *Reference { return &Reference{} }

// NewReferenceWith returns the reference implementation behaving as b: a pi release
// (loop.BehaviourOf), or any set of changes (a mutant that lacks one).
func NewReferenceWith(b loop.Behaviour) *Reference { return &Reference{behaviour: b} }

// NewReferenceAt returns the reference implementation behaving as pi release version ("" for
// the newest); an error when the reference cannot behave as that version.
func NewReferenceAt(version string) (*Reference, error) {
	b, err := loop.BehaviourOf(version)
	if err != nil {
		return nil, err
	}
	return NewReferenceWith(b), nil
}

// Behaviour is the set of pi changes the reference behaves with.
func (r *Reference) Behaviour() loop.Behaviour { return r.behaviour }

// refStream is a stream on the implementation's side: the events delivered so far.
type refStream struct {
	r  *Reference
	id string
	// queue holds the events delivered and not read yet, from head on.
	queue  []loop.StreamEvent
	head   int
	ended  bool
	final  *loop.AssistantMessage
	err    error
	waiter *coop.Task
}

// refToolCall is a tool execution on the implementation's side.
type refToolCall struct {
	updates []loop.ToolResult
	settled bool
	result  loop.ToolResult
	err     error
	waiter  *coop.Task
}

// Start implements Implementation.
func (r *Reference) Start(setup Setup, port Port) error {
	w, _ := port.(*world)
	*r = Reference{sched: coop.NewWith(r.workers), port: port, streams: map[string]*refStream{}, calls: map[string]*refToolCall{}, world: w, behaviour: r.behaviour,
		returns: map[string]*refReturn{}, workers: r.workers, wireByReflection: r.wireByReflection}
	if setup.Entry == EntryAgent {
		if err := r.startAgent(setup); err != nil {
			return err
		}
		r.sched.RunUntilIdle()
		return nil
	}
	if setup.Entry == EntryRunToolCall {
		return r.startRunToolCall(setup)
	}
	actx, cfg, prompts, err := r.build(setup)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.sched.Go(func() {
		var (
			msgs []loop.Message
			err  error
		)
		if setup.Entry == "continue" {
			msgs, err = loop.Continue(ctx, actx, cfg)
		} else {
			msgs, err = loop.Run(ctx, prompts, actx, cfg)
		}
		if err != nil {
			r.notify(NotifyEnd, map[string]any{"error": rootCause(err).Error()})
			return
		}
		r.notify(NotifyEnd, map[string]any{"messages": nonNilMessages(msgs)})
	})
	r.sched.RunUntilIdle()
	return nil
}

// Deliver implements Implementation.
// Kept whole: one case per delivery kind, a table.
func (r *Reference) Deliver(d Delivery) error {
	r.now = d.Now
	switch d.Kind {
	case trace.DeliverAbort:
		if r.cancel != nil {
			r.cancel()
		}
	case trace.DeliverAgent:
		if err := r.operate(d); err != nil {
			return err
		}
	case trace.DeliverHookReturn:
		w := r.returns[d.Target]
		if w == nil {
			return fmt.Errorf("hookReturn for unknown hook wait %q", d.Target)
		}
		w.returned = true // a second time for a hook the abort let return first: no change
		r.wake(&w.waiter)
	case trace.DeliverStreamEvent, trace.DeliverStreamEnd, trace.DeliverStreamFail:
		s := r.streams[d.Target]
		if s == nil {
			return fmt.Errorf("delivery for unknown stream %q", d.Target)
		}
		switch d.Kind {
		case trace.DeliverStreamEvent:
			ev, ok := d.Value.(loop.StreamEvent)
			if !ok {
				if ev, ok = readStreamEvent(d.Data); !ok {
					var err error
					if ev, err = decodeStreamEvent(d.Data); err != nil {
						return err
					}
				}
			}
			return r.deliverEvent(d.Target, d.Now, &ev)
		case trace.DeliverStreamEnd:
			m, ok := readStreamEnd(d.Data)
			if !ok {
				var end streamEndJSON
				if err := json.Unmarshal(d.Data, &end); err != nil {
					return err
				}
				m = end.Message
			}
			s.ended, s.final = true, m
		case trace.DeliverStreamFail:
			var f struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(d.Data, &f)
			s.err = errors.New(f.Error)
		}
		r.wake(&s.waiter)
	case trace.DeliverToolUpdate, trace.DeliverToolResult:
		c := r.calls[d.Target]
		if c == nil {
			return fmt.Errorf("delivery for unknown tool call %q", d.Target)
		}
		if d.Kind == trace.DeliverToolUpdate {
			res, ok := d.Value.(loop.ToolResult)
			if !ok {
				if err := decodeToolResult(d.Data, &res); err != nil {
					return err
				}
			}
			c.updates = append(c.updates, res)
		} else if res, ok := d.Value.(loop.ToolResult); ok {
			c.settled, c.result = true, res
		} else {
			var out struct {
				Result  json.RawMessage `json:"result"`
				Error   string          `json:"error"`
				Nothing string          `json:"nothing"`
			}
			if err := json.Unmarshal(d.Data, &out); err != nil {
				return err
			}
			c.settled = true
			if out.Error != "" {
				c.err = errors.New(out.Error)
			} else if out.Nothing != "" {
				c.err = loop.Nothing{Null: out.Nothing == "null"}
			} else if err := decodeToolResult(out.Result, &c.result); err != nil {
				return err
			}
		}
		r.wake(&c.waiter)
	default:
		return fmt.Errorf("unknown delivery kind %q", d.Kind)
	}
	if d.Kind == trace.DeliverAbort || d.Kind == trace.DeliverAgent {
		r.wakeHeld() // the signal a held hook was given may have fired
	}
	r.sched.RunUntilIdle()
	return nil
}

// deliverEvent is Deliver of a stream event to stream target at virtual time now.
func (r *Reference) deliverEvent(target string, now int64, ev *loop.StreamEvent) error {
	r.now = now
	s := r.streams[target]
	if s == nil {
		return fmt.Errorf("delivery for unknown stream %q", target)
	}
	s.queue = append(s.queue, *ev)
	r.wake(&s.waiter)
	r.sched.RunUntilIdle()
	return nil
}

// Stop implements Implementation: blocked primitives fail, and the loop winds down.
func (r *Reference) Stop() error {
	if r.sched == nil {
		return nil
	}
	r.closed = true
	if r.cancel != nil {
		r.cancel()
	}
	if r.agent != nil {
		r.agent.a.Abort()
	}
	for r.sched.Live() > 0 {
		if r.agent != nil {
			for _, b := range r.agent.barriers {
				r.wake(&b.waiter)
			}
		}
		for _, s := range r.streams {
			r.wake(&s.waiter)
		}
		for _, c := range r.calls {
			r.wake(&c.waiter)
		}
		for _, w := range r.returns {
			r.wake(&w.waiter)
		}
		r.wakeHeld()
		r.sched.RunUntilIdle()
	}
	// No task is left to read the streams and tool calls: they go to the next run, and a
	// delivery now finds none.
	r.streams, r.calls = nil, nil
	r.streamRoom.recycle(&refStreamChunks)
	r.callRoom.recycle(&refToolCallChunks)
	return nil
}

// refStreamChunks and refToolCallChunks keep chunks of streams and tool calls from one run
// of a Reference to the next (any Reference's): a run opens a stream for each request.
var refStreamChunks, refToolCallChunks sync.Pool

func (r *Reference) wake(t **coop.Task) {
	if *t != nil {
		r.sched.Ready(*t)
		*t = nil
	}
}

// park blocks the running task until a delivery for it arrives.
func (r *Reference) park(t **coop.Task) {
	*t = r.sched.Current()
	r.sched.Park()
}

// Now implements loop.Runtime.
func (r *Reference) Now() int64 { return r.now }

// Monotonic implements loop.Runtime.
func (r *Reference) Monotonic() time.Duration { return time.Duration(r.now) * time.Millisecond }

// Parallel implements loop.Runtime: tasks take turns on the scheduler, started in order.
func (r *Reference) Parallel(tasks []func()) { r.sched.Wait(tasks) }

// call makes one call through the port.
func (r *Reference) call(kind, name string, data any) (json.RawMessage, error) {
	return r.callWith(context.Background(), kind, name, data)
}

// callHook makes a hook call, given ctx.
func (r *Reference) callHook(ctx context.Context, name string, data any) (json.RawMessage, error) {
	return r.callWith(ctx, trace.CallHook, name, data)
}

// callWith makes one call through the port; a hook's answer that waits (a delay, or the
// abort of ctx) is returned once the wait is over.
func (r *Reference) callWith(ctx context.Context, kind, name string, data any) (json.RawMessage, error) {
	c := Call{Kind: kind, Name: name, Value: data}
	if r.world == nil {
		raw, err := r.wireJSON(data)
		if err != nil {
			return nil, err
		}
		c = Call{Kind: kind, Name: name, Data: raw}
	}
	a := r.port.Call(c)
	if a.Abort {
		// An abort while the hook runs, before it returns: the loop's run, or in an Agent
		// session the Agent's active run (PROTOCOL.md §13.5).
		switch {
		case r.agent != nil:
			r.agent.a.Abort()
		case r.cancel != nil:
			r.cancel()
		}
		r.wakeHeld()
	}
	if err := r.awaitReturn(ctx, a); err != nil {
		return nil, err
	}
	if a.Error != "" {
		return nil, errors.New(a.Error)
	}
	return a.Data, nil
}

// hook calls a hook, given ctx (pi: the signal it passes the hook, none when ctx cannot be
// cancelled), and decodes its answer into out.
func (r *Reference) hook(ctx context.Context, name string, data any, out any) error {
	raw, err := r.callHook(ctx, name, data)
	if err != nil {
		return err
	}
	return decodeAnswer(name, raw, out)
}

// decodeAnswer decodes hook name's answer into out (nil: nothing is read of it).
func decodeAnswer(name string, raw json.RawMessage, out any) error {
	if out == nil || len(raw) == 0 {
		return nil
	}
	if v := reflect.ValueOf(out); string(raw) == "{}" && v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		return nil // no change, the commonest answer: what decoding it into a struct does
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s answer: %w", name, err)
	}
	return nil
}

// Next implements loop.AssistantStream: the next event queued, else one the task takes from
// the world itself (releaseEventFor), else it waits for a delivery.
func (s *refStream) Next(context.Context) (loop.StreamEvent, bool, error) {
	for {
		switch {
		case s.head < len(s.queue):
			ev := s.queue[s.head]
			s.queue[s.head] = loop.StreamEvent{}
			if s.head++; s.head == len(s.queue) { // read up: the next events reuse the array
				s.queue, s.head = s.queue[:0], 0
			}
			s.noteEnd(&ev)
			return ev, true, nil
		case s.err != nil:
			return loop.StreamEvent{}, false, s.err
		case s.ended:
			return loop.StreamEvent{}, false, nil
		case s.r.closed:
			return loop.StreamEvent{}, false, errSessionClosed
		}
		// Parked, this task would hand the turn to the world, which would release its next
		// happening and, were it this stream's event, hand the turn back at once: when that
		// is so, the task takes the event itself (world.releaseEventFor).
		if s.r.world != nil && s.r.sched.Alone() {
			if d := s.r.world.releaseEventFor(s.r, s.id); d != nil {
				// The queue is read up: the event is the next, returned without queueing it.
				s.r.now = d.delivery.Now
				s.noteEnd(d.event)
				return *d.event, true, nil
			}
		}
		s.r.park(&s.waiter)
	}
}

// noteEnd notes the stream's end when ev, the next event returned, is its last.
func (s *refStream) noteEnd(ev *loop.StreamEvent) {
	if ev.Type == loop.StreamDone || ev.Type == loop.StreamError {
		s.ended, s.final = true, ev.Message
	}
}

// Result implements loop.AssistantStream.
func (s *refStream) Result(context.Context) (*loop.AssistantMessage, error) {
	if s.final == nil {
		return nil, errors.New("the stream ended without a final message")
	}
	return s.final, nil
}

// streamEndJSON is a streamEnd delivery's data as encoding/json reads it.
type streamEndJSON struct {
	Message *loop.AssistantMessage `json:"message"`
}

// readStreamEnd reads a streamEnd delivery's data by hand, as encoding/json reads it into
// streamEndJSON; ok is false when it is left to encoding/json (another key, a message that
// loop.ReadMessage leaves or that is not an assistant's).
func readStreamEnd(data []byte) (m *loop.AssistantMessage, ok bool) {
	var r jsonvalue.Reader
	r.Reset(data)
	seen := false
	ok = r.Object(func(key []byte) bool {
		if string(key) != "message" || seen {
			return false
		}
		seen = true
		m, ok = readAssistant(&r)
		return ok
	})
	if !ok || !r.Done() {
		return nil, false
	}
	return m, true
}

func decodeStreamEvent(data []byte) (loop.StreamEvent, error) {
	var ev loop.StreamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return ev, fmt.Errorf("stream event: %w", err)
	}
	return ev, nil
}

// decodeToolResult reads a tool result, with its content blocks.
func decodeToolResult(data []byte, out *loop.ToolResult) error {
	return json.Unmarshal(data, out)
}

// notify sends a notification, as a value to the world and as JSON to any other port.
func (r *Reference) notify(kind string, v any) {
	if r.world != nil {
		r.port.Notify(Notification{Kind: kind, Value: v})
		return
	}
	data, err := r.wireJSON(v)
	if err != nil {
		panic(err)
	}
	r.port.Notify(Notification{Kind: kind, Data: data})
}

// event reports a loop event: to the world as it is, to any other port as JSON.
func (r *Reference) event(e *loop.Event) {
	if r.world != nil {
		r.world.event(e)
		return
	}
	data, err := r.eventJSON(e)
	if err != nil {
		panic(err)
	}
	r.port.Notify(Notification{Kind: NotifyEvent, Data: data})
}

// rootCause is the innermost error: the hook's or stream's own failure, whose text is what
// a throwing JavaScript hook would reject the run with.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
