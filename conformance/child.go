package conformance

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// inbound is one line of the implementation's stdout, or the reason there is none.
type inbound struct {
	line int
	raw  []byte
	err  error
}

// child is one running instance of the command.
type child struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	// out reads stdout's lines in the harness's own goroutine (Process.receive), under the
	// scenario's deadline: no goroutine hands each line over.
	out *lineReader

	exited  chan struct{}
	waitErr error
	killed  atomic.Bool

	stderrDone chan struct{}
	outTail    *tail
	errTail    *tail
	// errTitle heads errTail in an error: it says when the lines were copied through as well.
	errTitle    string
	killOnce    sync.Once
	releaseOnce sync.Once
}

func startChild(p *Process) (*child, error) {
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(), p.Env...)
	setProcessGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", p.name(), err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("start %s: %w", p.name(), err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("start %s: %w", p.name(), err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("start %s: %w", strings.Join(p.Command, " "), err)
	}
	closeAll(inR, outW, errW)
	c := &child{
		cmd: cmd, stdin: inW, stdout: outR, stderr: errR,
		out:    newLineReader(outR, orInt(p.MaxLine, DefaultMaxLine)),
		exited: make(chan struct{}), stderrDone: make(chan struct{}),
		outTail: newTail(tailLines), errTail: newTail(tailLines),
		errTitle: "last lines of stderr:",
	}
	if p.Stderr != nil {
		c.errTitle = "last lines of stderr (copied through above as well):"
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	go c.readStderr(p.Stderr)
	return c, nil
}

// readStderr keeps the last stderr lines and copies them to w.
func (c *child) readStderr(w io.Writer) {
	defer close(c.stderrDone)
	lr := newLineReader(c.stderr, DefaultMaxLine)
	for {
		raw, err := lr.next()
		if err != nil {
			return
		}
		c.errTail.add(raw)
		if w != nil {
			_, _ = w.Write(append(raw, '\n'))
		}
	}
}

func (c *child) awaitStderr(d time.Duration) {
	select {
	case <-c.stderrDone:
	case <-time.After(d):
	}
}

// kill sends SIGKILL to the child's process group and waits (briefly) for it to be reaped.
func (c *child) kill() {
	c.killOnce.Do(func() {
		select {
		case <-c.exited:
		default:
			c.killed.Store(true)
		}
		killProcessGroup(c.cmd)
		_ = c.stdin.Close()
	})
	select {
	case <-c.exited:
	case <-time.After(exitGrace):
	}
	// Descendants that outlived the leader share its group: kill it once more.
	killProcessGroup(c.cmd)
}

// release closes the harness's pipe ends (which ends the stderr reader).
func (c *child) release() {
	c.releaseOnce.Do(func() {
		_ = c.stdout.Close()
		_ = c.stderr.Close()
	})
}

func (c *child) tails() string {
	return c.outTail.titled("last lines of stdout:") + c.errTail.titled(c.errTitle)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// tail keeps the last n lines of a stream, each cut to a readable length.
type tail struct {
	mu    sync.Mutex
	n     int
	lines []string
	// fresh is how many of lines came after the last mark (all of them: -1, never marked).
	fresh int
}

func newTail(n int) *tail { return &tail{n: n, fresh: -1} }

// mark notes that the lines from now on belong to a new session: the ones before are shown
// apart, as an earlier scenario's (a process serves a suite's scenarios one after another).
func (t *tail) mark() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fresh = 0
}

func (t *tail) add(line []byte) {
	const max = 300
	var s string
	if len(line) > max { // a context is tens of kilobytes: copy what is kept
		s = string(line[:max]) + fmt.Sprintf("… (%d bytes)", len(line))
	} else {
		s = string(line)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, s)
	if t.fresh >= 0 {
		t.fresh++
	}
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
}

// titled renders the lines under a title.
func (t *tail) titled(title string) string { return title + "\n" + t.String() }

// String renders the lines indented, "  (none)" when there are none.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "  (none)\n"
	}
	var b strings.Builder
	earlier := 0
	if t.fresh >= 0 {
		earlier = max(len(t.lines)-t.fresh, 0)
	}
	for i, l := range t.lines {
		switch {
		case i == 0 && earlier > 0:
			b.WriteString("  (written during earlier scenarios of this process:)\n")
		case i == earlier && earlier > 0:
			b.WriteString("  (written during this scenario:)\n")
		}
		b.WriteString("  | ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if earlier == len(t.lines) && t.fresh == 0 {
		b.WriteString("  (nothing written during this scenario)\n")
	}
	return b.String()
}
