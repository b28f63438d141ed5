package protocol

import (
	"strings"
)

// Shortcuts are the parts of the exchange that let the harness and an implementation wait
// for each other less, which the implementation's hello asks for: deliveries sent before it
// is idle (PROTOCOL.md §14) and standing answers promised at a session's start (§15). A
// failure that goes away when they are turned off (--one-at-a-time) lies in how the adapter
// takes them, not in the loop.
type Shortcuts struct {
	DeliveriesAhead bool
	StandingAnswers bool
}

// Note tells how to rule the shortcuts taken out, for a command (e.g. "turnstile conform")
// that failed; "" when none was taken.
func (s Shortcuts) Note(command string) string {
	took, likely := s.Taken()
	if len(took) == 0 {
		return ""
	}
	return strings.Join(took, "; ") + ":\nif the failures go away with " + command + " --one-at-a-time, they are the cause: most likely the adapter\n" +
		strings.Join(likely, ", or ") + "\n"
}

// Taken says which shortcuts were taken, and for each what an adapter most likely gets
// wrong in taking it.
func (s Shortcuts) Taken() (took, likely []string) {
	if s.DeliveriesAhead {
		took = append(took, "deliveries were sent ahead (the hello says deliveriesAhead, PROTOCOL.md §14)")
		likely = append(likely, "applies a delivery before it is idle instead of queueing it")
	}
	if s.StandingAnswers {
		took = append(took, "standing answers may have been promised (the hello says standingAnswers, PROTOCOL.md §15)")
		likely = append(likely, "gives the loop something other than the start's standing answer")
	}
	return took, likely
}

// shortcuts are the shortcuts the harness takes with an implementation of this hello.
func (p *Process) shortcuts(hello Hello) Shortcuts {
	if p.OneAtATime {
		return Shortcuts{}
	}
	return Shortcuts{DeliveriesAhead: hello.DeliveriesAhead, StandingAnswers: hello.StandingAnswers}
}

// Shortcuts are the shortcuts the harness takes with the implementation, from its hello.
func (p *Process) Shortcuts() (Shortcuts, error) {
	hello, err := p.Hello()
	if err != nil {
		return Shortcuts{}, err
	}
	return p.shortcuts(hello), nil
}

// Shortcuts are the shortcuts the harness takes with the pool's processes (they all run one
// command), asked of an idle process or of a new one.
func (p *Pool) Shortcuts() (Shortcuts, error) {
	proc, err := p.take()
	if err != nil {
		return Shortcuts{}, err
	}
	defer p.give(proc)
	return proc.Shortcuts()
}
