package exchange

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/bench"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
)

// The test binary serves, when these are set, the reference over the protocol (the adapter
// recorded) or a saved exchange's adapter side (the played-back adapter).
const (
	serveReferenceEnv = "EXCHANGE_TEST_SERVE_REFERENCE"
	serveExchangeEnv  = "EXCHANGE_TEST_SERVE_EXCHANGE"
)

func TestMain(m *testing.M) {
	if os.Getenv(serveReferenceEnv) != "" {
		if err := protocol.Serve(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if path := os.Getenv(serveExchangeEnv); path != "" {
		e, err := Load(path)
		if err == nil {
			err = e.ServeAdapter(os.Stdin, os.Stdout)
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// referenceAdapter is this test binary serving the reference.
func referenceAdapter() []string {
	return []string{"env", serveReferenceEnv + "=1", os.Args[0], "-test.run=^$"}
}

func record(t *testing.T, runs int) (*Exchange, []string) {
	t.Helper()
	argv := referenceAdapter()
	shape := bench.Shapes[0]
	e, err := Record(argv, shape.Scenario(), shape.Turns, runs)
	if err != nil {
		t.Fatal(err)
	}
	return e, argv
}

// TestHarnessPlaybackMeasuresTheAdapter: the harness's recorded lines, played to a fresh
// adapter, get the recorded answers back, and the playback fails, naming the line, when the
// recording says the adapter wrote something else.
func TestHarnessPlaybackMeasuresTheAdapter(t *testing.T) {
	e, argv := record(t, 3)
	if !e.Lines[0].FromHarness || !bytes.Contains(e.Lines[0].Text, []byte(`"hello"`)) || bytes.Contains(e.Lines[len(e.Lines)-1].Text, []byte("shutdown")) == false {
		t.Fatalf("the recording should begin with the harness's hello and end with its shutdown: %q … %q", e.Lines[0].Text, e.Lines[len(e.Lines)-1].Text)
	}
	m, err := e.Harness(argv, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m.TurnsPerSec <= 0 || m.Turns != (e.Runs-1)*e.Turns {
		t.Errorf("measured %+v: the runs after the first, %d turns", m, (e.Runs-1)*e.Turns)
	}

	// One adapter line of the last run changed: the playback stops there.
	last := -1
	for i, l := range e.Lines {
		if !l.FromHarness && bytes.Contains(l.Text, []byte(`"message_end"`)) {
			last = i
		}
	}
	e.Lines[last].Text = bytes.Replace(e.Lines[last].Text, []byte(`"message_end"`), []byte(`"message_END"`), 1)
	_, err = e.Harness(argv, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "the recording has") || !strings.HasPrefix(err.Error(), "line ") {
		t.Fatalf("a playback that drifted from the recording should fail at its line, got %v", err)
	}
}

// TestAdapterPlaybackMeasuresTheHarness: the adapter's recorded lines, served from a saved
// exchange, take the harness through the same runs; a harness line the recording does not
// have fails the played-back adapter, and with it the run.
func TestAdapterPlaybackMeasuresTheHarness(t *testing.T) {
	e, _ := record(t, 3)
	path := filepath.Join(t.TempDir(), "exchange.log")
	if err := e.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Runs != e.Runs || loaded.Turns != e.Turns || len(loaded.Lines) != len(e.Lines) {
		t.Fatalf("loaded %d runs, %d turns, %d lines; saved %d, %d, %d", loaded.Runs, loaded.Turns, len(loaded.Lines), e.Runs, e.Turns, len(e.Lines))
	}
	argv := []string{os.Args[0], "-test.run=^$"}
	m, err := e.HarnessCeiling(argv, []string{serveExchangeEnv + "=" + path}, bench.Shapes[0].Scenario())
	if err != nil {
		t.Fatal(err)
	}
	if m.TurnsPerSec <= 0 || m.CPUPerTurn <= 0 || m.Turns != (e.Runs-1)*e.Turns {
		t.Errorf("measured %+v", m)
	}

	// The recording of another scenario: the harness's first start differs.
	other := bench.Shapes[2]
	_, err = e.HarnessCeiling(argv, []string{serveExchangeEnv + "=" + path}, other.Scenario())
	if err == nil {
		t.Fatal("a harness running another scenario than the recording's should fail")
	}
	if !strings.Contains(err.Error(), "the recording has") {
		t.Fatalf("the played-back adapter should name the line that differs: %v", err)
	}
}

// TestLoadNamesWhatIsWrong: a file that is not a saved exchange is refused with its line.
func TestLoadNamesWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"no header":         "> {}\n",
		"a header and more": "# runs 2 turns 1 and more\n> {}\n",
		"no direction":      "# runs 2 turns 1\n> {}\n{}\n",
		"cut short":         "# runs 2 turns 1\n> {}\n< {\"ty",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The line is the file's.
	path := filepath.Join(dir, "third")
	if err := os.WriteFile(path, []byte("# runs 2 turns 1\n> {}\nstray\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "line 3 ") {
		t.Errorf("a stray third line: %v", err)
	}
}

// handMade is an exchange of two runs whose lines are not protocol lines, played back by both
// sides (Harness against ServeAdapter): one line of each side is longer than any buffer.
func handMade(t *testing.T) (*Exchange, string) {
	t.Helper()
	long := bytes.Repeat([]byte("x"), 200_000)
	e := &Exchange{Runs: 2, Turns: 3, Lines: []Line{
		{FromHarness: true, Text: []byte(`{"type":"hello"}`)}, {Text: []byte(`{"type":"hello","name":"played back"}`)},
		{FromHarness: true, Text: []byte(`{"type":"start","session":1}`)}, {Text: long},
		{FromHarness: true, Text: []byte(`{"type":"start","session":2}`)}, {FromHarness: true, Text: long}, {Text: []byte("done")},
		{FromHarness: true, Text: []byte(`{"type":"shutdown"}`)},
	}}
	path := filepath.Join(t.TempDir(), "exchange.log")
	if err := e.Save(path); err != nil {
		t.Fatal(err)
	}
	return e, path
}

// TestHarnessPlaybackHoldsTheAdapterToTheEnd: long lines go through whole both ways; the
// recorded shutdown reaches the adapter; an adapter that writes more after it, exits with a
// status or says nothing fails the playback with what it did, within the timeout.
func TestHarnessPlaybackHoldsTheAdapterToTheEnd(t *testing.T) {
	e, path := handMade(t)
	served := func(after string) []string {
		return []string{"env", serveExchangeEnv + "=" + path, "sh", "-c", `"$0" -test.run='^$' || exit; ` + after, os.Args[0]}
	}
	m, err := e.Harness(served("true"), 10*time.Second)
	if err != nil {
		t.Fatalf("two playbacks of one exchange: %v", err)
	}
	if m.Turns != 3 {
		t.Errorf("timed %d turns, want the second run's 3", m.Turns)
	}
	for _, c := range []struct{ name, after, want string }{
		{"more output", "echo more", `wrote "more\n"`},
		{"an exit status", "exit 3", "after the recorded shutdown: exit status 3"},
	} {
		if _, err := e.Harness(served(c.after), 10*time.Second); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	began := time.Now()
	_, err = e.Harness([]string{"sh", "-c", "cat >/dev/null"}, 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "line 2 of the recording, from the adapter") {
		t.Errorf("an adapter that never answers: %v", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the playback of a silent adapter took %v with a timeout of 0.5 s", d)
	}
}

// TestPlaybackNeedsARunAfterTheWarmUp: a recording of one run cannot be timed.
func TestPlaybackNeedsARunAfterTheWarmUp(t *testing.T) {
	e, _ := handMade(t)
	e.Lines = slices.DeleteFunc(slices.Clone(e.Lines), func(l Line) bool { return bytes.Contains(l.Text, []byte(`"session":2`)) })
	e.Runs = 1
	if _, err := e.Harness([]string{"true"}, time.Second); err == nil || !strings.Contains(err.Error(), "needs two or more") {
		t.Errorf("Harness: %v", err)
	}
	if _, err := e.HarnessCeiling([]string{"true"}, nil, bench.Shapes[0].Scenario()); err == nil || !strings.Contains(err.Error(), "needs two or more") {
		t.Errorf("HarnessCeiling: %v", err)
	}
}
