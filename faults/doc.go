// Package faults holds, in its tests only, hand-made semantic faults of the kind a real port
// of the loop gets wrong — follow-up polled too early, terminate by any result, running a
// truncated batch, trusting stopReason, an extra continuation request, a turn cap of 2 — and the
// proof that the curated suite and explore catch every one.
//
// Each fault is a seam: a textual patch of loop/'s (or the Agent's) sources that runs the
// faulty code only while an environment variable names the fault. The tests apply every
// seam at once with `go build -overlay` to one binary, built once per test binary, and switch
// faults on per process; the faulty loop is then reached through the protocol, as any
// third-party implementation would be. The seams and their switch exist only in that
// overlay: no flag or hook for faults exists in production code.
package faults
