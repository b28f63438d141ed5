package sim

import (
	"slices"

	"github.com/turnstile-dev/turnstile/trace"
)

// Ahead is offered by the world an implementation is started with (the Port given to
// Implementation.Start): the deliveries that will certainly be released next, whatever the
// implementation does until then. An implementation that can take deliveries before it is
// idle (the protocol's deliveriesAhead, PROTOCOL.md §14) may send them ahead and save a
// round trip each; Deliver is still called for every one of them, in the same order.
type Ahead interface {
	// Due returns the deliveries certain to be released next, in order. Each is due at the
	// current virtual time: whatever the implementation makes the world schedule before it
	// is idle is due at that time or later and, ties going by scheduling order, after them.
	// The list stops before the first delivery whose release changes the schedule (an abort
	// cancels streams and tools; an Agent operation starts one). It is empty once the run
	// has ended or the world is closed, and in a scenario that aborts inside a hook (the
	// abort, answered with a call, cancels deliveries already due). At most n are returned.
	Due(n int) []Delivery
}

// aheadable are the kinds of delivery whose release changes nothing of the schedule but the
// delivery itself.
func aheadable(kind string) bool {
	switch kind {
	case trace.DeliverStreamEvent, trace.DeliverStreamEnd, trace.DeliverStreamFail, trace.DeliverToolUpdate, trace.DeliverToolResult,
		trace.DeliverHookReturn:
		return true
	}
	return false
}

// Due implements Ahead. The deliveries due now are the top of the schedule's heap (a child is
// never earlier than its parent); they are taken in scheduling order. Internal happenings
// due now are passed over: they change the user's queues, never a delivery, and what they
// schedule comes after. The order found is kept until the schedule grows or the clock moves
// or a stream schedules its next delivery. A stream has one delivery scheduled at a time: the
// ones due now after it are looked at ahead (dueAfter). A stream event gets its JSON now,
// which its release then reuses.
func (w *world) Due(n int) []Delivery {
	if w.closed || w.ended || w.over != nil || w.valuesOnly || w.abortsInHooks {
		return nil
	}
	if !w.due.valid || w.due.seq != w.seq || w.due.now != w.now {
		w.due.list = w.due.list[:0]
		var walk func(i int)
		walk = func(i int) {
			if i >= len(w.schedule) || w.schedule[i].at != w.now {
				return
			}
			w.due.list = append(w.due.list, w.schedule[i])
			walk(2*i + 1)
			walk(2*i + 2)
		}
		walk(0)
		slices.SortFunc(w.due.list, func(a, b *scheduled) int { return int(a.seq - b.seq) })
		w.due.seq, w.due.now, w.due.valid = w.seq, w.now, true
	}
	for len(w.due.list) > 0 && w.due.list[0].index < 0 { // released since
		w.due.list = w.due.list[1:]
	}
	var out []Delivery
	for _, s := range w.due.list {
		switch {
		case len(out) == n:
			return out
		case s.index < 0 || s.cancelled || s.internal != nil:
			continue
		case !aheadable(s.delivery.Kind):
			return out
		}
		if s.event != nil && len(s.delivery.Data) == 0 {
			s.delivery.Data = w.enc.valueBytes(s.event)
		}
		out = append(out, s.valueFor())
		if s.stream != nil {
			out = w.dueAfter(s.stream, out, n)
		}
	}
	return out
}

// dueAfter appends to out, up to n in all, the deliveries of stream s due now after the one
// it has scheduled: they come before any other happening due now that it does not precede,
// as all take the stream's scheduling order. They are taken from its source and kept in
// s.ahead, with their JSON, until scheduled.
func (w *world) dueAfter(s *streamRun, out []Delivery, n int) []Delivery {
	at, events := s.at, s.events
	for i := 0; len(out) < n; i++ {
		if i == len(s.ahead) {
			u, ok := s.pull()
			if !ok {
				break
			}
			s.ahead = append(s.ahead, u)
		}
		u := &s.ahead[i]
		if at = s.after(at, events, u.isEvent); at != w.now {
			break
		}
		if u.isEvent {
			events++
			if len(u.d.Data) == 0 {
				u.d.Data = w.enc.valueBytes(&u.ev)
			}
		}
		d := u.d
		d.Target, d.Now = s.id, at
		if u.isEvent {
			d.Value = u.ev
		}
		out = append(out, d)
	}
	return out
}

// dueOrder is the order of the happenings due now that Due found, kept while it holds.
type dueOrder struct {
	seq, now int64
	list     []*scheduled
	valid    bool // false once a stream scheduled its next delivery (with no new seq)
}
