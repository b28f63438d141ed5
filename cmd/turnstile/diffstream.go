package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/turnstile-dev/turnstile/trace"
)

// diffStreams compares two traces read entry by entry (scenarios run against the reference,
// JSON lines of any size), in memory bounded whatever their lengths.
func diffStreams(out io.Writer, a, b *opened, context int) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		// What diff holds is bounded; its garbage (each entry in full, decoded to compare)
		// is not, and main's GC target lets the heap grow past what is held by four times
		// it, or by 32 MB or as much again once more is held.
		debug.SetMemoryLimit(diffMemory)
	}
	want, err := sourceOf(a)
	if err != nil {
		return usage(err)
	}
	got, err := sourceOf(b)
	if err != nil {
		return usage(err)
	}
	c, err := trace.CompareStream(want, got, trace.Strict, context)
	if err != nil {
		return usage(err)
	}
	at, reference := c.At()
	if at == 0 {
		fmt.Fprintln(out, "the traces are identical (every entry agrees, field by field)")
		return nil
	}
	fmt.Fprintf(out, "--- %s\n+++ %s\n%s", a.path, b.path, c.Text(context))
	if reference {
		return failed(fmt.Errorf("%s and %s differ at reference entry %d", a.path, b.path, at))
	}
	return failed(fmt.Errorf("%s and %s differ at entry %d", a.path, b.path, at))
}

// diffMemory is the soft memory limit of diff reading entry by entry: about twice what
// its windows hold at most.
const diffMemory = 192 << 20

// sourceOf is one side's entries in full, one at a time.
func sourceOf(o *opened) (trace.Source, error) {
	if o.scenario {
		tr, err := scenarioRun(o.path)
		if err != nil {
			return nil, err
		}
		return &entries{list: tr.Entries, x: trace.NewExpander()}, nil
	}
	if err := o.textHead(); err != nil {
		return nil, err
	}
	r := trace.NewReader(io.MultiReader(bytes.NewReader(o.head), o.f), trace.DefaultMaxLine)
	return &fileSource{path: o.path, r: r, x: trace.NewExpander()}, nil
}

// fileSource reads a file's JSON lines and restores their links, entry by entry.
type fileSource struct {
	path string
	r    *trace.Reader
	x    *trace.Expander
}

// Next is the file's next entry in full; an error names the file and its line or entry.
func (s *fileSource) Next() (trace.Entry, error) {
	e, err := s.r.Next()
	if errors.Is(err, io.EOF) {
		return e, err
	}
	if err != nil {
		return e, readError(s.path, err)
	}
	full, err := s.x.Next(e)
	if err != nil {
		return full, fmt.Errorf("%s: %w", s.path, err)
	}
	return full, nil
}

// entries yields a trace held in memory (a scenario's run, in the linear form) in full.
type entries struct {
	list []trace.Entry
	next int
	x    *trace.Expander
}

// Next is the next entry in full; io.EOF after the last.
func (s *entries) Next() (trace.Entry, error) {
	if s.next == len(s.list) {
		return trace.Entry{}, io.EOF
	}
	s.next++
	return s.x.Next(s.list[s.next-1])
}
