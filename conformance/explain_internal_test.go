package conformance

import (
	"testing"

	"github.com/turnstile-dev/turnstile/diagnose"
)

// TestAChangeThatOnlyShrinksAFindingExplainsNothing: turning a pi change that leaves every
// finding, one of them for fewer entries (the reference so turned does less where the
// implementation did something else), is no version cause; one that makes a finding go is.
func TestAChangeThatOnlyShrinksAFindingExplainsNothing(t *testing.T) {
	lacking := func(n int) diagnose.Finding {
		return diagnose.Finding{Kind: diagnose.Divergence, Signature: "R-ABORT-STREAM: missing deliver streamEvent", Count: n}
	}
	field := diagnose.Finding{Kind: diagnose.Divergence, Signature: "R-ABORT-STREAM: event message_end assistant data.message.api differs", Count: 1}
	if explainsSome([]diagnose.Finding{lacking(32), field}, []diagnose.Finding{lacking(40), field}) {
		t.Error("a region that only shrinks is explained")
	}
	if !explainsSome([]diagnose.Finding{lacking(40)}, []diagnose.Finding{lacking(40), field}) {
		t.Error("a finding that goes is not explained")
	}
}
