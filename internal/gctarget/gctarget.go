// Package gctarget holds the garbage collector's target turnstile's commands run at, for the
// CLI and for the tests and benchmarks that allocate as its commands do.
package gctarget

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Percent is turnstile's GC target: its live heap is small (a run's traces at a time) and it
// allocates a lot, so 400 % costs some ten MB of memory and saves about a quarter of its CPU
// (turnstile conform).
const Percent = 400

// Headroom caps what the heap may grow beyond its live bytes before a collection: a moment of
// large live heap (a long scenario's traces written out whole) would otherwise let the heap
// grow to five times it, and every new page is a page fault, which costs more than the
// collections saved.
const Headroom = 32 << 20

// Set sets the GC target to Percent, lowered after each collection to keep the heap's growth
// within Headroom (never below 100 %), unless GOGC is set: GOGC still decides. The lowering
// stops once anything else sets a target other than the one it last set (debug.SetGCPercent);
// Set starts it again.
func Set() {
	if os.Getenv("GOGC") != "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	current = Percent
	debug.SetGCPercent(Percent)
	if !armed {
		armed = true
		afterCollection(tune)
	}
}

// Current is the GC target in force, read without setting it (a debug.SetGCPercent would stop
// Set's tuning).
func Current() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// percentFor is the GC target for a live heap of live bytes.
func percentFor(live uint64) int {
	if live == 0 || live*Percent/100 <= Headroom {
		return Percent
	}
	return max(100, int(Headroom*100/live))
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// tune sets the GC target for the live heap the last collection found, and reports whether
// to go on: it stops once something else has set the target. It runs on the finalizer
// goroutine, one call at a time.
func tune() bool {
	mu.Lock()
	defer mu.Unlock()
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		armed = false
		return false
	}
	want := percentFor(liveSample[0].Value.Uint64())
	if want == current {
		return true
	}
	if old := debug.SetGCPercent(want); old != current {
		debug.SetGCPercent(old)
		armed = false
		return false
	}
	current = want
	return true
}

var (
	mu      sync.Mutex // held by Set and tune
	current int        // the target Set or tune last set
	armed   bool       // whether tune runs after each collection
)

// afterCollection calls f after every collection while it returns true, from the finalizer
// of an object that each call makes anew.
func afterCollection(f func() bool) {
	sentinel := new([32]byte)
	runtime.SetFinalizer(sentinel, func(*[32]byte) {
		if f() {
			afterCollection(f)
		}
	})
}
