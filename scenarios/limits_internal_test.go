package scenarios

import (
	"math"
	"testing"

	"github.com/goccy/go-yaml/lexer"
)

// FuzzTokenBound: the lexer makes at most 2n+2 tokens of a text with n punctuation bytes
// (line breaks and directives' blanks included), the bound the loader's first check rests on.
func FuzzTokenBound(f *testing.F) {
	for _, s := range []string{"a: b\n", "[1,2,{a: b}]", "- - - x", `"a""b"'c'd`, "&a *a !t |\n  x\n", "a #c\n? b\n: c\n--- x\n...\n%YAML 1.2\n", "k: v w\n  x y\n", "%TAG ! a b c\r%x\ty\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, _, _ := punctuation([]byte(s), math.MaxInt)
		if got := len(lexer.Tokenize(s)); got > 2*n+2 {
			t.Fatalf("%q: %d tokens, %d punctuation bytes", s, got, n)
		}
	})
}
