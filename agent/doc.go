// Package agent is a reference stateful Agent with the behaviour of pi 1.6.0's Agent
// (@earendil-works/pi-agent-core@1.6.0, dist/agent.js), on top of package loop.
//
// An Agent owns a transcript, the executable tools, the steering and follow-up queues and
// their modes. Prompt and Continue start a run of the loop; Steer and FollowUp queue messages
// the run takes at its polls; Abort cancels the active run; WaitForIdle waits for it. Listeners
// (Subscribe) see every event after the Agent has updated its state, one after another in
// subscription order, and the run waits for each: a listener that blocks holds the run, and
// the run is not over — Prompt has not returned, WaitForIdle has not either — until the
// listeners of its agent_end have returned.
//
// A run that fails (a hook, the stream function or the stream fails) ends with a synthetic
// assistant message of stopReason "error" ("aborted" when the run was aborted) carrying the
// failure's text, delivered like a turn: message_start, message_end, turn_end, agent_end.
//
// The refusals carry pi's texts (the Err… variables). This package imports only loop.
package agent
