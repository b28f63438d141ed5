package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/diagnose"
	"github.com/turnstile-dev/turnstile/levels"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// helloOf returns impl's hello: the reference's (every feature) when it cannot introduce
// itself.
func helloOf(impl sim.Implementation) protocol.Hello {
	h, ok := impl.(helloer)
	if !ok {
		return protocol.Hello{Protocol: protocol.ProtocolVersion}
	}
	hello, err := h.Hello()
	if err != nil {
		return protocol.Hello{Protocol: protocol.ProtocolVersion}
	}
	return hello
}

// LacksReason is why sc is skipped for an implementation introducing itself with h, or ""
// when it has every feature sc needs.
func LacksReason(h protocol.Hello, sc *sim.Scenario) string {
	lacks := h.Lacking()
	var missing []string
	for _, f := range sim.NeededFeatures(sc) {
		if slices.Contains(lacks, f) {
			missing = append(missing, f)
		}
	}
	var why string
	switch len(missing) {
	case 0:
		return ""
	case 1:
		why = "the scenario needs feature " + missing[0] + ", which the implementation lacks"
	default:
		why = "the scenario needs features " + strings.Join(missing, ", ") + ", which the implementation lacks"
	}
	for _, f := range missing {
		if h.Protocol < 2 && slices.Contains(sim.ProtocolTwoFeatures, f) && !slices.Contains(h.Lacks, f) {
			return why + " (it speaks protocol 1; the feature needs version 2, PROTOCOL.md §13)"
		}
	}
	return why
}

// lacksObserved is why a scenario is skipped when the reference's run of it (want) needs a
// feature the implementation lacks that the scenario's file does not show (a request the
// script did not expect throws from the stream), or "".
func lacksObserved(h protocol.Hello, want *trace.Trace) string {
	var missing []string
	for _, f := range sim.ObservedFeatures(want) {
		if slices.Contains(h.Lacking(), f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "the reference's run of the scenario needs feature " + strings.Join(missing, ", ") + ", which the implementation lacks"
}

// conventionsNotFollowed is the rules of pi's conventions that the implementation's trace
// breaks where the reference's does not, at pi's level: what core level leaves out.
func conventionsNotFollowed(desc diagnose.Scenario, want, got *trace.Trace, profile trace.Profile, h protocol.Hello) []string {
	c := trace.Compare(want, got, profile)
	if c.Equal() {
		return nil
	}
	desc.Expect = nil
	var out []string
	for _, f := range diagnose.Diagnose(desc, c, diagnose.Options{}) {
		if levels.IsConvention(f.RuleID) && !slices.Contains(out, f.RuleID) && !slices.Contains(h.Follows, f.RuleID) {
			out = append(out, f.RuleID)
		}
	}
	slices.Sort(out)
	return out
}

// SkipReason is why conform would not run scenario sc against impl, or "": a scenario of a
// later pi than it tracks (tracks, else its hello's), a hook it does not install, a feature
// it lacks (or its protocol version cannot carry), one pinning only pi's conventions at core
// level. `turnstile test --impl` skips exactly these.
func SkipReason(impl sim.Implementation, sc *sim.Scenario, tracks string, level levels.Level) string {
	h := helloOf(impl)
	if tracks == "" {
		tracks = h.Tracks
	}
	if sc.Since != "" && tracks != "" && VersionLess(tracks, sc.Since) {
		return fmt.Sprintf("the scenario pins behaviour of pi %s; the implementation tracks pi %s", sc.Since, tracks)
	}
	if _, ok := impl.(helloer); ok {
		for _, hook := range sc.Hooks.Installed() {
			if !slices.Contains(h.Hooks, hook) {
				return (&skipError{hook: hook}).Error()
			}
		}
	}
	if why := LacksReason(h, sc); why != "" {
		return why
	}
	if level == levels.Core && levels.ConventionsOnly(sc.Rules) {
		return "the scenario pins only pi's conventions (" + strings.Join(sc.Rules, ", ") + "), not judged at core level"
	}
	return ""
}
