// Package conformance verifies an implementation against the reference: Verify and
// VerifyParallel run a suite on both and compare trace by trace, and a Report gives the
// verdicts, findings and causes as text, JSON and JUnit. Implementations are reached through
// package conformance/protocol (or in-process); a Go port imports conformance/porttest, which
// re-exports the names of this package's Go kit a port needs.
package conformance
