// Package gctarget holds the garbage collector's target turnstile's commands run at, for the
// CLI and for the tests and benchmarks that allocate as its commands do.
package gctarget

import (
	"os"
	"runtime/debug"
)

// Percent is turnstile's GC target: its live heap is small (a run's traces at a time) and it
// allocates a lot, so 400 % costs some ten MB of memory and saves about a quarter of its CPU
// (turnstile conform).
const Percent = 400

// Set sets the GC target to Percent, unless GOGC is set: GOGC still decides.
func Set() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
}
