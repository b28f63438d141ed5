package sim

import (
	"fmt"
	"slices"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/trace"
)

// Run simulates the scenario against impl and returns its trace, in memory of its own (RunIn
// writes it in the room another trace left). The trace is returned even on error; an error
// means the implementation broke the port's contract (or the scenario could not be set up),
// not that the loop misbehaved — misbehaviour shows in the trace — or, as a *BudgetError,
// that the run was stopped by its budget (the trace ends with the same verdict).
func Run(sc *Scenario, impl Implementation) (*trace.Trace, error) { return run(sc, impl, false) }

// run is Run; inFull makes the world write every entry in full (tests of the linear form).
func run(sc *Scenario, impl Implementation, inFull bool) (*trace.Trace, error) {
	return newWorld(sc).run(impl, inFull)
}

// run runs the world's scenario against impl, and gives what the next run can reuse to it.
func (w *world) run(impl Implementation, inFull bool) (*trace.Trace, error) {
	defer w.recycle()
	return w.play(impl, inFull)
}

// play runs the world's scenario against impl.
func (w *world) play(impl Implementation, inFull bool) (*trace.Trace, error) {
	sc := w.sc
	size := min(expectedEntries(sc), w.budget.Entries) + 1 // +1: the budget's verdict
	if w.room != nil {
		w.trace.Entries = w.room.entriesFor(size)
		defer func() {
			w.room.kept(w.trace.Entries)
			// The room's spare entries are not the caller's: an append to the trace copies.
			w.trace.Entries = slices.Clip(w.trace.Entries)
		}()
	} else {
		w.trace.Entries = make([]trace.Entry, 0, size)
	}
	w.enc.entries = &w.trace.Entries
	ref, _ := impl.(*Reference)
	w.valuesOnly, w.ref = ref != nil, ref
	if !w.valuesOnly { // only Due reads it, which promises nothing to the in-process reference
		w.abortsInHooks = slices.Contains(NeededFeatures(sc), FeatureAbortInHook)
	}
	w.lin.inFull = inFull
	setup, err := w.setup()
	if err != nil {
		return &w.trace, err
	}
	if setup.Agent != nil {
		// The Agent's configuration opens the trace: its queue modes are what the Agent
		// invariants judge its polls by.
		w.record(trace.Entry{Kind: trace.KindUser, Name: trace.UserAgentEntry, Data: w.enc.valueBytes(setup.Agent)})
	}
	// Actions at virtual time 0 happen before the run starts (a queue filled in advance).
	w.performDue(0)
	if err := impl.Start(setup, w); err != nil {
		w.closed = true
		_ = impl.Stop()
		return &w.trace, fmt.Errorf("scenario %s: start: %w", sc.Name, err)
	}
	for !w.ended && w.over == nil {
		s, ok := w.next()
		if !ok && w.agent != nil {
			if w.finishAgent() {
				continue
			}
			break
		}
		if !ok {
			w.fail("stuck", "the implementation waits for something that was never scheduled")
			break
		}
		if s.at > w.budget.Time {
			w.exceed("time", fmt.Sprintf("the run's next happening is at %sms of virtual time; budget %sms", thousands(s.at), thousands(w.budget.Time)))
			break
		}
		w.now = s.at
		if s.internal != nil {
			s.internal()
			continue
		}
		w.release(s)
		// s's slot may be reused by a later delivery of its stream while this one is taken.
		kind, at := s.delivery.Kind, s.at
		var err error
		if s.event != nil && ref != nil && ref.world == w {
			err = ref.deliverEvent(s.delivery.Target, s.delivery.Now, s.event) // the event as it is, not boxed
		} else {
			err = impl.Deliver(s.valueFor())
		}
		if err != nil {
			w.closed = true
			_ = impl.Stop()
			return &w.trace, fmt.Errorf("scenario %s: delivery %s at %dms: %w", sc.Name, kind, at, err)
		}
	}
	w.closed = true
	for i, fired := range w.fired {
		if !fired {
			w.trace.Unfired = append(w.trace.Unfired, i)
		}
	}
	if err := impl.Stop(); err != nil {
		return &w.trace, fmt.Errorf("scenario %s: stop: %w", sc.Name, err)
	}
	if w.over != nil {
		return &w.trace, w.over
	}
	return &w.trace, nil
}

// expectedEntries guesses how many entries the scenario's trace will hold, so that the trace
// grows without copying its entries again and again: for each response, the request, its
// queue polls, its start and done and the turn's and message's events (and one to spare), and
// per block its deliveries and events (a tool call's execution too), plus each hook installed;
// some for the run. A run holds more when the loop asks for more than the script has, or fewer when it
// stops early.
func expectedEntries(sc *Scenario) int {
	hooks := 0
	for _, h := range sc.Hooks.installed() {
		if h.on && h.name != trace.HookSteering && h.name != trace.HookFollowUp {
			hooks++
		}
	}
	n := 16 + 8*len(sc.User)
	for i := range sc.Responses {
		r := &sc.Responses[i]
		n += 10 + hooks
		for _, b := range r.Content {
			switch x := b.(type) {
			case loop.ToolCall:
				n += 12 + hooks
			case loop.TextContent:
				n += 4 + 2*pieces(x.Text, r.DeltaSize)
			case loop.ThinkingContent:
				n += 4 + 2*pieces(x.Thinking, r.DeltaSize)
			}
		}
	}
	return min(n, 1<<16) // beyond, growing costs little against the run
}

// expectedMessages guesses how many messages the scenario's transcript will hold: its
// prompts and messages, and for each response the assistant's message and a tool result for
// each of its tool calls; some to spare.
func expectedMessages(sc *Scenario) int {
	n := len(sc.Prompts) + len(sc.Messages) + 4
	for i := range sc.Responses {
		n++
		for _, b := range sc.Responses[i].Content {
			if _, ok := b.(loop.ToolCall); ok {
				n++
			}
		}
	}
	return n
}

// RunFull is Run with every entry written in full, no entry linked: the trace the linear form
// stands for (Link), for checking that form.
func RunFull(sc *Scenario, impl Implementation) (*trace.Trace, error) { return run(sc, impl, true) }
