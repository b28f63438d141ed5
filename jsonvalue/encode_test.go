package jsonvalue

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// TestAppendStringIsEncodingJSONs: every string is written as json.Marshal writes it: plain
// ones, quotes, escapes, HTML, every control character, non-ASCII, U+2028 and U+2029, and
// invalid UTF-8, alone and among plain bytes.
func TestAppendStringIsEncodingJSONs(t *testing.T) {
	list := []string{"", "plain text 123", `a"b`, `back\slash`, "<b>&amp;</b>", "tab\there\nnl", "\x00\x1f", "é ü 日本", "\u2028\u2029", "\xff\xfe bad", "ok",
		"\b\f\v\x7f", "a\u2028b\u2029c", "\xe2\x80", "日\xff本", "\U0001F600 emoji", "\ufffd", "x\xc0\xafy"}
	for c := range 256 {
		list = append(list, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range list {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: got %s, want %s", s, got[1:], want)
		}
	}
}

// TestAppendStringIsEncodingJSONsOnAnyBytes checks random byte strings the same way.
func TestAppendStringIsEncodingJSONsOnAnyBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		if rapid.Bool().Draw(t, "text") {
			s = rapid.String().Draw(t, "text")
		}
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		if got := StringSize(s); got != len(want) {
			t.Fatalf("StringSize(%q) = %d, its JSON %s has %d bytes", s, got, want, len(want))
		}
	})
}

// TestStringSizeIsTheLengthOfItsJSON: StringSize counts a string's bytes as json.Marshal
// writes it, for every byte alone and between others.
func TestStringSizeIsTheLengthOfItsJSON(t *testing.T) {
	for c := range 256 {
		for _, s := range []string{string(rune(c)), string([]byte{byte(c)}), "ab" + string([]byte{byte(c)}) + "cd"} {
			b, _ := json.Marshal(s)
			if got := StringSize(s); got != len(b) {
				t.Errorf("StringSize(%q) = %d, its JSON %s has %d bytes", s, got, b, len(b))
			}
		}
	}
}

// TestAppendNumberWritesIntegersAsFloatsAre: the integers written by their digits are written
// as the float formatting writes them, up to 2^53 and around it, and any float as before.
func TestAppendNumberWritesIntegersAsFloatsAre(t *testing.T) {
	asFloat := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	check := func(f float64) {
		t.Helper()
		if abs := math.Abs(f); f == 0 || abs < 1e-6 || abs >= 1e21 {
			return
		}
		if got, want := string(AppendNumber(nil, f)), asFloat(f); got != want {
			t.Fatalf("%v: got %s, want %s", f, got, want)
		}
	}
	for _, f := range []float64{1, -1, 7, 1e15, 1 << 53, -(1 << 53), 1<<53 - 1, 1<<53 + 2, 1 << 60, 1e20, 0.5, 123.25, -3.0000001} {
		check(f)
	}
	rapid.Check(t, func(t *rapid.T) {
		check(float64(rapid.Int64().Draw(t, "int")))
		check(float64(rapid.Int64Range(-1<<54, 1<<54).Draw(t, "near 2^53")))
		check(rapid.Float64().Draw(t, "float"))
	})
}
