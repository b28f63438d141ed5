package loop_test

import (
	"sync"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestRealRuntimeRunsTasksAtOnce: each task waits until every task has started, which ends
// only if they all run at the same time (the first one on the caller's goroutine, the others
// on their own); Parallel returns once all have returned, and does nothing without tasks.
func TestRealRuntimeRunsTasksAtOnce(t *testing.T) {
	loop.RealRuntime{}.Parallel(nil)
	for _, n := range []int{1, 2, 5} {
		var started, finished sync.WaitGroup
		started.Add(n)
		var mu sync.Mutex
		done := 0
		tasks := make([]func(), n)
		for i := range tasks {
			tasks[i] = func() {
				started.Done()
				started.Wait()
				mu.Lock()
				done++
				mu.Unlock()
			}
		}
		finished.Go(func() { loop.RealRuntime{}.Parallel(tasks) })
		returned := make(chan struct{})
		go func() { finished.Wait(); close(returned) }()
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d tasks: Parallel did not return; the tasks did not all run at once", n)
		}
		if done != n {
			t.Errorf("%d tasks: Parallel returned after %d had returned", n, done)
		}
	}
}

// TestRealRuntimeWaitsWhenTheFirstTaskPanics: a panic of the first task (the one on the caller's
// goroutine) reaches the caller only once the other tasks have returned.
func TestRealRuntimeWaitsWhenTheFirstTaskPanics(t *testing.T) {
	var mu sync.Mutex
	otherDone := false
	other := func() {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		otherDone = true
		mu.Unlock()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the first task's panic did not reach the caller")
			}
			mu.Lock()
			defer mu.Unlock()
			if !otherDone {
				t.Error("Parallel let the panic through while another task was still running")
			}
		}()
		loop.RealRuntime{}.Parallel([]func(){func() { panic("the first task") }, other})
	}()
}
