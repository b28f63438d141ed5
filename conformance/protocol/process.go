package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Defaults of Process.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultHelloTimeout = 10 * time.Second
	// tailLines is how many of the last stdout and stderr lines a crash report shows.
	tailLines = 20
	// exitGrace is how long the harness waits for a process that closed its stdout to exit, or
	// for a killed one to be reaped.
	exitGrace = 2 * time.Second
)

// Process is an implementation under test reached through the wire protocol: a command
// started once, greeted once, and then driven scenario by scenario (a session each) over its
// stdin and stdout. It implements sim.Implementation.
//
// A process that breaks the protocol, crashes, or does not become idle within Timeout fails
// the scenario with an error saying so; it is killed (with its whole process group) and
// started afresh for the next scenario. Call Close when done.
//
// A Process is driven by one goroutine at a time (sim.Run); only Kill may be called
// concurrently.
type Process struct {
	// Command is the program and its arguments.
	Command []string
	// Dir is the working directory; "" is the current one.
	Dir string
	// Env holds extra environment variables (KEY=value), added to the harness's own.
	Env []string
	// Timeout bounds one scenario, from start to stopped; 0 means DefaultTimeout.
	Timeout time.Duration
	// HelloTimeout bounds the wait for the hello after starting the command; 0 means
	// DefaultHelloTimeout.
	HelloTimeout time.Duration
	// MaxLine is the longest stdout line accepted, in bytes; 0 means DefaultMaxLine.
	MaxLine int
	// Stderr, when set, receives a copy of the implementation's stderr, line by line, from
	// another goroutine.
	Stderr io.Writer
	// Log, when set, receives every protocol line in both directions, prefixed with "> "
	// (harness to implementation) or "< " (implementation to harness).
	Log io.Writer
	// OneAtATime sends each delivery only once the implementation is idle, even to one whose
	// hello says it takes deliveries ahead (PROTOCOL.md §14), and promises no standing
	// answers (§15): the plain exchange, to read in a Log or to compare with.
	OneAtATime bool

	mu    sync.Mutex // guards child against Kill
	child *child
	hello Hello

	session int
	memo    wireMemo // the session's messages, decoded
	// shapes are the session's lines whose data break pi's shape, read all the same.
	shapes   ShapeProblems
	port     sim.Port
	deadline time.Time
	phase    string
	ids      map[int64]bool
	// ahead holds the deliveries sent before the implementation was idle (§14) that the
	// world has not released yet, in order; aheadBytes is the size of the lines sent ahead
	// whose idle has not come yet.
	ahead      []sentAhead
	aheadBytes int
	// standing holds the answers promised at the session's start (§15), by hook name.
	standing map[string]json.RawMessage
	// lastStanding describes the last line read when it was a call marked standing, which
	// gets no answer: a timeout right after it says so.
	lastStanding string
	// overBudget is the budget that stopped the run, once one has: the implementation gets
	// overBudgetLines more lines and overBudgetTime to report idle or stopped, then is ended.
	overBudget      *sim.BudgetError
	overBudgetLines int
	// afterEnd counts the lines read once the world has ended (closed after the run, every
	// call refused): an implementation that never stops is ended past maxAfterEnd.
	afterEnd int
}

// What an implementation may still send once a budget stopped the run (a loop winding down
// after the world refused its call), before it is ended as a runaway.
const (
	overBudgetLines = 1_000
	overBudgetTime  = time.Second
)

// maxAfterEnd is how many lines an implementation may send once the run has ended (stop
// sent, the world closed) before it reports stopped: winding a run down, and the deliveries
// sent ahead, take far fewer.
const maxAfterEnd = 10_000

// errOverBudget stops serving an implementation that went on after a budget stopped the
// run; Start, Deliver and Stop return nil for it, the world holding the verdict.
var errOverBudget = errors.New("the run is over its budget")

// sentAhead is a delivery sent ahead and the size of its line.
type sentAhead struct {
	d    sim.Delivery
	size int
}

// Bounds of the deliveries sent ahead: well under a pipe's buffer (64 KiB on Linux), so a
// write never blocks on an implementation that reads only once it is idle.
const (
	maxAhead      = 16
	maxAheadBytes = 32 << 10
)

// Hello starts the implementation if needed and returns its introduction.
func (p *Process) Hello() (Hello, error) {
	if err := p.ensure(); err != nil {
		return Hello{}, err
	}
	return p.hello, nil
}

// Start implements sim.Implementation: it sends start and serves the implementation's calls
// until it reports idle.
func (p *Process) Start(setup sim.Setup, port sim.Port) error {
	if err := p.ensure(); err != nil {
		return err
	}
	p.session++
	p.memo = wireMemo{}
	p.shapes = ShapeProblems{}
	p.port = port
	p.ids = map[int64]bool{}
	p.ahead, p.aheadBytes = p.ahead[:0], 0
	p.deadline = time.Now().Add(orDuration(p.Timeout, DefaultTimeout))
	p.phase = "start"
	p.standing = nil
	p.overBudget, p.overBudgetLines, p.afterEnd = nil, 0, 0
	if c := p.current(); c != nil {
		c.outTail.mark()
		c.errTail.mark()
	}
	if world, ok := port.(sim.Standing); ok && p.hello.StandingAnswers && !p.OneAtATime {
		p.standing = world.StandingAnswers()
	}
	if err := p.send(Message{Type: TypeStart, Session: p.session, Setup: &setup, StandingAnswers: p.standing}); err != nil {
		return p.abort(err)
	}
	return budgetEnded(p.await(TypeIdle))
}

// budgetEnded is err, but nil for errOverBudget: the implementation was ended, and the
// world's budget verdict is the run's.
func budgetEnded(err error) error {
	if errors.Is(err, errOverBudget) {
		return nil
	}
	return err
}

// Deliver implements sim.Implementation: it sends the delivery and serves the
// implementation's calls until it reports idle.
func (p *Process) Deliver(d sim.Delivery) error {
	if p.current() == nil {
		return errors.New("deliver: the implementation is not running")
	}
	p.phase = fmt.Sprintf("delivery %s at %dms", d.Kind, d.Now)
	// The world has released d: it is no longer due. Sent ahead, its line counts against the
	// bounds until its idle comes.
	aheadSize := 0
	if len(p.ahead) == 0 {
		line, err := deliverLine(p.session, &d)
		if err == nil {
			err = p.write(line)
		}
		if err != nil {
			return p.abort(err)
		}
	} else if first := p.ahead[0]; first.d.Kind != d.Kind || first.d.Target != d.Target || first.d.Now != d.Now || !bytes.Equal(first.d.Data, d.Data) {
		return p.abort(fmt.Errorf("internal error: the world released %s %q at %dms, but %s %q at %dms was sent ahead (with data %s, released with %s)",
			d.Kind, d.Target, d.Now, first.d.Kind, first.d.Target, first.d.Now, excerpt(first.d.Data), excerpt(d.Data)))
	} else {
		aheadSize = first.size
		p.ahead = p.ahead[1:]
	}
	if err := p.sendAhead(); err != nil {
		return p.abort(err)
	}
	if err := p.await(TypeIdle); err != nil {
		return budgetEnded(err)
	}
	p.aheadBytes -= aheadSize
	return nil
}

// sendAhead sends the deliveries the world says are certain to come next and were not sent
// yet, within the bounds, when the implementation takes deliveries ahead (§14).
func (p *Process) sendAhead() error {
	world, ok := p.port.(sim.Ahead)
	if !ok || p.OneAtATime || !p.hello.DeliveriesAhead || len(p.ahead) >= maxAhead || p.aheadBytes >= maxAheadBytes {
		return nil
	}
	due := world.Due(maxAhead)
	for i := len(p.ahead); i < len(due) && len(p.ahead) < maxAhead; i++ {
		line, err := deliverLine(p.session, &due[i])
		if err != nil {
			return err
		}
		if p.aheadBytes+len(line) > maxAheadBytes {
			return nil
		}
		if err := p.write(line); err != nil {
			return err
		}
		p.ahead = append(p.ahead, sentAhead{d: due[i], size: len(line)})
		p.aheadBytes += len(line)
	}
	return nil
}

// Stop implements sim.Implementation: it sends stop and answers the calls of the winding-down
// run until the implementation reports stopped. After a failure the process is already gone
// and Stop does nothing.
func (p *Process) Stop() error {
	if p.current() == nil {
		return nil
	}
	p.phase = "stop"
	// Deliveries sent ahead that the run no longer needs (it ended, or a budget stopped it)
	// are applied all the same: their idles come first, or stop would reach the
	// implementation while one of their calls waits for its answer. The world is closed by
	// now: their calls get errors, their events are not recorded.
	for range p.ahead {
		if err := p.await(TypeIdle); err != nil {
			return budgetEnded(err)
		}
	}
	p.ahead, p.aheadBytes = p.ahead[:0], 0
	if err := p.send(Message{Type: TypeStop, Session: p.session}); err != nil {
		return p.abort(err)
	}
	if err := p.await(TypeStopped); err != nil {
		return budgetEnded(err)
	}
	if len(p.shapes.order) > 0 {
		return &ShapeError{p.shapes.String()}
	}
	return nil
}

// Close shuts the implementation down: shutdown, then a kill if it has not exited within
// a grace period. It returns the exit status when it is not 0.
func (p *Process) Close() error {
	c := p.current()
	if c == nil {
		return nil
	}
	line, _ := encode(Message{Type: TypeShutdown})
	if p.Log != nil {
		_, _ = fmt.Fprintf(p.Log, "> %s", line)
	}
	_ = c.stdin.SetWriteDeadline(time.Now().Add(exitGrace))
	_, _ = c.stdin.Write(line)
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(exitGrace):
	}
	p.teardown()
	select {
	case <-c.exited:
		if c.waitErr != nil && !c.killed.Load() {
			return fmt.Errorf("%s: %w", p.name(), c.waitErr)
		}
	default:
	}
	return nil
}

// Kill ends the implementation at once, with its process group. The scenario in progress, if
// any, fails; the next one starts a fresh process. It is safe to call from any goroutine.
func (p *Process) Kill() {
	if c := p.current(); c != nil {
		c.kill()
	}
}

func (p *Process) current() *child {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.child
}

func (p *Process) name() string {
	if len(p.Command) == 0 {
		return "implementation"
	}
	return p.Command[0]
}

// ensure starts the command and does the hello handshake, unless it is running.
func (p *Process) ensure() error {
	if c := p.current(); c != nil {
		select {
		case <-c.exited:
			p.teardown() // it died (or was killed) between scenarios: start afresh
		default:
			return nil
		}
	}
	if len(p.Command) == 0 {
		return errors.New("protocol.Process: no command")
	}
	c, err := startChild(p)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.child = c
	p.mu.Unlock()
	p.phase = "hello"
	p.deadline = time.Now().Add(orDuration(p.HelloTimeout, DefaultHelloTimeout))
	if err := p.send(Message{Type: TypeHello, Protocol: 1, Protocols: Protocols}); err != nil {
		return p.abort(err)
	}
	in, err := p.receive()
	if err != nil {
		return p.abort(err)
	}
	m, err := p.decode(in)
	if err != nil {
		return p.abort(err)
	}
	switch {
	case m.Type == TypeError:
		return p.abort(fmt.Errorf("the implementation refused the hello: %s", m.Message))
	case m.Type != TypeHello:
		return p.abort(protocolError(in.line, fmt.Errorf("expected a hello first, got a %q message", m.Type)))
	}
	hooks := []string{}
	if m.Capabilities != nil && m.Capabilities.Hooks != nil {
		hooks = m.Capabilities.Hooks
	}
	p.hello = Hello{Name: m.Name, Version: m.Version, Tracks: m.Tracks, Hooks: hooks, Protocol: m.Protocol}
	if m.Capabilities != nil {
		p.hello.Lacks = m.Capabilities.Lacks
		p.hello.Follows = m.Capabilities.Follows
		p.hello.DeliveriesAhead = m.Capabilities.DeliveriesAhead
		p.hello.StandingAnswers = m.Capabilities.StandingAnswers
	}
	return nil
}

// await serves the implementation until it sends the message type until (idle or stopped).
func (p *Process) await(until string) error {
	for {
		if err := p.checkBudget(); err != nil {
			return p.abort(err)
		}
		in, err := p.receive()
		if err != nil {
			return p.abort(err)
		}
		m, err := p.decode(in)
		if err != nil {
			return p.abort(err)
		}
		p.lastStanding = ""
		if m.Type != TypeError && m.Session != p.session {
			return p.abort(protocolError(in.line, fmt.Errorf("a %q message for session %d, but session %d is running", m.Type, m.Session, p.session)))
		}
		switch m.Type {
		case TypeCall:
			if p.ids[m.ID] {
				return p.abort(protocolError(in.line, fmt.Errorf("call id %d is already in use in session %d (every call needs a new id)", m.ID, p.session)))
			}
			p.ids[m.ID] = true
			if err := p.serveCall(in.line, m, until == TypeIdle); err != nil {
				return p.abort(err)
			}
		case TypeNotify:
			p.port.Notify(*m.Notification)
		case TypeIdle:
			if until == TypeIdle {
				return nil
			}
			// A run winding down after stop may still report idle; stopped is what counts.
		case TypeStopped:
			if until != TypeStopped {
				return p.abort(protocolError(in.line, fmt.Errorf("stopped during %s, before stop was sent", p.phase)))
			}
			return nil
		case TypeError:
			return p.abort(fmt.Errorf("the implementation reported an error during %s: %s", p.phase, m.Message))
		default:
			return p.abort(protocolError(in.line, fmt.Errorf("unexpected %q message during %s", m.Type, p.phase)))
		}
	}
}

// checkBudget notes when a budget has stopped the run, and gives errOverBudget once the
// implementation has had its grace to wind down: overBudgetLines lines more, within
// overBudgetTime (receive gives it at the deadline).
func (p *Process) checkBudget() error {
	if p.overBudget != nil {
		if p.overBudgetLines++; p.overBudgetLines > overBudgetLines {
			return errOverBudget
		}
		return nil
	}
	if world, ok := p.port.(sim.Standing); ok && world.Ended() {
		if p.afterEnd++; p.afterEnd > maxAfterEnd {
			awaited := "idle"
			if p.phase == "stop" {
				awaited = "stopped"
			}
			return fmt.Errorf("the implementation sent over %d lines during %s, after the run had ended, without reporting %s (every call is refused once the run is over; does its loop never stop?)",
				maxAfterEnd, p.phase, awaited)
		}
	}
	world, ok := p.port.(sim.Budgeted)
	if !ok {
		return nil
	}
	if p.overBudget = world.OverBudget(); p.overBudget != nil {
		if d := time.Now().Add(overBudgetTime); d.Before(p.deadline) {
			p.deadline = d
		}
	}
	return nil
}

// serveCall has the world answer a call and writes the answer, then, when ahead is set, the
// deliveries certain to come next (§14). A stream call whose model the line told for certain
// is answered before the world reads its context (sim.EarlyAnswer), which it reads once the
// answer and the deliveries are on their way.
//
// No answer is written to a call the implementation marked standing (§15): it took the
// answer the start promised and waits for none. The world's answer must then be the one
// promised. Once the simulation has ended the world answers every call with an error and
// records nothing; what the implementation took then no longer counts.
func (p *Process) serveCall(line int, m Message, ahead bool) error {
	if m.Standing {
		if err := p.standingCall(line, m); err != nil {
			return err
		}
	} else {
		finish, err := p.answer(m)
		if finish != nil {
			defer finish() // after the answer and the deliveries ahead, whatever becomes of them
		}
		if err != nil {
			return err
		}
	}
	if ahead {
		return p.sendAhead()
	}
	return nil
}

// answer writes the world's answer to call m. When the world answered early, before reading
// the stream's context, finish is what reads it; the caller runs it once the deliveries ahead
// are written.
func (p *Process) answer(m Message) (finish func(), err error) {
	var a sim.Answer
	answered := false
	if early, ok := p.port.(sim.EarlyAnswer); ok && m.streamModel != nil {
		a, finish, answered = early.OpenStream(*m.Call, *m.streamModel)
	}
	if !answered {
		finish, a = nil, p.port.Call(*m.Call)
	}
	out, err := answerLine(m.ID, a)
	if err == nil {
		err = p.write(out)
	}
	return finish, err
}

// standingCall serves a call marked standing (§15).
func (p *Process) standingCall(line int, m Message) error {
	want, promised := p.standing[m.Call.Name]
	if m.Call.Kind != trace.CallHook || !promised {
		what := m.Call.Kind
		if m.Call.Kind == trace.CallHook {
			what = m.Call.Name
		}
		return protocolError(line, fmt.Errorf("call id %d is marked standing, but the start of session %d promised no answer to a %s call (PROTOCOL.md §15: only the hooks in the start's standingAnswers)", m.ID, p.session, what))
	}
	p.lastStanding = fmt.Sprintf("call id %d (%s)", m.ID, m.Call.Name)
	a := p.port.Call(*m.Call)
	switch {
	case a.Error != "" && p.port.(sim.Standing).Ended():
		return nil
	case a.Error != "":
		return protocolError(line, fmt.Errorf("call id %d (%s), marked standing, was refused: %s; the implementation went on with the answer promised (PROTOCOL.md §15), so the run is no longer the one the world sees", m.ID, m.Call.Name, a.Error))
	case a.Abort || !bytes.Equal(a.Data, want):
		return fmt.Errorf("internal error: the world promised %s the standing answer %s, but answered call id %d with %s (abort %v)", m.Call.Name, want, m.ID, excerpt(a.Data), a.Abort)
	}
	return nil
}

// receive waits for the next stdout line until the deadline.
func (p *Process) receive() (inbound, error) {
	c := p.current()
	if c == nil {
		return inbound{}, errors.New("the implementation is not running")
	}
	c.setReadDeadline(p.deadline)
	raw, err := c.out.next()
	in := inbound{line: c.out.n, raw: raw, err: err}
	if err == nil {
		c.outTail.add(raw)
		if p.Log != nil {
			_, _ = fmt.Fprintf(p.Log, "< %s\n", in.raw)
		}
		return in, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		select {
		case <-c.exited: // it exited, and something it started holds stdout open
			return in, p.exitError(c, io.EOF)
		default:
		}
		if p.overBudget != nil {
			return inbound{}, errOverBudget
		}
		return inbound{}, p.timeoutError()
	}
	if errors.Is(err, ErrLineTooLong) {
		return in, protocolError(in.line, err)
	}
	return in, p.exitError(c, err)
}

func (p *Process) decode(in inbound) (Message, error) {
	m, err := parseMessage(in.raw, &p.memo, true) // each line read is a new slice
	var se *schemaError
	if errors.As(err, &se) && se.data && json.Unmarshal(in.raw, &m) == nil && (m.Notification != nil || m.Call != nil) {
		// pi's shape broken inside the data (an event lacking a field): the line is read and
		// recorded as it is, so the run is compared as in-process, and the session's stop
		// reports the problem.
		p.shapes.Add(shapeProblem(in.raw))
		return m, nil
	}
	if err != nil {
		return m, protocolError(in.line, err)
	}
	return m, nil
}

func protocolError(line int, err error) error {
	return fmt.Errorf("protocol error at line %d: %w", line, err)
}

// send writes one message to the implementation's stdin.
func (p *Process) send(m Message) error {
	line, err := encode(m)
	if err != nil {
		return err
	}
	return p.write(line)
}

func (p *Process) write(line []byte) error {
	c := p.current()
	if c == nil {
		return errors.New("the implementation is not running")
	}
	if p.Log != nil {
		_, _ = fmt.Fprintf(p.Log, "> %s", line)
	}
	_ = c.stdin.SetWriteDeadline(p.deadline)
	if _, err := c.stdin.Write(line); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if p.overBudget != nil { // the budget's grace ended while it wrote, as in receive
				return errOverBudget
			}
			return p.timeoutError()
		}
		return p.exitError(c, err)
	}
	return nil
}

// timeoutError is the verdict on an implementation that did not answer in time.
func (p *Process) timeoutError() error {
	d := orDuration(p.Timeout, DefaultTimeout)
	what := "the implementation did not report idle"
	switch p.phase {
	case "hello":
		d = orDuration(p.HelloTimeout, DefaultHelloTimeout)
		what = "no hello from the implementation (a slow start? turnstile --hello-timeout raises the limit)"
	case "stop":
		what = "the implementation did not report stopped"
	}
	err := fmt.Errorf("%w after %v: %s during %s", trace.ErrTimeout, d, what, p.phase)
	if p.lastStanding != "" {
		err = fmt.Errorf("%w; the last line read was %s, marked standing, which the harness never answers: an implementation that marks a call standing goes on with the answer the start promised (PROTOCOL.md §15)", err, p.lastStanding)
	}
	if c := p.current(); c != nil {
		err = fmt.Errorf("%w\n%s", err, c.errTail.titled(c.errTitle))
	}
	return err
}

// exitError describes an implementation whose stdout ended (or whose stdin broke): its exit
// status once it has exited, and the last lines of its output.
func (p *Process) exitError(c *child, cause error) error {
	select {
	case <-c.exited:
	case <-time.After(exitGrace):
	}
	c.awaitStderr(exitGrace)
	var what string
	select {
	case <-c.exited:
		status := "exit status 0"
		if c.waitErr != nil {
			status = c.waitErr.Error()
		}
		what = fmt.Sprintf("the implementation exited (%s) during %s", status, p.phase)
		if p.phase == "hello" {
			what = fmt.Sprintf("the implementation exited (%s) before its hello", status)
		}
	default:
		what = fmt.Sprintf("the implementation closed its stdout during %s (%v)", p.phase, cause)
		if !errors.Is(cause, io.EOF) && !errors.Is(cause, os.ErrClosed) {
			what = fmt.Sprintf("talking to the implementation failed during %s: %v", p.phase, cause)
		}
	}
	return errors.New(what + "\n" + c.tails())
}

// abort kills the implementation after a failure and returns err.
func (p *Process) abort(err error) error {
	p.teardown()
	return err
}

// teardown kills the process group and forgets the child.
func (p *Process) teardown() {
	p.mu.Lock()
	c := p.child
	p.child = nil
	p.mu.Unlock()
	if c != nil {
		c.kill()
		c.release()
	}
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
