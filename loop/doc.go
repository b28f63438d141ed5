// Package loop is a reference agent loop with the behaviour of pi 1.6.0
// (@earendil-works/pi-agent-core@1.6.0, dist/agent-loop.js), or of any earlier pi release
// from 0.87.0 (Config.Behaviour, BehaviourOf; docs/VERSIONS.md), usable as a library.
//
// An agent loop asks a model for a response, runs the tools the response asks for, feeds the
// results back and repeats until nothing requires another request. Run starts a run with new
// prompt messages, Continue resumes from an existing transcript. Both emit the ten events of
// pi's loop (agent_start … agent_end) to Config.OnEvent, synchronously and in order, and return
// the run's new messages.
//
// The loop takes everything nondeterministic from its caller: the model through Config.Stream,
// tools through Context.Tools, hooks through Config, and time and concurrency through
// Config.Runtime (RealRuntime by default). A simulator can replace all of them and make a run
// reproducible to the byte.
//
// Tool declarations live in the transcript, as ToolsAdded / ToolsRemoved on system messages:
// CurrentTools replays them, ToolStateChanges compares two tool sets and DeclareToolChanges
// writes the difference into the messages about to be sent.
//
// This package imports no other package of the turnstile project except its own argschema
// subpackage, which validates tool arguments the way pi does.
package loop
