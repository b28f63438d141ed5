package agent

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/turnstile-dev/turnstile/loop"
)

// The refusals, with pi's texts. A refused call changes nothing: no event, and the queues keep
// their messages.
var (
	// ErrBusyPrompt refuses Prompt while a run is active.
	ErrBusyPrompt = errors.New("Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.")
	// ErrBusyContinue refuses Continue while a run is active.
	ErrBusyContinue = errors.New("Agent is already processing. Wait for completion before continuing.")
	// ErrBusyReset refuses Reset while a run is active.
	ErrBusyReset = errors.New("Agent is already processing. Wait for completion before resetting.")
	// ErrNothingToContinue refuses Continue on a transcript without a non-system message.
	ErrNothingToContinue = errors.New("No messages to continue from")
	// ErrContinueFromAssistant refuses Continue from an assistant message when both queues
	// are empty.
	ErrContinueFromAssistant = errors.New("Cannot continue from message role: assistant")
)

// DefaultModel is the model of an Agent given none (pi's DEFAULT_MODEL).
var DefaultModel = loop.Model{ID: "unknown", Name: "unknown", API: "unknown", Provider: "unknown"}

// Options configure a new Agent.
type Options struct {
	// SystemPrompt and Tools make the initial system message, put first in Messages unless
	// Messages already starts with a system message.
	SystemPrompt string
	Tools        []*loop.Tool
	Messages     []loop.Message
	// Model is the model of every run; the zero Model means DefaultModel.
	Model loop.Model
	// ThinkingLevel is the requested reasoning level; "" means ThinkingOff.
	ThinkingLevel loop.ThinkingLevel
	// SteeringMode and FollowUpMode are the queue modes; "" means OneAtATime.
	SteeringMode loop.QueueMode
	FollowUpMode loop.QueueMode
	// Go starts a run's body; nil means a new goroutine. A simulator passes its scheduler's
	// spawn, so that the run takes turns with its other tasks; a Go that runs the body before
	// returning makes StartPrompt and StartContinue return once the run is over.
	Go func(body func())
	// Loop holds the stream function, the runtime, the tool execution mode and the hooks
	// every run gets. Its Model, ThinkingLevel, OnEvent, GetSteeringMessages and
	// GetFollowUpMessages are ignored: the Agent supplies them.
	Loop loop.Config
}

// Listener sees one event. ctx is the run's: it is cancelled by Abort. The run waits for the
// listener to return.
type Listener func(ctx context.Context, e loop.Event)

// State is a snapshot of what the Agent exposes (pi's agent.state).
type State struct {
	// SystemPrompt is the current system prompt (pi-ai's getCurrentSystemPrompt).
	SystemPrompt  string
	Model         loop.Model
	ThinkingLevel loop.ThinkingLevel
	Tools         []*loop.Tool
	Messages      []loop.Message
	// IsStreaming is true from the start of a run until its last listener has returned.
	IsStreaming bool
	// StreamingMessage is the message between its message_start and message_end, if any.
	StreamingMessage loop.Message
	// PendingToolCalls are the ids of the tool calls between tool_execution_start and _end,
	// in the order they started.
	PendingToolCalls []string
	// ErrorMessage is the last errorMessage of a turn's assistant message, cleared when a run
	// starts and by Reset.
	ErrorMessage string
}

// Agent is pi's stateful Agent. Its methods are safe for concurrent use; listeners may call
// them (Steer, FollowUp, Abort, State, …) while the run waits for them.
type Agent struct {
	mu        sync.Mutex
	state     State
	cfg       loop.Config
	rt        loop.Runtime
	steering  *loop.Queue
	followUp  *loop.Queue
	listeners []*subscription
	nextSub   int
	active    *Run
	spawn     func(func())
}

type subscription struct {
	seq int
	fn  Listener
}

// Run is an active run, as Start returns it.
type Run struct {
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

// Done is closed when the run is over: agent_end's listeners have returned and the Agent is
// idle.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait blocks until the run is over.
func (r *Run) Wait() { <-r.done }

// New returns an idle Agent.
func New(opts Options) *Agent {
	rt := opts.Loop.Runtime
	if rt == nil {
		rt = loop.RealRuntime{}
	}
	messages := slices.Clone(opts.Messages)
	if len(messages) == 0 || messages[0].Role() != "system" {
		if m := initialSystemMessage(opts.SystemPrompt, opts.Tools); m != nil {
			messages = append([]loop.Message{m}, messages...)
		}
	}
	spawn := opts.Go
	if spawn == nil {
		spawn = func(body func()) { go body() }
	}
	if opts.Model == (loop.Model{}) {
		opts.Model = DefaultModel
	}
	level := opts.ThinkingLevel
	if level == "" {
		level = loop.ThinkingOff
	}
	return &Agent{
		state: State{
			Model: opts.Model, ThinkingLevel: level,
			Tools: slices.Clone(opts.Tools), Messages: messages,
		},
		cfg:      opts.Loop,
		rt:       rt,
		steering: loop.NewQueue(opts.SteeringMode),
		followUp: loop.NewQueue(opts.FollowUpMode),
		spawn:    spawn,
	}
}

// Subscribe adds a listener after the others; the returned function removes it. A listener
// added while an event is being delivered sees that event too, one removed before its turn
// does not (JavaScript Set iteration, as pi's).
func (a *Agent) Subscribe(l Listener) (unsubscribe func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextSub++
	sub := &subscription{seq: a.nextSub, fn: l}
	a.listeners = append(a.listeners, sub)
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.listeners = slices.DeleteFunc(a.listeners, func(s *subscription) bool { return s == sub })
	}
}

// State returns a snapshot of the Agent's state.
func (a *Agent) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.state
	s.Messages = slices.Clone(s.Messages)
	s.Tools = slices.Clone(s.Tools)
	s.PendingToolCalls = slices.Clone(s.PendingToolCalls)
	if m := CurrentSystemMessage(s.Messages); m != nil {
		s.SystemPrompt = systemText(m)
	}
	return s
}

// systemText is pi-ai's getSystemMessageText: the content and the sections, non-empty parts
// joined by a blank line. Go maps are unordered: sections are taken in name order.
func systemText(m *loop.SystemMessage) string {
	parts := []string{}
	if t := contentText(m); t != "" {
		parts = append(parts, t)
	}
	names := make([]string, 0, len(m.Sections))
	for name := range m.Sections {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if v := m.Sections[name]; v != nil && *v != "" {
			parts = append(parts, *v)
		}
	}
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "\n\n"
		}
		out += p
	}
	return out
}

// SetTools replaces the executable tools; the next run declares the difference.
func (a *Agent) SetTools(tools []*loop.Tool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state.Tools = slices.Clone(tools)
}

// SetMessages replaces the transcript.
func (a *Agent) SetMessages(messages []loop.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state.Messages = slices.Clone(messages)
}

// SetModel replaces the model for later runs.
func (a *Agent) SetModel(m loop.Model) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state.Model = m
}

// SetThinkingLevel replaces the reasoning level for later runs; "" means ThinkingOff.
func (a *Agent) SetThinkingLevel(level loop.ThinkingLevel) {
	if level == "" {
		level = loop.ThinkingOff
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state.ThinkingLevel = level
}

// SteeringMode is the steering queue's mode.
func (a *Agent) SteeringMode() loop.QueueMode { return a.steering.Mode() }

// SetSteeringMode changes how later polls drain the steering queue.
func (a *Agent) SetSteeringMode(mode loop.QueueMode) { a.steering.SetMode(mode) }

// FollowUpMode is the follow-up queue's mode.
func (a *Agent) FollowUpMode() loop.QueueMode { return a.followUp.Mode() }

// SetFollowUpMode changes how later polls drain the follow-up queue.
func (a *Agent) SetFollowUpMode(mode loop.QueueMode) { a.followUp.SetMode(mode) }

// Steer queues a message for the active run's next steering poll (or a later run's).
func (a *Agent) Steer(m loop.Message) { a.steering.Enqueue(m) }

// FollowUp queues a message to run when the agent would otherwise stop.
func (a *Agent) FollowUp(m loop.Message) { a.followUp.Enqueue(m) }

// ClearSteeringQueue drops every queued steering message.
func (a *Agent) ClearSteeringQueue() { a.steering.Clear() }

// ClearFollowUpQueue drops every queued follow-up message.
func (a *Agent) ClearFollowUpQueue() { a.followUp.Clear() }

// ClearAllQueues drops every queued message.
func (a *Agent) ClearAllQueues() {
	a.steering.Clear()
	a.followUp.Clear()
}

// HasQueuedMessages reports whether either queue holds a message.
func (a *Agent) HasQueuedMessages() bool { return a.steering.Len() > 0 || a.followUp.Len() > 0 }

// QueueLengths are the numbers of queued steering and follow-up messages.
func (a *Agent) QueueLengths() (steering, followUp int) { return a.steering.Len(), a.followUp.Len() }

// PeekQueuedMessages are the messages the next poll would take: steering's if any, else
// follow-up's; nothing is consumed.
func (a *Agent) PeekQueuedMessages() []loop.Message {
	if s := a.steering.Peek(); len(s) > 0 {
		return s
	}
	return a.followUp.Peek()
}

// Abort cancels the active run, if any.
func (a *Agent) Abort() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		a.active.cancel()
	}
}

// IsIdle reports whether no run is active.
func (a *Agent) IsIdle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.active == nil
}

// WaitForIdle waits until the run active at the call, if any, is over, or ctx is done.
func (a *Agent) WaitForIdle(ctx context.Context) error {
	a.mu.Lock()
	run := a.active
	a.mu.Unlock()
	if run == nil {
		return nil
	}
	select {
	case <-run.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reset clears the transcript down to its replayed system message, the queues and the error,
// or refuses with ErrBusyReset while a run is active.
func (a *Agent) Reset() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		return ErrBusyReset
	}
	baseline := CurrentSystemMessage(a.state.Messages)
	a.state.Messages = nil
	if baseline != nil {
		a.state.Messages = []loop.Message{baseline}
	}
	a.state.IsStreaming = false
	a.state.StreamingMessage = nil
	a.state.PendingToolCalls = nil
	a.state.ErrorMessage = ""
	a.ClearAllQueues()
	return nil
}
