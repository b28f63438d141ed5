package conformance

import (
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

// TestTheHeaderSaysWhenAHelloClaimsANewerPi: a port tracking a pi newer than the reference
// knows is held to the newest release, and the report's header says so, as it says the pi
// --tracks holds a port to.
func TestTheHeaderSaysWhenAHelloClaimsANewerPi(t *testing.T) {
	for _, c := range []struct{ tracks, heldTo, want string }{
		{"", "", "port 2"},
		{"1.0.3", "", "port 2 (tracks pi 1.0.3)"},
		{"1.6.0", "", "port 2 (tracks pi 1.6.0)"},
		{"1.7.0", "", "port 2 (tracks pi 1.7.0, held to 1.6.0, the newest pi the reference knows)"},
		// Options.Tracks (--tracks) holds it to another pi than it claims: both are said.
		{"1.6.0", "0.87.0", "port 2 (tracks pi 1.6.0; held to pi 0.87.0)"},
		{"1.6.0", "1.6.0", "port 2 (tracks pi 1.6.0)"},
		{"", "1.3.0", "port 2 (held to pi 1.3.0)"},
	} {
		if got := DescribeHello(protocol.Hello{Name: "port", Version: "2", Tracks: c.tracks}, c.heldTo); got != c.want {
			t.Errorf("tracks %q, held to %q: %q, want %q", c.tracks, c.heldTo, got, c.want)
		}
	}
}
