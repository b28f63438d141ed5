package porttest_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
)

func TestMain(m *testing.M) {
	selfadapter.Main(m, map[string]func() int{"stuck-port": stuckPort})
}

// stuckPort serves stuckGoPort with a stall limit of a second.
func stuckPort() int {
	porttest.SetServedStallLimit(time.Second)
	if err := porttest.Serve(os.Stdin, os.Stdout, stuckGoPort{}); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}
