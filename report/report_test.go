package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
)

func entries(names ...string) []sim.Entry {
	out := make([]sim.Entry, len(names))
	for i, n := range names {
		out[i] = sim.Entry{Seq: i + 1, Kind: sim.KindEvent, Name: n}
	}
	return out
}

// Equal entries share a row; a run of entries missing on one side leaves gaps; an entry
// replaced by another pairs them on one row.
func TestAlign(t *testing.T) {
	got := align(entries("a", "b", "c", "d", "e"), entries("a", "c", "x", "e", "f"))
	want := []pair{{0, 0}, {1, -1}, {2, 1}, {3, 2}, {4, 3}, {-1, 4}}
	if len(got) != len(want) {
		t.Fatalf("align: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("align: %v, want %v", got, want)
		}
	}
}

// A page is one file: no script, style, image or link is fetched from anywhere.
func TestPageIsSelfContained(t *testing.T) {
	run := faultyRun(t, "tools-parallel/completion-order")
	var buf bytes.Buffer
	if err := Write(&buf, Page{Title: "t", Runs: []Run{run}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:|//|file:)|@import|url\(`).FindString(page); m != "" {
		t.Errorf("the page refers to something outside it: %q", m)
	}
	for _, want := range []string{"tool tool-1 (echo)", "stream #1", "first divergence", `class="finding"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// Writing the same run twice gives the same bytes (reports diff cleanly as CI artifacts).
func TestPageIsDeterministic(t *testing.T) {
	run := faultyRun(t, "queues/follow-up-one-at-a-time")
	var a, b bytes.Buffer
	if err := Write(&a, Page{Title: "t", Runs: []Run{run, run}}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, Page{Title: "t", Runs: []Run{run, run}}); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two renderings differ")
	}
	if !strings.Contains(a.String(), `id="queues-follow-up-one-at-a-time-2"`) {
		t.Error("a second run of the same title does not get an id of its own")
	}
}
