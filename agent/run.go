package agent

import (
	"context"
	"errors"
	"slices"

	"github.com/turnstile-dev/turnstile/loop"
)

// UserText is the user message Prompt makes of a text (pi's normalizePromptInput): one text
// block, stamped now.
func UserText(text string, now int64) *loop.UserMessage {
	return &loop.UserMessage{Blocks: []loop.Block{loop.TextContent{Text: text}}, Timestamp: now}
}

// Prompt runs the loop with the messages as prompts and returns when the run is over, or
// refuses with ErrBusyPrompt.
func (a *Agent) Prompt(messages ...loop.Message) error {
	run, err := a.StartPrompt(messages...)
	if err != nil {
		return err
	}
	run.Wait()
	return nil
}

// PromptText prompts with one user message holding the text.
func (a *Agent) PromptText(text string) error {
	return a.Prompt(UserText(text, a.rt.Now()))
}

// StartPrompt is Prompt returning as soon as the run is active: everything pi's prompt does
// before its first await has happened (the refusal check, the context snapshot).
func (a *Agent) StartPrompt(messages ...loop.Message) (*Run, error) {
	a.mu.Lock()
	if a.active != nil {
		a.mu.Unlock()
		return nil, ErrBusyPrompt
	}
	run, launch := a.startLocked(slices.Clone(messages), false, false)
	a.mu.Unlock()
	launch()
	return run, nil
}

// Continue resumes from the transcript and returns when the run is over. From a transcript
// ending with an assistant message, queued steering becomes the prompt (one or all by mode,
// and the run's first steering poll is skipped), else queued follow-ups do; with both queues
// empty it refuses with ErrContinueFromAssistant. It refuses with ErrBusyContinue while a run
// is active and with ErrNothingToContinue when the transcript holds only system messages.
func (a *Agent) Continue() error {
	run, err := a.StartContinue()
	if err != nil {
		return err
	}
	run.Wait()
	return nil
}

// StartContinue is Continue returning as soon as the run is active.
func (a *Agent) StartContinue() (*Run, error) {
	a.mu.Lock()
	run, launch, err := a.continueLocked()
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	launch()
	return run, nil
}

func (a *Agent) continueLocked() (*Run, func(), error) {
	if a.active != nil {
		return nil, nil, ErrBusyContinue
	}
	msgs := a.state.Messages
	if len(msgs) == 0 || !slices.ContainsFunc(msgs, func(m loop.Message) bool { return m.Role() != "system" }) {
		return nil, nil, ErrNothingToContinue
	}
	if msgs[len(msgs)-1].Role() == "assistant" {
		if steering := a.steering.Drain(); len(steering) > 0 {
			run, launch := a.startLocked(steering, true, false)
			return run, launch, nil
		}
		if followUps := a.followUp.Drain(); len(followUps) > 0 {
			run, launch := a.startLocked(followUps, false, false)
			return run, launch, nil
		}
		return nil, nil, ErrContinueFromAssistant
	}
	run, launch := a.startLocked(nil, false, true)
	return run, launch, nil
}

// startLocked is pi's runWithLifecycle up to its first await: the run becomes active, the
// context and the loop config are snapshotted. launch, called without the lock, hands the
// run to Options.Go.
func (a *Agent) startLocked(prompts []loop.Message, skipInitialSteeringPoll, resume bool) (run *Run, launch func()) {
	ctx, cancel := context.WithCancel(context.Background())
	run = &Run{done: make(chan struct{}), ctx: ctx, cancel: cancel}
	a.active = run
	a.state.IsStreaming = true
	a.state.StreamingMessage = nil
	a.state.ErrorMessage = ""
	actx := loop.Context{Messages: slices.Clone(a.state.Messages), Tools: slices.Clone(a.state.Tools)}
	cfg := a.loopConfig(run, skipInitialSteeringPoll)
	model := a.state.Model
	body := func() {
		defer cancel()
		var err error
		if resume {
			_, err = loop.Continue(ctx, actx, cfg)
		} else {
			_, err = loop.Run(ctx, prompts, actx, cfg)
		}
		if err != nil {
			a.handleRunFailure(run, model, err)
		}
		a.finishRun(run)
	}
	return run, func() { a.spawn(body) }
}

func (a *Agent) loopConfig(run *Run, skipInitialSteeringPoll bool) loop.Config {
	cfg := a.cfg
	cfg.Model = a.state.Model
	cfg.ThinkingLevel = a.state.ThinkingLevel
	cfg.Runtime = a.rt
	cfg.OnEvent = func(e loop.Event) { a.processEvent(run, e) }
	skip := skipInitialSteeringPoll
	cfg.GetSteeringMessages = func(context.Context) ([]loop.Message, error) {
		if skip {
			skip = false
			return nil, nil
		}
		return a.steering.Drain(), nil
	}
	cfg.GetFollowUpMessages = func(context.Context) ([]loop.Message, error) {
		return a.followUp.Drain(), nil
	}
	if prepare := cfg.PrepareNextTurn; prepare != nil {
		// pi's Agent passes prepareNextTurn its active run's signal, which the loop does not.
		cfg.PrepareNextTurn = func(_ context.Context, turn loop.TurnContext) (*loop.TurnUpdate, error) {
			return prepare(run.ctx, turn)
		}
	}
	return cfg
}

// handleRunFailure ends a failed run with pi's synthetic error turn.
func (a *Agent) handleRunFailure(run *Run, model loop.Model, err error) {
	stop := loop.StopError
	if run.ctx.Err() != nil {
		stop = loop.StopAborted
	}
	msg := &loop.AssistantMessage{
		Content:      []loop.Block{loop.TextContent{Text: ""}},
		API:          model.API,
		Provider:     model.Provider,
		Model:        model.ID,
		Usage:        loop.Usage{},
		StopReason:   stop,
		ErrorMessage: failureText(err),
		Timestamp:    a.rt.Now(),
	}
	a.processEvent(run, loop.Event{Type: loop.MessageStart, Message: msg})
	a.processEvent(run, loop.Event{Type: loop.MessageEnd, Message: msg})
	a.processEvent(run, loop.Event{Type: loop.TurnEnd, Message: msg, ToolResults: []*loop.ToolResultMessage{}})
	a.processEvent(run, loop.Event{Type: loop.AgentEnd, Messages: []loop.Message{msg}})
}

// failureText is the message of what pi would have thrown: the hook's or stream's own error,
// without the loop's context.
func failureText(err error) string {
	var he *loop.HookError
	if errors.As(err, &he) {
		return he.Err.Error()
	}
	return err.Error()
}

func (a *Agent) finishRun(run *Run) {
	a.mu.Lock()
	a.state.IsStreaming = false
	a.state.StreamingMessage = nil
	a.state.PendingToolCalls = nil
	a.active = nil
	a.mu.Unlock()
	close(run.done)
}

// processEvent reduces the state for one event, then delivers it to each listener in turn.
func (a *Agent) processEvent(run *Run, e loop.Event) {
	a.mu.Lock()
	switch e.Type {
	case loop.MessageStart, loop.MessageUpdate:
		a.state.StreamingMessage = e.Message
	case loop.MessageEnd:
		a.state.StreamingMessage = nil
		a.state.Messages = append(a.state.Messages, e.Message)
	case loop.ToolExecutionStart:
		a.state.PendingToolCalls = append(slices.Clone(a.state.PendingToolCalls), e.ToolCallID)
	case loop.ToolExecutionEnd:
		a.state.PendingToolCalls = slices.DeleteFunc(slices.Clone(a.state.PendingToolCalls), func(id string) bool { return id == e.ToolCallID })
	case loop.TurnEnd:
		if m, ok := e.Message.(*loop.AssistantMessage); ok && m.ErrorMessage != "" {
			a.state.ErrorMessage = m.ErrorMessage
		}
	case loop.AgentEnd:
		a.state.StreamingMessage = nil
	}
	a.mu.Unlock()
	last := 0
	for {
		fn, seq := a.nextListener(last)
		if fn == nil {
			return
		}
		last = seq
		fn(run.ctx, e)
	}
}

// nextListener is the first listener subscribed after seq.
func (a *Agent) nextListener(seq int) (Listener, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.listeners {
		if s.seq > seq {
			return s.fn, s.seq
		}
	}
	return nil, 0
}
