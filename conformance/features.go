package conformance

import (
	"slices"
	"strings"

	"github.com/turnstile-dev/turnstile/sim"
)

// lacksOf returns the optional features impl says in its hello it lacks; none when it cannot
// introduce itself.
func lacksOf(impl sim.Implementation) []string {
	h, ok := impl.(helloer)
	if !ok {
		return nil
	}
	hello, err := h.Hello()
	if err != nil {
		return nil
	}
	return hello.Lacking()
}

// lacksReason is why sc is skipped for an implementation lacking the features lacks, or ""
// when it needs none of them.
func lacksReason(lacks []string, sc *sim.Scenario) string {
	var missing []string
	for _, f := range sim.NeededFeatures(sc) {
		if slices.Contains(lacks, f) {
			missing = append(missing, f)
		}
	}
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return "the scenario needs feature " + missing[0] + ", which the implementation lacks"
	}
	return "the scenario needs features " + strings.Join(missing, ", ") + ", which the implementation lacks"
}
