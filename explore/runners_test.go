package explore

import (
	"runtime"
	"testing"

	"github.com/turnstile-dev/turnstile/sim/coop"
)

// TestRunnersReuseTheirGoroutines: runs one after another take the one idle goroutine; a run
// that did not end normally gives its goroutine up (a Goexit ends it); close ends the idle
// ones, and those given back after.
func TestRunnersReuseTheirGoroutines(t *testing.T) {
	rs := &runners{}
	idle := func() int {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		return len(rs.idle)
	}
	ran := make(chan struct{}, 1)
	for range 100 {
		rs.run(func(*coop.Workers) (bool, func()) { return true, func() { ran <- struct{}{} } })
		<-ran
	}
	if n := idle(); n != 1 {
		t.Fatalf("%d idle goroutines after runs one at a time, want 1", n)
	}
	rs.run(func(*coop.Workers) (bool, func()) { return false, func() { ran <- struct{}{} } })
	<-ran
	if n := idle(); n != 0 {
		t.Fatalf("%d idle goroutines after a run that failed, want 0", n)
	}
	rs.run(func(*coop.Workers) (bool, func()) { ran <- struct{}{}; runtime.Goexit(); return true, nil })
	<-ran
	rs.run(func(*coop.Workers) (bool, func()) { return true, func() { ran <- struct{}{} } })
	<-ran
	if n := idle(); n != 1 {
		t.Fatalf("%d idle goroutines after a Goexit and a run, want 1", n)
	}
	rs.close()
	if n := idle(); n != 0 {
		t.Fatalf("%d idle goroutines after close", n)
	}
	rs.run(func(*coop.Workers) (bool, func()) { return true, func() { ran <- struct{}{} } })
	<-ran
	if n := idle(); n != 0 {
		t.Fatalf("%d idle goroutines after a run after close", n)
	}
}
