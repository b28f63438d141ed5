// Package porttest checks a Go port of pi's agent loop against pi, the way testing/fstest
// checks a file system: write a Port, call Test from go test, or Serve it to turnstile
// conform and explore. Every scenario runs in a testing/synctest bubble whose clock is the
// world's. Package piwire (conformance/piwire) writes pi's JSON shapes; kits/go/README.md is
// the guide. The verdicts are package conformance's, the wire package conformance/protocol's.
package porttest

import (
	"slices"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// Setup is one scenario's configuration, as Env.Setup returns it.
type Setup = sim.Setup

// Hello introduces a port: its name, the pi version it tracks, the hooks it has, the
// optional features it lacks and the protocol version it speaks.
type Hello = protocol.Hello

// Report is a run's verdicts, findings and causes, as turnstile conform's JSON report.
type Report = conformance.Report

// AllHooks lists every hook by pi's name, for Hello.Hooks of a port that has them all.
var AllHooks = slices.Clone(protocol.AllHooks)
