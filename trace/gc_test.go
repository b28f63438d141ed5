package trace

import (
	"os"
	"testing"

	"github.com/turnstile-dev/turnstile/internal/gctarget"
)

func TestMain(m *testing.M) {
	// The CLI's GC target: these tests run whole simulations and traces, which allocate as
	// turnstile's commands do.
	gctarget.Set()
	os.Exit(m.Run())
}
