// Package porttest checks a Go port of pi's agent loop against pi, the way testing/fstest
// checks a file system: write a Port, call Test from go test, or Serve it to turnstile
// conform and explore. Every scenario runs in a testing/synctest bubble whose clock is the
// world's. Package piwire (conformance/piwire) writes pi's JSON shapes; kits/go/README.md is
// the guide. The types are aliases of package conformance's, which holds the implementation
// (shared with the verifier): go doc conformance.Env lists Env's methods.
package porttest

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// Port is an agent loop in Go: Hello() introduces it, Run(ctx, env) runs one scenario
// through env and returns the run's new messages or the error that failed it.
type Port = conformance.GoPort

// AgentPort is a Port shaped like pi's Agent: NewAgent(env) builds the Agent of one Agent
// scenario; Run still serves the loop scenarios.
type AgentPort = conformance.GoAgentPort

// Agent is the part of pi's Agent the Agent scenarios drive: prompts, queues, abort, state.
type Agent = conformance.Agent

// ContextSubscriber is an Agent whose listeners get its active run's abort signal, as pi's
// do: the kit subscribes through SubscribeContext when the Agent has it.
type ContextSubscriber = conformance.ContextSubscriber

// AgentState is an Agent's observable state: transcript, streaming message, pending tool
// calls, error and what the next poll would take.
type AgentState = conformance.AgentState

// Env is the simulated world as a port sees it: Setup, clock, hooks, streams, tools, events.
type Env = conformance.Env

// Setup is one scenario's configuration, as Env.Setup returns it.
type Setup = sim.Setup

// Stream is an open provider request, as Env.Stream returns it: Next until ok is false,
// then Result.
type Stream = conformance.Stream

// Hello introduces a port: its name, the pi version it tracks, the hooks it has, the
// optional features it lacks and the protocol version it speaks.
type Hello = protocol.Hello

// Option tunes Test and TestFiles.
type Option = conformance.TestOption

// Report is a run's verdicts, findings and causes, as turnstile conform's JSON report.
type Report = conformance.Report

// AllHooks lists every hook by pi's name, for Hello.Hooks of a port that has them all.
var AllHooks = slices.Clone(protocol.AllHooks)

// Test runs the curated suite against port, one subtest per scenario, each failing one
// listing its findings; at the end it logs the causes and "N passed, M failed, K skipped".
func Test(t *testing.T, port Port, opts ...Option) {
	t.Helper()
	conformance.Test(t, port, opts...)
}

// TestFiles is Test with scenario files of one's own (scenarios.Load reads them).
func TestFiles(t *testing.T, port Port, files []*scenarios.File, opts ...Option) {
	t.Helper()
	conformance.TestFiles(t, port, files, opts...)
}

// Serve serves port over the wire protocol on r and w (os.Stdin, os.Stdout), so that
// turnstile conform and explore verify it as any other implementation.
func Serve(r io.Reader, w io.Writer, port Port) error { return conformance.ServePort(r, w, port) }

// Collect stores the run's report in r once every scenario has run.
func Collect(r *Report) Option { return conformance.Collect(r) }

// ExpectFailures names scenarios known to fail: reported as expected, and failing the test
// once one passes, so the list only shrinks.
func ExpectFailures(names ...string) Option { return conformance.ExpectFailures(names...) }

// Tracking claims an older pi than Hello().Tracks: scenarios pinning later behaviour skip.
func Tracking(version string) Option { return conformance.Tracking(version) }

// WithProfile compares under profile (trace.Strict by default; trace.Semantic forgives
// differently worded validator errors).
func WithProfile(profile trace.Profile) Option { return conformance.WithProfile(profile) }

// StallLimit sets how long in real time one scenario may go without progress (60 s; 0: no
// limit) before Test ends the test binary, naming the scenario, with every goroutine's stack.
func StallLimit(d time.Duration) Option { return conformance.StallLimit(d) }
