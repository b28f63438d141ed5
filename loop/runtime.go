package loop

import (
	"sync"
	"time"
)

// Runtime is the loop's seam for time and concurrency. A simulator replaces it to make every
// run deterministic: its clock is virtual and it decides how concurrent tool executions
// interleave.
type Runtime interface {
	// Now is the wall clock in Unix milliseconds, for message timestamps (pi: Date.now()).
	Now() int64
	// Monotonic is a monotonic clock, for durationMs (pi: performance.now()).
	Monotonic() time.Duration
	// Parallel runs the tasks concurrently, starting them in order, and returns once all have
	// returned.
	Parallel(tasks []func())
}

// RealRuntime is the default Runtime: the system clock, and tasks run at once on goroutines.
type RealRuntime struct{}

var processStart = time.Now()

// Now implements Runtime.
func (RealRuntime) Now() int64 { return time.Now().UnixMilli() }

// Monotonic implements Runtime.
func (RealRuntime) Monotonic() time.Duration { return time.Since(processStart) }

// Parallel implements Runtime. The first task runs on the calling goroutine once the others
// have been spawned, while they run: a single task (one tool call) spawns no goroutine, and
// of tools that return at once the first usually ends first, as in pi (whose tools start in source
// order). Should the first task panic or exit the goroutine, Parallel still waits for the
// others first.
func (RealRuntime) Parallel(tasks []func()) {
	if len(tasks) == 0 {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, task := range tasks[1:] {
		wg.Go(task)
	}
	tasks[0]()
}
