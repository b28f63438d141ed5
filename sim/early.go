package sim

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
// without user actions, given as JSON, while the run goes on: Call would answer it from its
// model alone and record nothing before, and no user action can fire when it is recorded (a
// trigger on the request would change the queues or schedule an abort).
func (w *world) OpenStream(c Call, model ModelSetup) (Answer, func(), bool) {
	if c.Kind != CallStream || c.Value != nil || len(c.Data) == 0 || w.closed || w.over != nil ||
		w.requests >= w.budget.Requests || w.valuesOnly || w.agent != nil || len(w.sc.User) > 0 {
		return Answer{}, nil, false
	}
	a := w.openStreamFor(model)
	return a, func() { w.recordCall(c, w.callData(c), a) }, true
}
