// Package sim is the world an agent loop runs in, deterministic to the byte: a virtual clock
// and its schedule of deliveries, a scripted provider (streams as pi-ai's faux provider
// makes them), scripted tools and hooks, a simulated user, and the budget that ends a run
// that never would. Run drives an Implementation (the reference loop, the reference Agent,
// or one served over the conformance protocol) through a Scenario and records the trace
// (package trace) in its linear form. It knows nothing of files: package scenarios turns
// those into Scenarios.
package sim
