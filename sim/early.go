package sim

import "github.com/turnstile-dev/turnstile/trace"

// EarlyAnswer is offered by the world an implementation is started with (the Port given to
// Implementation.Start): a stream call answered from its model alone, and recorded after.
// Reading the call's context is most of what the world does for it; across a process
// boundary the answer (and the deliveries sent ahead behind it) can go out first, and the
// implementation does not wait for the reading.
type EarlyAnswer interface {
	// OpenStream answers stream call c, whose data names model (what encoding/json reads of
	// its "model" member), as Call would, and returns finish, which records the call as Call
	// would have. Nothing but Ahead.Due may be asked of the world before finish is called.
	// ok is false when the world does not answer early; then ask Call.
	OpenStream(c Call, model ModelSetup) (a Answer, finish func(), ok bool)
}

// OpenStream implements EarlyAnswer. The world answers early a stream call of a loop scenario
// without user actions, given as JSON, while the run goes on and recording the call cannot
// stop it: Call would answer it from its model alone and record nothing before, no user action
// can fire when it is recorded (a trigger on the request would change the queues or schedule
// an abort), and no budget can be reached (which would end the run before the deliveries the
// answer makes due could be sent ahead). The call's entry is bounded by six bytes for each of
// its data's (a byte of a string escaped as \u003c, a number as 1e20 written out) and some
// for the rest, and a request the script lacks adds a failure.
func (w *world) OpenStream(c Call, model ModelSetup) (Answer, func(), bool) {
	const entryBytes = 4096
	if c.Kind != trace.CallStream || c.Value != nil || len(c.Data) == 0 || w.closed || w.over != nil ||
		w.requests >= w.budget.Requests || w.valuesOnly || w.agent != nil || len(w.sc.User) > 0 ||
		len(w.trace.Entries)+2 > w.budget.Entries || w.exactBytes()+6*int64(len(c.Data))+entryBytes > w.budget.Bytes {
		return Answer{}, nil, false
	}
	a := w.openStreamFor(model)
	return a, func() {
		var cd callData
		w.callData(&c, &cd)
		w.recordCall(&c, &cd, &a)
	}, true
}
