package explore

import (
	"context"
	"sync"
	"time"

	"github.com/turnstile-dev/turnstile/sim"
)

// checked is one run, checked: its index, its scenario and what is wrong with it.
type checked struct {
	i       int
	runSeed uint64
	sc      *sim.Scenario
	prob    *Problem
	ignored bool
}

// checks hands out the exploration's runs in their order, each checked, until the runs or the
// duration are used up or ctx is done. With one job it checks each run when asked for it.
// With more, that many goroutines check the runs ahead of the order, at most 2×Jobs of them
// waiting to be taken, and next returns them in the order all the same: the exploration sees
// what one job would have shown it, except that it ends sooner. stop ends the jobs; the runs
// they checked ahead and nobody took are dropped (Result counts only the runs taken).
func (x *explorer) checks(ctx context.Context, start time.Time) (next func() (checked, bool), stop func()) {
	over := func() bool {
		return x.opts.Duration > 0 && time.Since(start) >= x.opts.Duration || ctx.Err() != nil
	}
	if x.opts.Jobs <= 1 {
		i := -1
		return func() (checked, bool) {
			if i = x.runAfter(i); i < 0 || over() {
				return checked{}, false
			}
			return x.checkRun(i), true
		}, func() {}
	}
	return x.checksAhead(over)
}

// runAfter is the index of the run after i (-1 to begin) that this shard owns, or -1 when
// the runs are used up.
func (x *explorer) runAfter(i int) int {
	for i++; x.opts.Runs <= 0 || i < x.opts.Runs; i++ {
		if x.opts.Shard.owns(i) {
			return i
		}
	}
	return -1
}

// checkRun generates run i and checks it.
func (x *explorer) checkRun(i int) checked {
	c := checked{i: i, runSeed: RunSeed(x.opts.Seed, i)}
	c.sc = x.opts.Generate(c.runSeed)
	c.prob, c.ignored = x.check(c.sc)
	return c
}

// checksAhead is checks with Jobs goroutines. A dispatcher gives each run in order a slot;
// the jobs fill the slots, the exploration empties them in order. order's capacity bounds
// how far ahead the jobs go.
func (x *explorer) checksAhead(over func() bool) (next func() (checked, bool), stop func()) {
	type slot struct {
		i    int
		done chan checked
	}
	work := make(chan slot)
	order := make(chan slot, 2*x.opts.Jobs)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(work)
		defer close(order)
		for i := x.runAfter(-1); i >= 0; i = x.runAfter(i) {
			s := slot{i: i, done: make(chan checked, 1)}
			select {
			case order <- s:
			case <-quit:
				return
			}
			select {
			case work <- s:
			case <-quit:
				return
			}
		}
	})
	for range x.opts.Jobs {
		wg.Go(func() {
			for s := range work {
				select {
				case <-quit:
					return
				default:
				}
				s.done <- x.checkRun(s.i)
			}
		})
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
		})
	}
	next = func() (checked, bool) {
		if over() {
			return checked{}, false
		}
		s, ok := <-order
		if !ok {
			return checked{}, false
		}
		return <-s.done, true // a job fills every slot handed out before stop
	}
	return next, stop
}
