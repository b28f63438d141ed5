package protocol_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// writeCounter records what is written to it and in how many writes.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestAStepsNotificationsAreOneWrite replays the harness's side of PROTOCOL.md's worked
// example: the reference answers with every line of the example, in order, and writes the
// notifications of a step with the step's next call or reply, one write for the lot.
func TestAStepsNotificationsAreOneWrite(t *testing.T) {
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(doc, []byte("harness; recorded, not edited):"))
	if at < 0 {
		t.Fatal("PROTOCOL.md: the worked example is missing")
	}
	block := doc[at:]
	block = block[bytes.Index(block, []byte("```\n"))+4:]
	block = block[:bytes.Index(block, []byte("```"))]
	var in, want strings.Builder
	notifies, others := 0, 0
	for line := range strings.Lines(string(block)) {
		switch {
		case strings.HasPrefix(line, "> "):
			in.WriteString(line[2:])
		case strings.HasPrefix(line, "< "):
			want.WriteString(line[2:])
			if strings.HasPrefix(line, `< {"type":"notify"`) {
				notifies++
			} else {
				others++
			}
		}
	}
	var out writeCounter
	if err := protocol.Serve(strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`"version":"[^"]*"`)
	if got := version.ReplaceAllString(out.String(), `"version":"devel"`); got != want.String() {
		t.Fatalf("the served lines differ from the worked example's:\n%s", got)
	}
	if notifies == 0 || out.writes != others {
		t.Errorf("%d writes for %d notifications and %d other lines; want one a line that is not a notification", out.writes, notifies, others)
	}
}

// notifyThenWait is a port that sends an event as it starts, then waits to be released.
type notifyThenWait struct{ release chan struct{} }

func (p notifyThenWait) Start(_ sim.Setup, world sim.Port) error {
	world.Notify(sim.Notification{Kind: sim.NotifyEvent, Data: json.RawMessage(`{"type":"agent_start"}`)})
	<-p.release
	return nil
}
func (notifyThenWait) Deliver(sim.Delivery) error { return nil }
func (notifyThenWait) Stop() error                { return nil }

// TestAPortsLinesAreWrittenAsSent: ServeImpl (a Go port, which may hang mid-step) writes a
// notification when it is sent, not when the step ends.
func TestAPortsLinesAreWrittenAsSent(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harnessSide{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	port := notifyThenWait{release: make(chan struct{})}
	hello := protocol.Hello{Name: "port", Version: "1", Tracks: protocol.Tracks, Protocol: 1}
	go func() {
		err := protocol.ServeImpl(inR, outW, hello, func() sim.Implementation { return port })
		_ = outW.Close()
		h.done <- err
	}()
	greet(h)
	h.send(tinyStart)
	if m := h.recv(); m.Type != "notify" {
		t.Fatalf("got %+v, want the port's event", m)
	}
	close(port.release)
	if m := h.recv(); m.Type != "idle" {
		t.Fatalf("got %+v, want idle", m)
	}
	_ = inW.Close()
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
}
