package protocol

import (
	"errors"
	"slices"
	"sync"

	"github.com/turnstile-dev/turnstile/sim"
)

// Pool lends adapter processes to runs made at the same time (explore --jobs): each run's
// implementation (Impl) takes an idle process when the run starts and gives it back when the
// run stops, so N runs at once use N processes, each started when first needed. A process
// serves one session at a time, one after another, as in a suite.
type Pool struct {
	// New makes a process the pool has none idle.
	New func() *Process

	mu     sync.Mutex
	idle   []*Process
	all    []*Process
	closed bool
}

// errPoolClosed is what a run that starts after Close is told.
var errPoolClosed = errors.New("the pool of adapter processes is closed")

// Impl makes one run's implementation: a process of the pool from Start to Stop.
func (p *Pool) Impl() sim.Implementation { return &pooled{pool: p} }

// Hello is the hello of the pool's processes (they all run one command), asked of an idle
// process or of a new one.
func (p *Pool) Hello() (Hello, error) {
	proc, err := p.take()
	if err != nil {
		return Hello{}, err
	}
	defer p.give(proc)
	return proc.Hello()
}

// Close shuts the idle processes down and kills those a run still holds (a run abandoned as a
// hang); it returns the first error of a shutdown.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var first error
	for _, proc := range p.all {
		if slices.Contains(p.idle, proc) {
			if err := proc.Close(); err != nil && first == nil {
				first = err
			}
		} else {
			proc.Kill()
		}
	}
	p.idle, p.all = nil, nil
	return first
}

func (p *Pool) take() (*Process, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errPoolClosed
	}
	if n := len(p.idle); n > 0 {
		proc := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return proc, nil
	}
	proc := p.New()
	p.all = append(p.all, proc)
	return proc, nil
}

func (p *Pool) give(proc *Process) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		proc.Kill()
		return
	}
	p.idle = append(p.idle, proc)
}

// pooled is one run's implementation: a process of the pool for the run's duration.
type pooled struct {
	pool *Pool
	proc *Process
}

func (r *pooled) Start(setup sim.Setup, world sim.Port) error {
	proc, err := r.pool.take()
	if err != nil {
		return err
	}
	r.proc = proc
	return r.proc.Start(setup, world)
}

func (r *pooled) Deliver(d sim.Delivery) error {
	if r.proc == nil {
		return errors.New("a delivery before the run started")
	}
	return r.proc.Deliver(d)
}

func (r *pooled) Stop() error {
	if r.proc == nil {
		return nil
	}
	err := r.proc.Stop()
	r.pool.give(r.proc)
	r.proc = nil
	return err
}

// Hello is the pool's processes' hello (explore asks a run's implementation for it).
func (r *pooled) Hello() (Hello, error) { return r.pool.Hello() }

// Shortcuts are the shortcuts the harness takes with the pool's processes (explore asks a
// run's implementation for them).
func (r *pooled) Shortcuts() (Shortcuts, error) { return r.pool.Shortcuts() }
