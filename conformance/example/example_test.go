package example_test

import (
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
)

// TestConformance is all a Go port needs: the curated suite, in-process, one subtest per
// scenario.
func TestConformance(t *testing.T) { conformance.Test(t, example.Port{}) }
