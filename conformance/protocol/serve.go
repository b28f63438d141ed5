package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// ReferenceName is the name the reference loop gives in its hello.
const ReferenceName = "turnstile-reference"

// Serve serves the reference loop (sim.NewReference) over the wire protocol: it reads the
// harness's messages from r and writes the implementation's to w, a session per scenario,
// until shutdown or the end of r. It returns nil then, and an error when the harness broke
// the protocol (after telling it so with an error message).
//
// The reference's calls are synchronous: while one is outstanding, its task is blocked in
// Port.Call and the next line read must be that call's answer.
func Serve(r io.Reader, w io.Writer) error {
	hello := Hello{Name: ReferenceName, Version: moduleVersion(), Tracks: Tracks, Hooks: AllHooks, Protocol: ProtocolVersion}
	return serve(r, w, hello, func() sim.Implementation { return sim.NewReference() }, true)
}

// ServeImpl serves the implementations newImpl makes, one per session, introduced by hello,
// as Serve serves the reference (the Go kit serves a port with it). Each line is written as
// it is sent: a port that hangs mid-step has shown the harness all it did.
func ServeImpl(r io.Reader, w io.Writer, hello Hello, newImpl func() sim.Implementation) error {
	return serve(r, w, hello, newImpl, false)
}

// serve is ServeImpl; hold says a step always ends (the reference, on its cooperative
// scheduler), so the notifications a step sends may be held to be written together.
func serve(r io.Reader, w io.Writer, hello Hello, newImpl func() sim.Implementation, hold bool) error {
	s := &server{out: w, hello: hello, newImpl: newImpl}
	if hold {
		// The reference runs in this goroutine alone: it reads each line when it needs it.
		s.lines = newLineReader(r, DefaultMaxLine)
	} else {
		s.in, s.done = make(chan received), make(chan struct{})
		defer close(s.done)
		go s.read(r)
	}
	return s.run()
}

// received is one line from the harness, decoded, or the reason there is none.
type received struct {
	line int
	msg  Message
	err  error
}

type server struct {
	// in hands the lines read by a goroutine of their own to the server (ServeImpl: a port's
	// goroutines may call while the server waits); lines, when set, is read in the server's
	// goroutine instead (Serve), without a goroutine's wake-up a line; lost is the first
	// line that had no message, returned again after.
	in    chan received
	done  chan struct{}
	lines *lineReader
	lost  *received

	// hello is what the implementation says of itself; newImpl makes one per session.
	hello   Hello
	newImpl func() sim.Implementation

	outMu sync.Mutex
	out   io.Writer
	// held are the lines of notifications sent while a step runs, when lines is set (Serve),
	// written with the step's next line that is not one (a call that waits for its answer,
	// the reply) or at the step's end: a write a step, not a write a line. stepping says a
	// step runs.
	held     []byte
	stepping atomic.Bool

	sess   *serveSession
	nextID int64
	// queued holds the deliveries that came ahead, while a call waited for its answer
	// (PROTOCOL.md §14); each is applied once the session is idle.
	queued []received

	// gone is set once the harness can no longer be talked to (end of input, shutdown, a
	// write failure); fatal holds a protocol violation seen inside a call.
	gone     bool
	shutdown bool
	fatal    error
}

type serveSession struct {
	id  int
	ref sim.Implementation
}

// read decodes the harness's lines and hands them to the server, one at a time.
func (s *server) read(r io.Reader) {
	lr := newLineReader(r, DefaultMaxLine)
	for {
		rec := readReceived(lr)
		select {
		case s.in <- rec:
		case <-s.done:
			return
		}
		if rec.err != nil {
			return
		}
	}
}

// readReceived reads and decodes the harness's next line.
func readReceived(lr *lineReader) received {
	raw, err := lr.next()
	rec := received{line: lr.n, err: err}
	if err == nil {
		var ok bool
		if rec.msg, ok = readHarnessLine(raw); ok {
			return rec
		}
		rec.msg = Message{}
		if jerr := json.Unmarshal(raw, &rec.msg); jerr != nil {
			rec.err = protocolError(lr.n, fmt.Errorf("not a JSON message: %v: %s", jerr, excerpt(raw)))
		}
	} else if !errors.Is(err, io.EOF) {
		rec.err = protocolError(lr.n, err)
	}
	return rec
}

// receive is the harness's next line, decoded.
func (s *server) receive() received {
	if s.lines == nil {
		return <-s.in
	}
	if s.lost != nil {
		return *s.lost
	}
	rec := readReceived(s.lines)
	if rec.err != nil {
		s.lost = &rec
	}
	return rec
}

func (s *server) run() error {
	for {
		rec := s.next()
		if rec.err != nil {
			s.endSession()
			if errors.Is(rec.err, io.EOF) {
				return nil
			}
			return s.reject(rec.err)
		}
		s.stepping.Store(true)
		done, err := s.handle(rec)
		s.stepping.Store(false)
		s.flush()
		if done {
			return err
		}
	}
}

// handle acts on one message from the harness; done says the server stops, returning err.
func (s *server) handle(rec received) (done bool, err error) {
	m := rec.msg
	switch m.Type {
	case TypeHello:
		return s.greet(m)
	case TypeStart:
		return s.startSession(rec)
	case TypeDeliver:
		if err := s.check(rec, m); err != nil {
			return true, s.reject(err)
		}
		if m.Delivery == nil {
			return true, s.reject(protocolError(rec.line, errors.New("deliver without a delivery")))
		}
		err := s.sess.ref.Deliver(*m.Delivery)
		return s.reply(m.Session, err, "delivery "+m.Delivery.Kind, TypeIdle)
	case TypeStop:
		if err := s.check(rec, m); err != nil {
			return true, s.reject(err)
		}
		err := s.sess.ref.Stop()
		s.sess = nil
		// A stop error is what no trace entry shows (a Go port's event that cannot be
		// encoded): the harness records it.
		return s.reply(m.Session, err, "stop", TypeStopped)
	case TypeShutdown:
		s.gone = true
		s.endSession()
		return true, nil
	case TypeAnswer:
		return true, s.reject(protocolError(rec.line, fmt.Errorf("an answer for call id %d, but no call is outstanding", m.ID)))
	default:
		return true, s.reject(protocolError(rec.line, fmt.Errorf("unknown message type %q (expected hello, start, answer, deliver, stop or shutdown)", m.Type)))
	}
}

// greet answers the harness's hello with the protocol version both speak and what the
// implementation is.
func (s *server) greet(m Message) (done bool, err error) {
	version := max(s.hello.Protocol, 1)
	if !slices.Contains(m.Protocols, version) {
		if m.Protocol != 1 {
			return true, s.reject(fmt.Errorf("the harness speaks protocol %d; this implementation speaks 1 to %d", m.Protocol, version))
		}
		version = 1 // a harness of version 1 (no protocols field)
	}
	hooks := s.hello.Hooks
	if hooks == nil {
		hooks = []string{}
	}
	s.send(Message{Type: TypeHello, Protocol: version, Name: s.hello.Name, Version: s.hello.Version,
		Tracks: s.hello.Tracks, Capabilities: &Capabilities{Hooks: hooks, Lacks: s.hello.Lacks, DeliveriesAhead: true, StandingAnswers: true}})
	return false, nil
}

// startSession starts a session with a new implementation.
func (s *server) startSession(rec received) (done bool, err error) {
	m := rec.msg
	if s.sess != nil {
		return true, s.reject(protocolError(rec.line, fmt.Errorf("start of session %d while session %d runs", m.Session, s.sess.id)))
	}
	if m.Setup == nil {
		return true, s.reject(protocolError(rec.line, errors.New("start without a setup")))
	}
	s.sess = &serveSession{id: m.Session, ref: s.newImpl()}
	serr := s.sess.ref.Start(*m.Setup, &servePort{s: s, session: m.Session, standing: m.StandingAnswers})
	return s.reply(m.Session, serr, "start", TypeIdle)
}

// reply ends a step of the session: the server stops if the step broke the protocol, else it
// sends the step's error (prefixed with what) or ok, a message of type ok.
func (s *server) reply(session int, stepErr error, what, ok string) (done bool, err error) {
	if done, ferr := s.afterStep(); done {
		return true, ferr
	}
	if stepErr != nil {
		s.send(Message{Type: TypeError, Session: session, Message: fmt.Sprintf("%s: %v", what, stepErr)})
		return false, nil
	}
	s.send(Message{Type: ok, Session: session})
	return false, nil
}

// next is the next message to act on once idle: a delivery that came ahead first.
func (s *server) next() received {
	if len(s.queued) > 0 {
		rec := s.queued[0]
		s.queued = s.queued[1:]
		return rec
	}
	return s.receive()
}

// check requires a running session that m belongs to.
func (s *server) check(rec received, m Message) error {
	switch {
	case s.sess == nil:
		return protocolError(rec.line, fmt.Errorf("%s for session %d, but no session is running", m.Type, m.Session))
	case m.Session != s.sess.id:
		return protocolError(rec.line, fmt.Errorf("%s for session %d, but session %d is running", m.Type, m.Session, s.sess.id))
	}
	return nil
}

// afterStep handles what a call may have run into while the reference ran: the end of the
// input, a shutdown, a protocol violation. done reports that serving is over.
func (s *server) afterStep() (done bool, err error) {
	switch {
	case s.fatal != nil:
		s.endSession()
		return true, s.reject(s.fatal)
	case s.gone:
		s.endSession()
		return true, nil
	}
	return false, nil
}

// endSession stops the running session, if any; its calls fail from now on.
func (s *server) endSession() {
	if s.sess != nil {
		s.gone = true
		_ = s.sess.ref.Stop()
		s.sess = nil
	}
}

// reject tells the harness what went wrong and returns it.
func (s *server) reject(err error) error {
	s.send(Message{Type: TypeError, Message: err.Error()})
	return err
}

func (s *server) send(m Message) {
	line, err := encode(m)
	if err != nil {
		line, _ = encode(Message{Type: TypeError, Message: err.Error()})
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.held = append(s.held, line...)
	if s.lines != nil && s.stepping.Load() && len(s.held) < maxHeld && (m.Type == TypeNotify || m.Type == TypeCall && m.Standing) {
		return
	}
	s.writeHeld()
}

// maxHeld bounds the bytes of notifications held for one write.
const maxHeld = 64 << 10

// flush writes the lines held, if any.
func (s *server) flush() {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.writeHeld()
}

// writeHeld writes the lines held; s.outMu is held.
func (s *server) writeHeld() {
	if len(s.held) == 0 {
		return
	}
	if _, err := s.out.Write(s.held); err != nil {
		s.gone = true
	}
	s.held = s.held[:0]
}

// servePort is the world as the reference sees it when served: calls and notifications
// become lines.
type servePort struct {
	s       *server
	session int
	// standing holds the answers the session's start promised (PROTOCOL.md §15).
	standing map[string]json.RawMessage
}

// Call implements sim.Port: it writes the call and waits for its answer, or, for a hook whose
// answer the start promised, marks the call standing and returns that answer at once.
func (p *servePort) Call(c sim.Call) sim.Answer {
	s := p.s
	if s.gone || s.fatal != nil {
		return sim.Answer{Error: "the harness has gone"}
	}
	s.nextID++
	id := s.nextID
	if want, ok := p.standing[c.Name]; ok && c.Kind == trace.CallHook {
		s.send(Message{Type: TypeCall, ID: id, Session: p.session, Call: &c, Standing: true})
		return sim.Answer{Data: bytes.Clone(want)}
	}
	s.send(Message{Type: TypeCall, ID: id, Session: p.session, Call: &c})
	rec := s.receive()
	for rec.err == nil && rec.msg.Type == TypeDeliver {
		s.queued = append(s.queued, rec) // sent ahead (§14): applied once idle
		rec = s.receive()
	}
	switch {
	case rec.err != nil && errors.Is(rec.err, io.EOF):
		s.gone = true
		return sim.Answer{Error: "the harness closed the connection"}
	case rec.err != nil:
		s.fatal = rec.err
	case rec.msg.Type == TypeShutdown:
		s.gone = true
		return sim.Answer{Error: "the harness shut the session down"}
	case rec.msg.Type != TypeAnswer:
		s.fatal = protocolError(rec.line, fmt.Errorf("expected the answer to call %d, got a %q message", id, rec.msg.Type))
	case rec.msg.ID != id:
		s.fatal = protocolError(rec.line, fmt.Errorf("an answer for unknown call id %d (the outstanding call is %d)", rec.msg.ID, id))
	default:
		data := rec.msg.Data
		if string(data) == "null" {
			data = nil
		}
		return sim.Answer{Data: data, Error: rec.msg.Error, Abort: rec.msg.Abort, Wait: rec.msg.Wait, UntilAbort: rec.msg.UntilAbort}
	}
	return sim.Answer{Error: s.fatal.Error()}
}

// Notify implements sim.Port.
func (p *servePort) Notify(n sim.Notification) {
	if p.s.gone || p.s.fatal != nil {
		return
	}
	p.s.send(Message{Type: TypeNotify, Session: p.session, Notification: &n})
}

// moduleVersion is the turnstile module's version as built, "devel" when unknown.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Path == "github.com/turnstile-dev/turnstile" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			return info.Main.Version
		}
		for _, dep := range info.Deps {
			if dep.Path == "github.com/turnstile-dev/turnstile" {
				return dep.Version
			}
		}
	}
	return "devel"
}
