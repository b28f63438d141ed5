package porttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// A Go port runs inside a testing/synctest bubble, in-process (Test) and served (Serve,
// where bubble_go126.go makes the bubbles): the bubble sees every goroutine, channel and
// timer of the port, so the kit knows the port is idle exactly when nothing it started can
// move until the next delivery, whatever goroutines it runs.

// gate lets the port's goroutines reach the world (a call, an event) one at a time, in an
// order that does not depend on the scheduler: when every goroutine of the bubble waits, the
// one started first among those waiting at the gate goes in — or, with newestFirst, the one
// started last. Go promises no order among goroutines, so a port whose trace differs between
// the two orders depends on the scheduler (a goroutine per parallel tool call, whose execute
// calls pi starts in source order): a scenario's first run takes the oldest first and its
// runs again (sim.Setup.Attempt; Verify runs again those with a batch of several tool calls,
// and failures) alternate, so a run again shows it, in-process or served.
type gate struct {
	mu          sync.Mutex
	waiting     []gateWaiter
	newestFirst bool
}

type gateWaiter struct {
	goroutine uint64
	open      chan struct{}
}

// enter waits for the gate's turn; a nil gate (no bubble) lets everyone in at once.
func (g *gate) enter() {
	if g == nil {
		return
	}
	w := gateWaiter{goroutine: goroutineID(), open: make(chan struct{})}
	g.mu.Lock()
	g.waiting = append(g.waiting, w)
	g.mu.Unlock()
	<-w.open
}

// grant opens the gate for the waiting goroutine started first (last, newestFirst); false when none waits. It
// is called only when every goroutine of the bubble waits.
func (g *gate) grant() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		return false
	}
	first := 0
	for i, w := range g.waiting {
		if (w.goroutine < g.waiting[first].goroutine) != g.newestFirst && w.goroutine != g.waiting[first].goroutine {
			first = i
		}
	}
	close(g.waiting[first].open)
	g.waiting = slices.Delete(g.waiting, first, first+1)
	return true
}

// goroutineID is the calling goroutine's id: goroutines started one after another by one
// goroutine get increasing ids.
func goroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	field := bytes.Fields(buf[:n])
	if len(field) < 2 {
		return 0
	}
	id, _ := strconv.ParseUint(string(field[1]), 10, 64)
	return id
}

// goroutineStack is one goroutine of a stack dump.
type goroutineStack struct {
	id     uint64
	status string
	bubble int
	text   string
}

// bubbleOfCaller is the synctest bubble the caller runs in, 0 outside any.
func bubbleOfCaller() int {
	var buf [128]byte
	n := runtime.Stack(buf[:], false)
	if gs := parseStacks(buf[:n]); len(gs) > 0 {
		return gs[0].bubble
	}
	return 0
}

// parseStacks splits runtime.Stack(all) output into goroutines.
func parseStacks(dump []byte) []goroutineStack {
	var out []goroutineStack
	for block := range strings.SplitSeq(string(dump), "\n\n") {
		head, _, _ := strings.Cut(block, "\n")
		// goroutine 8 [chan receive (durable), synctest bubble 1]:
		rest, ok := strings.CutPrefix(head, "goroutine ")
		if !ok {
			continue
		}
		idText, state, _ := strings.Cut(rest, " ")
		id, _ := strconv.ParseUint(idText, 10, 64)
		state = strings.TrimSuffix(strings.TrimPrefix(state, "["), "]:")
		g := goroutineStack{id: id, status: state, text: block}
		if status, bubble, ok := strings.Cut(state, ", synctest bubble "); ok {
			g.status = status
			g.bubble, _ = strconv.Atoi(bubble)
		}
		out = append(out, g)
	}
	return out
}

// portGoroutines are the goroutines of bubble other than the caller and the testing
// package's own: the port's, and the kit's working for it.
func portGoroutines(bubble int) []goroutineStack {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	self := goroutineID()
	var out []goroutineStack
	for _, g := range parseStacks(buf) {
		if g.bubble != bubble || bubble == 0 || g.id == self || strings.HasPrefix(g.status, "synctest.Run") ||
			strings.Contains(g.text, "\ncreated by testing/synctest.Test") {
			continue
		}
		out = append(out, g)
	}
	return out
}

// describeGoroutines lists goroutines for a message: each one's id, what it waits on and
// its stack.
func describeGoroutines(gs []goroutineStack) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "\n%s", g.text)
	}
	return b.String()
}

// notIdleError says why a port served in a bubble is not idle after limit: the goroutines
// of the bubble that wait on something synctest cannot see through.
func notIdleError(bubble int, limit time.Duration) error {
	var culprits []goroutineStack
	for _, g := range portGoroutines(bubble) {
		if !strings.Contains(g.status, "(durable)") {
			culprits = append(culprits, g)
		}
	}
	return fmt.Errorf("the Go port is not idle after %v of real time: it breaks the kit's rule that a port waits only "+
		"on its own goroutines, channels, timers and Env (every goroutine waiting on a sync.Mutex, real I/O, a channel "+
		"made outside the scenario, or spinning, hides whether it can go on); its goroutines that do:%s",
		limit, describeGoroutines(culprits))
}

// forever is never ready: a bubble's root waiting on it (a channel made outside any bubble)
// is not durably blocked, so the bubble stays, abandoned, instead of ending as a deadlock.
var forever = make(chan struct{})

// servedStallLimit is how long one step of a served scenario (its start, a delivery, its
// stop) may take in real time before Serve reports the port as breaking the kit's rule;
// it is below the harness's default timeout, so the report names the cause.
var servedStallLimit = 20 * time.Second

// bubbled is a Go port's session served inside a synctest bubble of its own: Start makes
// the bubble, and Start, Deliver and Stop run on its root goroutine, which the harness's
// goroutine waits for.
type bubbled struct {
	bubble  func(func())
	impl    *inProcess
	ops     chan func() error
	replies chan error
	id      int
	// stuck is set once a step did not end: the bubble is left waiting, abandoned.
	stuck bool
	hello *protocol.Hello
}

// InProcess makes implementations of port for explore (explore.Options.Impl): each runs its
// session inside a synctest bubble under t, as Test runs a scenario, and introduces itself
// with the port's Hello. Its runs may be simulated from any goroutine.
func InProcess(t *testing.T, port Port) func() sim.Implementation {
	bubble := func(f func()) { synctest.Test(t, func(*testing.T) { f() }) }
	hello := portHello(port, true)
	return func() sim.Implementation {
		return &bubbled{bubble: bubble, impl: &inProcess{port: port, checkShapes: true}, hello: &hello}
	}
}

// Hello is the port's, for explore (only InProcess's implementations have one).
func (b *bubbled) Hello() (protocol.Hello, error) {
	if b.hello == nil {
		return protocol.Hello{}, errors.New("no hello")
	}
	if err := checkHello(*b.hello); err != nil {
		return protocol.Hello{}, fmt.Errorf("the port's Hello(): %w", err)
	}
	return *b.hello, nil
}

func (b *bubbled) Start(setup sim.Setup, world sim.Port) error {
	b.ops, b.replies = make(chan func() error), make(chan error)
	started := make(chan int)
	go b.bubble(func() {
		started <- bubbleOfCaller()
		for op := range b.ops {
			b.replies <- op()
		}
		if len(b.impl.leaked) > 0 {
			// Ending the bubble would end the process (synctest reports a deadlock): it is
			// left waiting, outside the bubble's sight, and the leak was reported at Stop.
			<-forever
		}
	})
	b.id = <-started
	return b.do(func() error { return b.impl.Start(setup, world) })
}

func (b *bubbled) Deliver(d sim.Delivery) error {
	return b.do(func() error { return b.impl.Deliver(d) })
}

func (b *bubbled) Stop() error {
	if b.stuck {
		return nil // the error was the step's
	}
	err := b.do(b.impl.Stop)
	close(b.ops)
	if note := b.impl.leakNote(); note != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	return err
}

// do runs op on the bubble's root and waits for it, at most servedStallLimit.
func (b *bubbled) do(op func() error) error {
	if b.stuck {
		return errors.New("the session is abandoned: an earlier step never ended")
	}
	b.ops <- op
	timer := time.NewTimer(servedStallLimit)
	defer timer.Stop()
	select {
	case err := <-b.replies:
		return err
	case <-timer.C:
		b.stuck = true
		return notIdleError(b.id, servedStallLimit)
	}
}

// Serve serves a Go port over the wire protocol, as protocol.Serve serves the reference: with it,
// a port verified in-process by Test is also an implementation for turnstile conform and
// explore, through a main of a few lines:
//
//	func main() {
//		if err := porttest.Serve(os.Stdin, os.Stdout, myport.Port{}); err != nil {
//			fmt.Fprintln(os.Stderr, "my adapter:", err)
//			os.Exit(1)
//		}
//	}
//
// and then `turnstile conform --impl "go run ./cmd/myport-adapter"`. Each session runs in
// a testing/synctest bubble of its own, as Test runs a scenario (testing.MainStart gives the
// bubbles outside go test; meanwhile os.Stdout is os.Stderr): the port's own goroutines,
// channels and timers are seen, its clock is the world's, and a port waiting on what the
// bubble cannot see (a mutex, real I/O) fails that scenario after 20 s with an error naming
// the kit's rule. Built with a Go other than 1.26, Serve counts the port's goroutines
// waiting in Env's Stream and Tool instead (a port must then start none of its own) and
// serves no Agent.
//
// A Hello that names an unknown hook or feature, or no pi version, is an error before
// anything is served (as Test fails on it), and a panic in Run or in a task of Env.Parallel
// fails that scenario with the panic's stack.
func Serve(r io.Reader, w io.Writer, port Port) error {
	return withBubbles(func(bubble func(func())) error {
		h := portHello(port, bubble != nil)
		if err := checkHello(h); err != nil {
			return fmt.Errorf("the port's Hello(): %w", err)
		}
		if h.Name == "" {
			h.Name = "go-port"
		}
		if h.Version == "" {
			h.Version = "devel" // the protocol requires one
		}
		if bubble == nil {
			return protocol.ServeImpl(r, w, h, func() sim.Implementation { return &inProcess{port: port, idle: newIdleTracker()} })
		}
		return protocol.ServeImpl(r, w, h, func() sim.Implementation {
			return &bubbled{bubble: bubble, impl: &inProcess{port: port}}
		})
	})
}
