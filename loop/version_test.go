package loop_test

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

func TestBehaviourOf(t *testing.T) {
	lacks := func(version string) string {
		b, err := loop.BehaviourOf(version)
		if err != nil {
			return "error: " + err.Error()
		}
		return b.String()
	}
	for _, tc := range []struct{ version, want string }{
		{"", "newest"},
		{"1.6.0", "newest"},
		{"1.7.2", "newest"},
		{"1.5.2", "without abort-first, abort-completes-batch"},
		{"1.5", "without abort-first, abort-completes-batch"},
		{"1.4.0", "without schema-validator, abort-first, abort-completes-batch"},
		{"1.3.0", "without request-identity, schema-validator, abort-first, abort-completes-batch"},
		{"1.1.0", "without arguments-error, duration-ms, request-identity, schema-validator, abort-first, abort-completes-batch"},
		{"0.99.1", "without arguments-error, duration-ms, request-identity, schema-validator, abort-first, abort-completes-batch"},
		{"0.87", "without thinking-level-stamp, tool-result-is-error, after-tool-call-structured-content, tool-result-nothing, arguments-error, duration-ms, request-identity, schema-validator, abort-first, abort-completes-batch"},
		{"0.87.1", "without thinking-level-stamp, tool-result-is-error, after-tool-call-structured-content, tool-result-nothing, arguments-error, duration-ms, request-identity, schema-validator, abort-first, abort-completes-batch"},
		{"0.86.1", "error: pi 0.86.1 is older than 0.87.0"},
		{"latest", `error: "latest" is not a pi version`},
		{"v1.6.0", `error: "v1.6.0" is not a pi version`},
		{"1..0", `error: "1..0" is not a pi version`},
	} {
		if got := lacks(tc.version); !strings.HasPrefix(got, tc.want) {
			t.Errorf("BehaviourOf(%q) = %s, want %s", tc.version, got, tc.want)
		}
	}
}

func TestChangesInReleaseOrder(t *testing.T) {
	cs := loop.Changes()
	if len(cs) != 10 {
		t.Fatalf("%d changes", len(cs))
	}
	for i, c := range cs {
		if c.Since() == "" || strings.HasPrefix(c.String(), "change(") {
			t.Errorf("change %d has no name or release", c)
		}
		if i > 0 && loop.VersionLess(c.Since(), cs[i-1].Since()) {
			t.Errorf("%s (%s) listed after %s (%s)", c, c.Since(), cs[i-1], cs[i-1].Since())
		}
	}
	var b loop.Behaviour
	if !b.Without(loop.DurationMs).With(loop.DurationMs).Has(loop.DurationMs) || b.Without(loop.DurationMs).Has(loop.DurationMs) {
		t.Error("With/Without do not toggle one change")
	}
	if loop.Change(0).String() != "change(0)" || loop.Change(0).Since() != "" {
		t.Error("the zero Change has a name or a release")
	}
}
