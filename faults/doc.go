// Package faults holds, in its tests only, hand-made semantic faults of the kind a real port
// of the loop gets wrong — follow-up polled too early, terminate by any result, running a
// truncated batch, trusting stopReason, an extra continuation request, a turn cap of 2 — and the
// proof that the curated suite and explore catch every one.
//
// Each fault is a textual patch of loop/'s sources, applied with `go build -overlay` to a
// copy of the turnstile binary (built once per test binary, whichever test needs it first);
// the faulty loop is then reached through `turnstile adapter`, as any third-party
// implementation would be. No flag or hook for faults exists in production code.
package faults
