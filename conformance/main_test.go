package conformance_test

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/internal/gctarget"
)

func TestMain(m *testing.M) {
	// The CLI's GC target: the whole-suite verifications of these tests collect as often as
	// conform's do (a tenth less CPU than at Go's default).
	gctarget.Set()
	selfadapter.Main(m, map[string]func() int{"serve": selfadapter.Serve, "crash-once": crashOnce})
}

// flagEnv names the file the crash-once adapter uses to remember its first life.
const flagEnv = "TURNSTILE_TEST_FLAG"

// crashOnce crashes in its first life (the flag file does not exist yet) and serves the
// reference afterwards.
func crashOnce() int {
	flag := os.Getenv(flagEnv)
	if _, err := os.Stat(flag); err != nil {
		_ = os.WriteFile(flag, nil, 0o600)
		in := bufio.NewReader(os.Stdin)
		_, _ = in.ReadString('\n')
		fmt.Println(`{"type":"hello","protocol":1,"name":"crash-once","version":"1","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"]}}`)
		_, _ = in.ReadString('\n')
		fmt.Fprintln(os.Stderr, "first life: crashing")
		return 7
	}
	return selfadapter.Serve()
}
