// Package coop is a deterministic cooperative scheduler: goroutines that take turns, one at a
// time, handing the turn on only when they block on the scheduler. Whoever drives it (a
// simulator) learns when every task is blocked — the moment to advance virtual time — which
// is the idea of Go's testing/synctest, usable outside tests.
//
// Tasks run in FIFO order of becoming ready. Because exactly one task (or the driver) runs at
// any moment, state touched only by tasks and the driver needs no further locking, and every
// interleaving is fixed by the order of Ready calls.
package coop

import "sync"

// Scheduler runs tasks one at a time. The zero value is not usable; call New.
type Scheduler struct {
	mu      sync.Mutex
	ready   []*Task
	current *Task
	live    int
	idle    chan struct{}
	// workers are goroutines whose task has returned, each waiting on its channel for the
	// next task to run: their stacks have grown already, which a new goroutine's would
	// have to again. They are let go when no task is live.
	workers []chan job
}

// job is a task and its function, given to a goroutine to run.
type job struct {
	t *Task
	f func()
}

// Task is one cooperative goroutine.
type Task struct {
	wake   chan struct{}
	parked bool
}

// New returns a scheduler with no tasks.
func New() *Scheduler { return &Scheduler{idle: make(chan struct{}, 1)} }

// Go adds a task that will run f when its turn comes. It may be called by the driver or by a
// running task.
func (s *Scheduler) Go(f func()) {
	t := &Task{wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.live++
	s.ready = append(s.ready, t)
	var w chan job
	if n := len(s.workers); n > 0 {
		w = s.workers[n-1]
		s.workers = s.workers[:n-1]
	}
	s.mu.Unlock()
	if w != nil {
		w <- job{t, f} // buffered: the worker takes it when it is free
		return
	}
	go s.work(job{t, f})
}

// work runs tasks, one after another: j, then whichever Go gives it, until no task is live.
func (s *Scheduler) work(j job) {
	jobs := make(chan job, 1)
	for {
		<-j.t.wake
		if !s.run(j.f, jobs) {
			return
		}
		var ok bool
		if j, ok = <-jobs; !ok {
			return
		}
	}
}

// run runs a task's function and ends the task: the goroutine is then a worker waiting on jobs
// (true), or, when no task is live, it is let go with every waiting worker (false).
func (s *Scheduler) run(f func(), jobs chan job) (wait bool) {
	done := false
	defer func() {
		if !done { // f called runtime.Goexit: the goroutine ends with the task
			s.exit()
		}
	}()
	f()
	done = true
	s.mu.Lock()
	s.live--
	var idle []chan job
	wait = s.live > 0
	if wait {
		s.workers = append(s.workers, jobs)
	} else {
		idle, s.workers = s.workers, nil
	}
	s.mu.Unlock()
	for _, w := range idle {
		close(w)
	}
	s.handOff()
	return wait
}

// Current is the running task; nil when called by the driver.
func (s *Scheduler) Current() *Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Park blocks the running task until someone calls Ready on it, letting the next ready task
// (or the driver, when none is) run. The caller must have arranged to be readied.
func (s *Scheduler) Park() {
	s.mu.Lock()
	t := s.current
	t.parked = true
	s.mu.Unlock()
	s.handOff()
	<-t.wake
}

// Ready makes a parked task runnable again; it runs after the tasks already ready.
func (s *Scheduler) Ready(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil || !t.parked {
		return
	}
	t.parked = false
	s.ready = append(s.ready, t)
}

// RunUntilIdle lets ready tasks run, one at a time, and returns once none is ready: every
// live task is parked or has exited. Only the driver calls it.
func (s *Scheduler) RunUntilIdle() {
	s.handOff()
	<-s.idle
}

// Live is the number of tasks that have not exited.
func (s *Scheduler) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// Wait blocks the running task until every function of fs, each run as its own task in
// order, has returned.
func (s *Scheduler) Wait(fs []func()) {
	parent := s.Current()
	remaining := len(fs)
	if remaining == 0 {
		return
	}
	for _, f := range fs {
		s.Go(func() {
			f()
			remaining--
			if remaining == 0 {
				s.Ready(parent)
			}
		})
	}
	s.Park()
}

func (s *Scheduler) exit() {
	s.mu.Lock()
	s.live--
	s.mu.Unlock()
	s.handOff()
}

// handOff gives the turn to the first ready task, or back to the driver.
func (s *Scheduler) handOff() {
	s.mu.Lock()
	if len(s.ready) == 0 {
		s.current = nil
		s.mu.Unlock()
		s.idle <- struct{}{}
		return
	}
	next := s.ready[0]
	s.ready = s.ready[1:]
	s.current = next
	s.mu.Unlock()
	next.wake <- struct{}{}
}
