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
	s.mu.Unlock()
	go func() {
		<-t.wake
		defer s.exit()
		f()
	}()
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
