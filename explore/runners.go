package explore

import (
	"runtime"
	"sync"

	"github.com/turnstile-dev/turnstile/sim/coop"
)

// runners keeps the goroutines that ran simulations, idle between runs, for the next runs: a
// simulation goes deep, and a new goroutine's stack would grow to it again, by copying, run
// after run. Each keeps the coroutines its runs' schedulers ran their tasks on too, for the
// same reason (coop.Workers). A goroutine whose run hung is not taken back.
type runners struct {
	mu     sync.Mutex
	idle   []chan func(*coop.Workers)
	closed bool
}

// maxIdleRunners bounds the goroutines kept idle (the jobs, and one more checking alone).
const maxIdleRunners = 16

// newRunners is the runners of x, which end their idle goroutines once x is unreachable
// (Run ends them when it returns).
func newRunners(x *explorer) *runners {
	rs := &runners{}
	runtime.AddCleanup(x, (*runners).close, rs)
	return rs
}

// run runs f on an idle goroutine, or a new one, given that goroutine's coroutines (for
// sim.Reference.UseWorkers). f reports whether it returned normally
// (neither a panic nor runtime.Goexit ended its goroutine): the goroutine is then idle again
// before then, what f left to do (tell its result), is called.
func (rs *runners) run(f func(ws *coop.Workers) (reuse bool, then func())) {
	rs.mu.Lock()
	var work chan func(*coop.Workers)
	if n := len(rs.idle); n > 0 {
		work, rs.idle = rs.idle[n-1], rs.idle[:n-1]
	}
	rs.mu.Unlock()
	if work == nil {
		work = make(chan func(*coop.Workers))
		go func() {
			ws := &coop.Workers{}
			defer ws.Close()
			for f := range work {
				f(ws)
			}
		}()
	}
	work <- func(ws *coop.Workers) {
		reuse, then := f(ws)
		if reuse {
			rs.put(work)
		}
		if then != nil {
			then()
		}
	}
}

// put takes back an idle goroutine, or ends it.
func (rs *runners) put(work chan func(*coop.Workers)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed || len(rs.idle) >= maxIdleRunners {
		close(work)
		return
	}
	rs.idle = append(rs.idle, work)
}

// close ends the idle goroutines, and those given back later.
func (rs *runners) close() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.closed = true
	for _, work := range rs.idle {
		close(work)
	}
	rs.idle = nil
}
