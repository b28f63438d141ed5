package trace

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestMain(m *testing.M) {
	// The CLI's GC target, as turnstile sets it: these tests run whole simulations and
	// traces, which allocate as turnstile's commands do. GOGC, when set, still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
