package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestLineReaderHoldsToItsLimit: a line of max bytes is read, with "\n" or "\r\n" after it or
// nothing (the last line); one byte more is an error, the line never returned.
func TestLineReaderHoldsToItsLimit(t *testing.T) {
	const max = 10
	at, over := strings.Repeat("a", max), strings.Repeat("b", max+1)
	cases := []struct {
		in   string
		want []string
		long bool
	}{
		{at + "\n", []string{at}, false},
		{at + "\r\n", []string{at}, false},
		{at, []string{at}, false},
		{at + "\r\nx\r\n", []string{at, "x"}, false},
		{over + "\n", nil, true},
		{over + "\r\n", nil, true},
		{over, nil, true},
		{at + "\r", nil, true}, // a last line's "\r" is part of it
	}
	for _, c := range cases {
		// A small buffer: the limit falls inside, at and past a buffer's end.
		for _, size := range []int{16, 11, 12, 64 << 10} {
			l := &lineReader{r: newSizedReader(c.in, size), max: max}
			var got []string
			var err error
			for {
				var line []byte
				if line, err = l.next(); err != nil {
					break
				}
				if len(line) > max {
					t.Errorf("%q (buffer %d): a line of %d bytes returned", c.in, size, len(line))
				}
				got = append(got, string(line))
			}
			if long := errors.Is(err, ErrLineTooLong); long != c.long || (!long && err != io.EOF) {
				t.Errorf("%q (buffer %d): error %v, want too long: %v", c.in, size, err, c.long)
			}
			if !c.long && strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("%q (buffer %d): lines %q, want %q", c.in, size, got, c.want)
			}
		}
	}
}

// FuzzLineReader: whatever the input and the limit, the reader returns lines of at most max
// bytes without "\n", which are the input's lines in order (a "\r" before "\n" dropped),
// until the end or a line over the limit.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\r\nccc"), 2)
	f.Add([]byte("0123456789\r\n"), 10)
	f.Add([]byte("\r\r\n\n"), 1)
	f.Add(bytes.Repeat([]byte("x"), 40), 16)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		l := &lineReader{r: newSizedReader(string(in), 16), max: max}
		var lines [][]byte
		var err error
		for {
			var line []byte
			if line, err = l.next(); err != nil {
				break
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line %q (max %d)", line, max)
			}
			lines = append(lines, line)
		}
		if err != io.EOF && !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("error %v", err)
		}
		rest := in
		for _, line := range lines {
			i := bytes.IndexByte(rest, '\n')
			want := rest
			if i >= 0 {
				want, rest = bytes.TrimSuffix(rest[:i], []byte{'\r'}), rest[i+1:]
			} else {
				rest = nil
			}
			if !bytes.Equal(line, want) {
				t.Fatalf("line %q, want %q", line, want)
			}
		}
		if err == io.EOF && len(rest) > 0 {
			t.Fatalf("%q left unread", rest)
		}
	})
}

// newSizedReader reads s through a buffer of size bytes (bufio's least is 16).
func newSizedReader(s string, size int) *bufio.Reader {
	return bufio.NewReaderSize(strings.NewReader(s), size)
}
