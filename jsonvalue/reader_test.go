package jsonvalue

import (
	"encoding/json"
	"testing"
)

// TestReaderNumbers holds Int64 and Float64 to encoding/json's decoding into int64 and
// float64: where they read a number, encoding/json reads the same one.
func TestReaderNumbers(t *testing.T) {
	for _, text := range []string{"0", "-0", "7", "-12", "1.0", "1e3", "1E-2", "0.5", "123456789012345678",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e400", "01", "-", "1.", ".5", "2 ", " 3", "x"} {
		var wantI int64
		errI := json.Unmarshal([]byte(text), &wantI)
		r := NewReader([]byte(text))
		if got, ok := r.Int64(); ok && r.Done() {
			if errI != nil || got != wantI {
				t.Errorf("Int64(%q) = %d, encoding/json %d (%v)", text, got, wantI, errI)
			}
		}
		var wantF float64
		errF := json.Unmarshal([]byte(text), &wantF)
		r = NewReader([]byte(text))
		if got, ok := r.Float64(); ok && r.Done() {
			if errF != nil || got != wantF {
				t.Errorf("Float64(%q) = %v, encoding/json %v (%v)", text, got, wantF, errF)
			}
		}
	}
}

// TestSeenFirstOnce: a bit is first once; other bits stay first.
func TestSeenFirstOnce(t *testing.T) {
	var s Seen
	if !s.First(1) || s.First(1) || !s.First(4) || s.First(4) || s.First(1) || s != 5 {
		t.Fatalf("seen %b", s)
	}
}
