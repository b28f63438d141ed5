package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// The refusals of Continue, with pi's texts.
var (
	ErrContinueEmpty         = errors.New("Cannot continue: no messages in context")
	ErrContinueFromAssistant = errors.New("Cannot continue from message role: assistant")
)

// ErrNoStream is returned when Config.Stream is nil.
var ErrNoStream = errors.New("loop: Config.Stream is nil")

// Run starts a run with new prompt messages (pi's agentLoop): the prompts, preceded by a
// system message declaring the executable tools when the transcript does not, join the
// context, and the loop runs until nothing asks for another request. It returns the run's new
// messages. An error means the run failed before agent_end (a hook, the stream function or the
// stream failed); the events emitted so far stand.
func Run(ctx context.Context, prompts []Message, actx Context, cfg Config) ([]Message, error) {
	if cfg.Stream == nil {
		return nil, ErrNoStream
	}
	r := newRun(actx, cfg)
	initial := DeclareToolChanges(actx.Messages, executableDeclarations(actx.Tools), prompts, r.rt.Now())
	r.context.Messages = append(r.context.Messages, initial...)
	r.newMessages = append(r.newMessages, initial...)
	r.emit(Event{Type: AgentStart})
	r.emit(Event{Type: TurnStart})
	for _, m := range initial {
		r.emit(Event{Type: MessageStart, Message: m})
		r.emit(Event{Type: MessageEnd, Message: m})
	}
	if err := r.loop(ctx); err != nil {
		return r.newMessages, err
	}
	return r.newMessages, nil
}

// Continue resumes from the context without new messages (pi's agentLoopContinue), for
// retries: the last message must not be an assistant message. It refuses, before any event,
// an empty transcript (ErrContinueEmpty) or one ending with an assistant message
// (ErrContinueFromAssistant).
func Continue(ctx context.Context, actx Context, cfg Config) ([]Message, error) {
	if len(actx.Messages) == 0 {
		return nil, ErrContinueEmpty
	}
	if actx.Messages[len(actx.Messages)-1].Role() == "assistant" {
		return nil, ErrContinueFromAssistant
	}
	if cfg.Stream == nil {
		return nil, ErrNoStream
	}
	r := newRun(actx, cfg)
	r.emit(Event{Type: AgentStart})
	r.emit(Event{Type: TurnStart})
	if err := r.loop(ctx); err != nil {
		return r.newMessages, err
	}
	return r.newMessages, nil
}

// run is the state of one Run or Continue.
type run struct {
	cfg         Config
	rt          Runtime
	context     Context
	newMessages []Message
	turns       int
	emitMu      sync.Mutex
	validators  validatorCache
	// single is set for RunToolCall: the tools calls resolve against (pi: options.tools,
	// not the context's) and where updates go instead of events.
	single *singleCall
}

func newRun(actx Context, cfg Config) *run {
	rt := cfg.Runtime
	if rt == nil {
		rt = RealRuntime{}
	}
	if cfg.ThinkingLevel == ThinkingOff {
		cfg.ThinkingLevel = ""
	}
	return &run{
		cfg: cfg,
		rt:  rt,
		context: Context{
			Messages: slices.Clone(actx.Messages),
			Tools:    actx.Tools,
		},
	}
}

// emit delivers one event; tool executions running in parallel emit one at a time.
func (r *run) emit(e Event) {
	if r.cfg.OnEvent == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.cfg.OnEvent(e)
}

func (r *run) thinkingLevel() ThinkingLevel {
	if r.cfg.ThinkingLevel == "" {
		return ThinkingOff
	}
	return r.cfg.ThinkingLevel
}

// setThinkingLevel applies a hook's level: "" keeps, ThinkingOff clears.
func (r *run) setThinkingLevel(level ThinkingLevel) {
	switch level {
	case "":
	case ThinkingOff:
		r.cfg.ThinkingLevel = ""
	default:
		r.cfg.ThinkingLevel = level
	}
}

// snapshot is the context as hooks see it: appending to its messages never reaches the run.
func (r *run) snapshot() Context {
	return Context{Messages: clip(r.context.Messages), Tools: r.context.Tools}
}

func (r *run) turnContext(msg *AssistantMessage, results []*ToolResultMessage) TurnContext {
	return TurnContext{Message: msg, ToolResults: results, Context: r.snapshot(), NewMessages: clip(r.newMessages)}
}

// unsignalled is ctx as the loop gives it to a hook pi passes no abort signal (the queue
// polls, prepareNextTurn, convertToLlm, getApiKey): its values, not its cancellation.
func unsignalled(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

func (r *run) steering(ctx context.Context) ([]Message, error) {
	if r.cfg.GetSteeringMessages == nil {
		return nil, nil
	}
	m, err := r.cfg.GetSteeringMessages(unsignalled(ctx))
	if err != nil {
		return nil, hookError("getSteeringMessages", err)
	}
	return m, nil
}

// loop is pi's runLoop, shared by Run and Continue.
// Kept whole: pi's runLoop as one state machine, to be read side by side with pi's.
func (r *run) loop(ctx context.Context) error {
	var lastTurn *TurnContext
	explicitContinuation := false
	pending, err := r.steering(ctx) // poll A
	if err != nil {
		return err
	}
	for {
		hasMoreToolCalls := true
		for hasMoreToolCalls || len(pending) > 0 {
			var prepared []Message
			if lastTurn != nil {
				if r.cfg.PrepareNextTurn != nil {
					update, err := r.cfg.PrepareNextTurn(unsignalled(ctx), *lastTurn)
					if err != nil {
						return r.fail("prepareNextTurn", err)
					}
					if update != nil {
						if update.Context != nil {
							r.context = cloneContext(*update.Context)
						}
						prepared = update.Messages
						if update.Model != nil {
							r.cfg.Model = *update.Model
						}
						r.setThinkingLevel(update.ThinkingLevel)
					}
				}
				if len(pending) == 0 { // poll B
					if pending, err = r.steering(ctx); err != nil {
						return r.fail("", err)
					}
				}
				r.emit(Event{Type: TurnStart})
			}
			batch := append(slices.Clone(prepared), pending...)
			for _, m := range DeclareToolChanges(r.context.Messages, executableDeclarations(r.context.Tools), batch, r.rt.Now()) {
				r.emit(Event{Type: MessageStart, Message: m})
				r.emit(Event{Type: MessageEnd, Message: m})
				r.context.Messages = append(r.context.Messages, m)
				r.newMessages = append(r.newMessages, m)
			}
			pending = nil

			if r.cfg.PrepareRequest != nil {
				update, err := r.cfg.PrepareRequest(ctx, RequestState{Context: r.snapshot(), Model: r.cfg.Model, ThinkingLevel: r.thinkingLevel()})
				if err != nil {
					return r.fail("prepareRequest", err)
				}
				if update != nil {
					if update.Context != nil {
						r.context = cloneContext(*update.Context)
					}
					if update.Model != nil {
						r.cfg.Model = *update.Model
					}
					r.setThinkingLevel(update.ThinkingLevel)
				}
			}

			r.turns++
			msg, err := r.streamResponse(ctx)
			if err != nil {
				return r.fail("", err)
			}
			r.newMessages = append(r.newMessages, msg)

			if msg.StopReason == StopError || msg.StopReason == StopAborted {
				turn := r.turnContext(msg, nil)
				lastTurn = &turn
				if r.cfg.FinishTurn != nil {
					if _, err := r.cfg.FinishTurn(ctx, turn); err != nil {
						return r.fail("finishTurn", err)
					}
				}
				r.emit(Event{Type: TurnEnd, Message: msg, ToolResults: []*ToolResultMessage{}})
				r.emit(Event{Type: AgentEnd, Messages: r.newMessages})
				return nil
			}

			results := []*ToolResultMessage{}
			hasMoreToolCalls = false
			if calls := ToolCalls(msg.Content); len(calls) > 0 {
				var batch toolBatch
				if msg.StopReason == StopLength {
					batch = r.failTruncated(calls)
				} else if batch, err = r.executeToolCalls(ctx, msg, calls); err != nil {
					return r.fail("", err)
				}
				results = batch.messages
				hasMoreToolCalls = !batch.terminate
				for _, res := range results {
					r.context.Messages = append(r.context.Messages, res)
					r.newMessages = append(r.newMessages, res)
				}
			}

			turn := r.turnContext(msg, results)
			lastTurn = &turn
			decision := DecisionNone
			if r.cfg.FinishTurn != nil {
				if decision, err = r.cfg.FinishTurn(ctx, turn); err != nil {
					return r.fail("finishTurn", err)
				}
			}
			r.emit(Event{Type: TurnEnd, Message: msg, ToolResults: results})
			if decision == DecisionEnd {
				r.emit(Event{Type: AgentEnd, Messages: r.newMessages})
				return nil
			}
			explicitContinuation = decision == DecisionContinue
			if pending, err = r.steering(ctx); err != nil { // poll C
				return r.fail("", err)
			}
			if hasMoreToolCalls || len(pending) > 0 {
				explicitContinuation = false
			}
		}

		var followUps []Message
		if r.cfg.GetFollowUpMessages != nil {
			if followUps, err = r.cfg.GetFollowUpMessages(unsignalled(ctx)); err != nil {
				return r.fail("getFollowUpMessages", err)
			}
		}
		if len(followUps) > 0 {
			explicitContinuation = false
			pending = followUps
			continue
		}
		if explicitContinuation {
			explicitContinuation = false
			continue
		}
		break
	}
	r.emit(Event{Type: AgentEnd, Messages: r.newMessages})
	return nil
}

// fail wraps a run failure with the turn it happened in.
func (r *run) fail(hook string, err error) error {
	if hook != "" {
		err = hookError(hook, err)
	}
	return fmt.Errorf("turn %d: %w", max(r.turns, 1), err)
}

// HookError is a run failure caused by a hook, the stream function or the stream.
type HookError struct {
	// Hook names what failed, in pi's terms ("prepareRequest", "provider stream", …).
	Hook string
	Err  error
}

func (e *HookError) Error() string { return e.Hook + ": " + e.Err.Error() }

// Unwrap returns the hook's error.
func (e *HookError) Unwrap() error { return e.Err }

func hookError(hook string, err error) error {
	var he *HookError
	if errors.As(err, &he) {
		return err
	}
	return &HookError{Hook: hook, Err: err}
}

func cloneContext(c Context) Context {
	return Context{Messages: slices.Clone(c.Messages), Tools: c.Tools}
}

// clip limits a slice's capacity to its length, so a hook appending to it cannot overwrite
// the run's later messages.
func clip[T any](s []T) []T { return s[:len(s):len(s)] }
