package argschema

import "testing"

// TestEveryFormatsExpressionCompiles: the format checks compile their expressions when first
// used, not at init; each is used here, so a source that does not compile (a panic) fails a
// test rather than the first tool that declares its format. What they answer is pi's
// (TestPiCases' format cases).
func TestEveryFormatsExpressionCompiles(t *testing.T) {
	for _, value := range []string{"x", "2020-01-01T12:00:00Z", "http://[v1.x]/a", "é@b.co"} {
		for _, check := range formats {
			check(value)
		}
	}
	dateRe()
	timeRe()
	idnEmailRe()
	ipvFutureRe()
	malformedSchemeRe()
}
