package conformance

import "testing"

// TestTheHeaderSaysWhenAHelloClaimsANewerPi: a port tracking a pi newer than the reference
// knows is held to the newest release, and the report's header says so.
func TestTheHeaderSaysWhenAHelloClaimsANewerPi(t *testing.T) {
	for _, c := range []struct{ tracks, want string }{
		{"", "port 2"},
		{"1.0.3", "port 2 (tracks pi 1.0.3)"},
		{"1.6.0", "port 2 (tracks pi 1.6.0)"},
		{"1.7.0", "port 2 (tracks pi 1.7.0, held to 1.6.0, the newest pi the reference knows)"},
	} {
		if got := describeHello(Hello{Name: "port", Version: "2", Tracks: c.tracks}); got != c.want {
			t.Errorf("tracks %q: %q, want %q", c.tracks, got, c.want)
		}
	}
}
