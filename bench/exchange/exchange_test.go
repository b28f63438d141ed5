package exchange

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/bench"
	"github.com/turnstile-dev/turnstile/conformance"
)

// The test binary serves, when these are set, the reference over the protocol (the adapter
// recorded) or a saved exchange's adapter side (the played-back adapter).
const (
	serveReferenceEnv = "EXCHANGE_TEST_SERVE_REFERENCE"
	serveExchangeEnv  = "EXCHANGE_TEST_SERVE_EXCHANGE"
)

func TestMain(m *testing.M) {
	if os.Getenv(serveReferenceEnv) != "" {
		if err := conformance.Serve(os.Stdin, os.Stdout); err != nil {
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
	m, err := e.Harness(argv)
	if err != nil {
		t.Fatal(err)
	}
	if m.TurnsPerSec <= 0 {
		t.Errorf("turns/s %v", m.TurnsPerSec)
	}

	// One adapter line of the last run changed: the playback stops there.
	last := -1
	for i, l := range e.Lines {
		if !l.FromHarness && bytes.Contains(l.Text, []byte(`"message_end"`)) {
			last = i
		}
	}
	e.Lines[last].Text = bytes.Replace(e.Lines[last].Text, []byte(`"message_end"`), []byte(`"message_END"`), 1)
	_, err = e.Harness(argv)
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
	if m.TurnsPerSec <= 0 || m.CPUPerTurn <= 0 {
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
		"no header":    "> {}\n",
		"no direction": "# runs 2 turns 1\n> {}\n{}\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
