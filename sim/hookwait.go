package sim

import (
	"context"
	"slices"

	"github.com/turnstile-dev/turnstile/sim/coop"
)

// The reference's side of hook answers that wait (feature waitingHooks): an answer with a
// Wait is returned at its hookReturn delivery; one with UntilAbort once the context the loop
// gave the hook is done, which for a hook pi passes no signal is never.

// refReturn is a hook answer waiting for its hookReturn delivery.
type refReturn struct {
	returned bool
	waiter   *coop.Task
}

// refHeld is a hook waiting for its context to be done: where its task is parked.
type refHeld struct {
	waiter **coop.Task
}

// awaitReturn blocks the running task until answer a may be returned, given ctx.
func (r *Reference) awaitReturn(ctx context.Context, a Answer) error {
	switch {
	case a.Wait != "" && a.UntilAbort:
		// The first of the delivery and the abort; the delivery, if it comes later, finds
		// the wait returned (kept, so that it is known).
		w := &refReturn{}
		r.returns[a.Wait] = w
		h := &refHeld{waiter: &w.waiter}
		r.held = append(r.held, h)
		for !w.returned && ctx.Err() == nil && !r.closed {
			r.park(&w.waiter)
		}
		w.returned = true
		r.held = slices.DeleteFunc(r.held, func(x *refHeld) bool { return x == h })
	case a.Wait != "":
		w := &refReturn{}
		r.returns[a.Wait] = w
		for !w.returned && !r.closed {
			r.park(&w.waiter)
		}
	case a.UntilAbort:
		r.holdUntilDone(ctx)
	}
	if r.closed {
		return errSessionClosed
	}
	return nil
}

// holdUntilDone blocks the running task until ctx is done or the session is stopped.
func (r *Reference) holdUntilDone(ctx context.Context) {
	var waiter *coop.Task
	h := &refHeld{waiter: &waiter}
	r.held = append(r.held, h)
	for ctx.Err() == nil && !r.closed {
		r.park(&waiter)
	}
	r.held = slices.DeleteFunc(r.held, func(x *refHeld) bool { return x == h })
}

// wakeHeld wakes every held task, to look at its context again: called when a signal may have
// fired (an abort, an Agent operation, a hook's abort) and at the stop.
func (r *Reference) wakeHeld() {
	for _, h := range r.held {
		r.wake(h.waiter)
	}
	if r.agent != nil {
		for _, b := range r.agent.barriers {
			if b.UntilAbort && b.held {
				r.wake(&b.waiter)
			}
		}
	}
}
