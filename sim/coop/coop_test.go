package coop

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestOrderIsFixedByReadyCalls checks that tasks interleave in the order they are readied,
// whatever the Go runtime would prefer.
func TestOrderIsFixedByReadyCalls(t *testing.T) {
	for range 50 {
		s := New()
		var log []string
		tasks := make([]*Task, 3)
		for i := range 3 {
			s.Go(func() {
				tasks[i] = s.Current()
				log = append(log, fmt.Sprintf("start %d", i))
				s.Park()
				log = append(log, fmt.Sprintf("end %d", i))
			})
		}
		s.RunUntilIdle()
		for _, i := range []int{2, 0, 1} {
			s.Ready(tasks[i])
		}
		s.RunUntilIdle()
		got := strings.Join(log, ",")
		want := "start 0,start 1,start 2,end 2,end 0,end 1"
		if got != want {
			t.Fatalf("order = %s, want %s", got, want)
		}
		if s.Live() != 0 {
			t.Fatalf("%d tasks still live", s.Live())
		}
	}
}

// TestWaitRunsChildrenInOrderAndResumesParent checks Wait's contract.
func TestWaitRunsChildrenInOrderAndResumesParent(t *testing.T) {
	s := New()
	var log []string
	s.Go(func() {
		s.Wait([]func(){
			func() { log = append(log, "a") },
			func() { log = append(log, "b") },
		})
		log = append(log, "parent")
	})
	s.RunUntilIdle()
	if got := strings.Join(log, ","); got != "a,b,parent" {
		t.Fatalf("log = %s", got)
	}
}

// TestFinishedTasksGoroutinesRunLaterTasks: a task's goroutine runs later tasks once its own
// has returned (Wait's children, turn after turn, take no new goroutine), and every goroutine
// is gone once no task is live.
func TestFinishedTasksGoroutinesRunLaterTasks(t *testing.T) {
	before := runtime.NumGoroutine()
	s := New()
	var log []string
	most := 0
	seen, fresh := map[string]bool{}, 0
	child := func(name string) func() {
		return func() {
			log = append(log, name)
			if id := goroutineID(); !seen[id] {
				seen[id] = true
				fresh++
			}
		}
	}
	s.Go(func() {
		for turn := range 50 {
			s.Wait([]func(){child(fmt.Sprintf("a%d", turn)), child(fmt.Sprintf("b%d", turn))})
			most = max(most, runtime.NumGoroutine()-before)
		}
		s.Wait([]func(){func() { log = append(log, "after") }})
	})
	s.RunUntilIdle()
	if len(log) != 101 || log[0] != "a0" || log[1] != "b0" || log[99] != "b49" || log[100] != "after" {
		t.Fatalf("log = %v", log)
	}
	if fresh > 2 {
		t.Errorf("the children of 50 turns ran on %d goroutines, want the first turn's two", fresh)
	}
	// The parent, two children and the goroutines the runtime may hold meanwhile.
	if most > 4 {
		t.Errorf("up to %d goroutines for a task and its two children", most)
	}
	if s.Live() != 0 {
		t.Fatalf("%d tasks live", s.Live())
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before, %d after", before, n)
	}
}

// goroutineID is the running goroutine's number, from its stack trace's first line.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestATaskPanicReachesTheDriver: a panic in a task comes out of RunUntilIdle, where the
// driver can recover it (explore turns it into a finding), instead of killing the process. It
// keeps the task's stack, and the scheduler is broken afterwards: nothing more runs, Live is 0
// (Reference.Stop's loop ends) and its idle coroutines are gone.
func TestATaskPanicReachesTheDriver(t *testing.T) {
	before := runtime.NumGoroutine()
	s := New()
	ran := false
	s.Go(func() {
		s.Wait([]func(){func() {}}) // leaves a finished task's coroutine idle
		s.Wait([]func(){panicsInATool})
	})
	func() {
		defer func() {
			p, ok := recover().(*TaskPanic)
			if !ok || p.Value != "in a tool" {
				t.Fatalf("recovered %#v, want the task's panic as a *TaskPanic", p)
			}
			if !strings.Contains(p.Error(), "panicsInATool") {
				t.Errorf("the panic's text does not show the task's stack:\n%s", p.Error())
			}
		}()
		s.RunUntilIdle()
		t.Fatal("RunUntilIdle returned")
	}()
	s.Go(func() { ran = true })
	s.RunUntilIdle()
	if ran || s.Live() != 0 {
		t.Errorf("after the panic: a new task ran = %v, Live = %d", ran, s.Live())
	}
	// The parent is left parked; the idle coroutine is let go.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+1 {
		t.Errorf("%d goroutines before, %d after: more than the parked parent's", before, n)
	}
}

func panicsInATool() { panic("in a tool") }

// TestATaskGoexitEndsTheDriver: runtime.Goexit in a task (t.FailNow in a test's tool) ends the
// driver's goroutine too, so the test stops where it failed.
func TestATaskGoexitEndsTheDriver(t *testing.T) {
	s := New()
	s.Go(func() {})
	s.Go(runtime.Goexit)
	returned, ended := false, make(chan struct{})
	go func() {
		defer close(ended)
		s.RunUntilIdle()
		returned = true
	}()
	<-ended
	if returned {
		t.Fatal("RunUntilIdle returned after a task called runtime.Goexit")
	}
}

// TestWorkersCarryCoroutinesToTheNextScheduler: a scheduler made with NewWith runs its tasks on
// the coroutines an earlier one left in its Workers (no new goroutine), keeps them once no task
// is live, and Close lets them go.
func TestWorkersCarryCoroutinesToTheNextScheduler(t *testing.T) {
	before := settledGoroutines()
	ws := &Workers{}
	seen := map[string]bool{}
	for range 3 {
		s := NewWith(ws)
		s.Go(func() {
			seen[goroutineID()] = true
			s.Wait([]func(){func() { seen[goroutineID()] = true }})
		})
		s.RunUntilIdle()
		if s.Live() != 0 {
			t.Fatalf("%d tasks live", s.Live())
		}
	}
	if len(seen) != 2 {
		t.Errorf("three schedulers' tasks ran on %d goroutines, want the first's two", len(seen))
	}
	if n := runtime.NumGoroutine(); n != before+2 {
		t.Errorf("%d goroutines before, %d between runs: want the two kept", before, n)
	}
	ws.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before, %d after Close", before, n)
	}
}

// settledGoroutines is the number of goroutines once those of earlier tests that are ending
// have ended: the count has not fallen for 20 ms (at most a second).
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for deadline, still := time.Now().Add(time.Second), time.Now(); time.Now().Before(deadline) && time.Since(still) < 20*time.Millisecond; {
		time.Sleep(time.Millisecond)
		if m := runtime.NumGoroutine(); m < n {
			n, still = m, time.Now()
		}
	}
	return n
}
