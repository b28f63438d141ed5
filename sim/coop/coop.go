// Package coop is a deterministic cooperative scheduler: goroutines that take turns, one at a
// time, handing the turn on only when they block on the scheduler. Whoever drives it (a
// simulator) learns when every task is blocked — the moment to advance virtual time — which
// is the idea of Go's testing/synctest, usable outside tests.
//
// Tasks run in FIFO order of becoming ready. Because exactly one task (or the driver) runs at
// any moment, state touched only by tasks and the driver needs no further locking, and every
// interleaving is fixed by the order of Ready calls.
//
// Each task runs as a coroutine (iter.Pull): the driver resumes it, and it comes back to the
// driver when it parks or returns. A switch is a direct hand-over between two goroutines, so
// the Go scheduler never sees a goroutine become ready and never wakes another thread to run
// it, as it did for the channel sends of an earlier version (a futex wake-up each, a fifth of
// a simulated run's CPU).
//
// A panic in a task reaches the driver, out of RunUntilIdle, as a *TaskPanic that keeps the
// task's stack; runtime.Goexit does too (a t.FailNow in a test's tool ends the test). The
// scheduler is then broken: its idle coroutines are let go, RunUntilIdle returns at once and
// Live is 0. The coroutines of tasks parked at that moment stay parked (a panic in the loop is
// a bug to fix, and each leaves its run's tasks behind).
package coop

import (
	"fmt"
	"iter"
	"runtime/debug"
	"sync"
)

// TaskPanic is a task's panic as it reaches the driver: the value and the stack of the task,
// which the driver's own stack no longer shows.
type TaskPanic struct {
	Value any
	Stack []byte
}

func (p *TaskPanic) Error() string { return fmt.Sprintf("%v\n\n%s", p.Value, p.Stack) }

// Unwrap is the panic's value when it is an error.
func (p *TaskPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Scheduler runs tasks one at a time. The zero value is not usable; call New.
type Scheduler struct {
	mu sync.Mutex
	// ready holds the ready tasks from head on; once they have all run, the array is reused
	// (a run readies a task at every delivery).
	ready   []*Task
	head    int
	current *Task
	live    int
	// free are coroutines whose task has returned, waiting for the next task to run: their
	// stacks have grown already, which a new goroutine's would have to again. They are let
	// go when no task is live.
	free []*worker
	// broken is set once a task has panicked or exited its goroutine.
	broken bool
	// workers, when set, keeps the idle coroutines once no task is live (NewWith).
	workers *Workers
}

// Workers keeps idle coroutines from one scheduler to the next: a scheduler made with
// NewWith leaves its idle coroutines there once no task is live, instead of letting them
// go, and runs its tasks on them, whose stacks have grown already (a run goes deep, and a
// new goroutine's stack grows to it again by copying). It serves one scheduler at a time,
// driven from one goroutine; Close lets its coroutines go.
type Workers struct {
	free   []*worker
	closed bool
}

// maxIdleWorkers bounds the coroutines a Workers keeps.
const maxIdleWorkers = 16

// Close lets the idle coroutines go; those given back later go at once.
func (ws *Workers) Close() {
	ws.closed = true
	for _, w := range ws.free {
		w.stop()
	}
	ws.free = nil
}

// keep takes back the idle coroutines of a scheduler with no task live, or lets them go.
func (ws *Workers) keep(idle []*worker) {
	for _, w := range idle {
		if ws.closed || len(ws.free) >= maxIdleWorkers {
			w.stop()
			continue
		}
		w.s = nil
		ws.free = append(ws.free, w)
	}
}

// worker is a coroutine that runs tasks, one after another.
type worker struct {
	// s is the scheduler whose task the worker runs.
	s      *Scheduler
	resume func() (struct{}, bool)
	stop   func()
	// yield hands the turn back to the driver; resume returns from it.
	yield func(struct{}) bool
	// next is the function of the task the worker runs when resumed after its last one.
	next func()
}

// Task is one cooperative goroutine.
type Task struct {
	// f is the task's function, until a worker takes it.
	f      func()
	w      *worker
	parked bool
}

// New returns a scheduler with no tasks.
func New() *Scheduler { return &Scheduler{} }

// NewWith returns a scheduler with no tasks whose tasks run on the coroutines ws keeps, and
// which leaves its idle ones there; New when ws is nil.
func NewWith(ws *Workers) *Scheduler { return &Scheduler{workers: ws} }

// Go adds a task that will run f when its turn comes. It may be called by the driver or by a
// running task.
func (s *Scheduler) Go(f func()) {
	s.mu.Lock()
	s.live++
	s.ready = append(s.ready, &Task{f: f})
	s.mu.Unlock()
}

// newWorker returns a coroutine that has run nothing yet. Each time it is resumed it runs its
// next function, then hands the turn back as a free worker; it ends when stopped.
func (s *Scheduler) newWorker() *worker {
	if ws := s.workers; ws != nil && len(ws.free) > 0 {
		w := ws.free[len(ws.free)-1]
		ws.free = ws.free[:len(ws.free)-1]
		w.s = s
		return w
	}
	w := &worker{s: s}
	w.resume, w.stop = iter.Pull(func(yield func(struct{}) bool) {
		growStack()
		w.yield = yield
		for {
			f := w.next
			w.next = nil
			runTask(f)
			s := w.s
			s.mu.Lock()
			s.live--
			s.current.w = nil
			s.free = append(s.free, w)
			s.mu.Unlock()
			if !yield(struct{}{}) {
				return
			}
		}
	})
	return w
}

// stackReserve is how deep a worker's stack is made at once when it starts.
const stackReserve = 8 << 10

// growStack makes the calling goroutine's stack at least stackReserve deep in one step: the
// tasks a simulation runs go deep, and a new goroutine's stack would reach that by doubling,
// copying its frames each time.
//
//go:noinline
func growStack() {
	var reserve [stackReserve]byte
	keep(&reserve)
}

// keep is where growStack's array goes, so that the compiler keeps it on the stack.
//
//go:noinline
func keep(*[stackReserve]byte) {}

// runTask runs a task's function; a panic goes on as a *TaskPanic with the task's stack.
func runTask(f func()) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(*TaskPanic); !ok {
				p = &TaskPanic{Value: p, Stack: debug.Stack()}
			}
			panic(p)
		}
	}()
	f()
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
	t.w.yield(struct{}{})
}

// Alone reports whether no other task is ready: were the running task to park now, the turn
// would go back to the driver.
func (s *Scheduler) Alone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head == len(s.ready) && !s.broken
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
	ended := false
	defer func() {
		if !ended { // a task panicked or exited its goroutine, which goes on in the driver
			s.breakDown()
		}
	}()
	for {
		s.mu.Lock()
		if s.head == len(s.ready) || s.broken {
			s.current = nil
			var idle []*worker
			if s.live == 0 {
				idle, s.free = s.free, nil
			}
			s.mu.Unlock()
			if s.workers != nil {
				s.workers.keep(idle)
			} else {
				for _, w := range idle {
					w.stop()
				}
			}
			ended = true
			return
		}
		t := s.ready[s.head]
		s.ready[s.head] = nil
		if s.head++; s.head == len(s.ready) {
			s.ready, s.head = s.ready[:0], 0
		}
		s.current = t
		if t.w == nil {
			if n := len(s.free); n > 0 {
				t.w = s.free[n-1]
				s.free = s.free[:n-1]
			} else {
				t.w = s.newWorker()
			}
			t.w.next, t.f = t.f, nil
		}
		s.mu.Unlock()
		t.w.resume()
	}
}

// breakDown marks the scheduler broken and lets its idle coroutines go.
func (s *Scheduler) breakDown() {
	s.mu.Lock()
	s.broken, s.current, s.ready, s.head = true, nil, nil, 0
	idle := s.free
	s.free = nil
	s.mu.Unlock()
	for _, w := range idle {
		w.stop()
	}
}

// Live is the number of tasks that have not exited; 0 once the scheduler is broken.
func (s *Scheduler) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return 0
	}
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
