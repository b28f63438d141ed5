package protocol

import (
	"bytes"
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
	// mark is in the environment of the command and of every process it starts, so that
	// those that left its process group (setsid) are found and ended with it.
	mark string

	// deadlineMu guards the stdout read deadline: the harness's, cut short once the
	// command has exited (exitDeadline), so that a descendant holding stdout open does not
	// hide the exit.
	deadlineMu   sync.Mutex
	readDeadline time.Time
	exitDeadline time.Time

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
	mark := fmt.Sprintf("%d-%d", os.Getpid(), children.Add(1))
	cmd.Env = append(append(os.Environ(), p.Env...), markEnv+"="+mark)
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
		cmd: cmd, stdin: inW, stdout: outR, stderr: errR, mark: mark,
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
		// Its descendants die with it (PROTOCOL.md): one of them holding stdout open would
		// otherwise keep the harness reading until the timeout. What the command wrote
		// before it exited is still read.
		endDescendants(cmd, mark)
		c.deadlineMu.Lock()
		c.exitDeadline = time.Now().Add(exitDrain)
		c.applyDeadline()
		c.deadlineMu.Unlock()
	}()
	go c.readStderr(p.Stderr)
	return c, nil
}

// markEnv names the environment variable that marks the command's processes.
const markEnv = "TURNSTILE_IMPLEMENTATION"

// children counts the commands started, for their marks.
var children atomic.Int64

// exitDrain is how long stdout is read once the command has exited: what it wrote before is
// in the pipe already, and its descendants were ended.
const exitDrain = 500 * time.Millisecond

// setReadDeadline sets the deadline of stdout reads, or the exit's when sooner.
func (c *child) setReadDeadline(d time.Time) {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	c.readDeadline = d
	c.applyDeadline()
}

// applyDeadline gives stdout the sooner of the two deadlines; deadlineMu is held.
func (c *child) applyDeadline() {
	d := c.readDeadline
	if !c.exitDeadline.IsZero() && (d.IsZero() || c.exitDeadline.Before(d)) {
		d = c.exitDeadline
	}
	_ = c.stdout.SetReadDeadline(d)
}

// stderrKeep is how much of each stderr line is kept for the verdicts (tail cuts it to
// less), and stderrWhole how much of a line is gathered to be copied through in one write.
const (
	stderrKeep  = 1 << 10
	stderrWhole = 64 << 10
)

// readStderr drains stderr to its end whatever its lines' length (a command blocked on a
// full stderr pipe would stop answering): it keeps the last lines, each cut, and copies
// stderr to w, a line a write, or in pieces for a line over stderrWhole.
func (c *child) readStderr(w io.Writer) {
	defer close(c.stderrDone)
	buf := make([]byte, 64<<10)
	var kept, whole []byte // the current line's start, and its unwritten part
	size, inPieces := 0, false
	for {
		n, err := c.stderr.Read(buf)
		data := buf[:n]
		for len(data) > 0 {
			part, ended := data, false
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				part, ended, data = data[:i], true, data[i+1:]
			} else {
				data = nil
			}
			if room := stderrKeep - len(kept); room > 0 {
				kept = append(kept, part[:min(room, len(part))]...)
			}
			size += len(part)
			if w != nil {
				switch {
				case ended:
					_, _ = w.Write(append(append(whole, part...), '\n'))
					whole, inPieces = whole[:0], false
				case inPieces || len(whole)+len(part) > stderrWhole:
					_, _ = w.Write(append(whole, part...))
					whole, inPieces = whole[:0], true
				default:
					whole = append(whole, part...)
				}
			}
			if ended {
				c.errTail.addCut(bytes.TrimSuffix(kept, []byte{'\r'}), size)
				kept, size = kept[:0], 0
			}
		}
		if err != nil {
			if size > 0 || len(whole) > 0 {
				c.errTail.addCut(kept, size)
				if w != nil && len(whole) > 0 {
					_, _ = w.Write(append(whole, '\n'))
				}
			}
			return
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
		endDescendants(c.cmd, c.mark)
		_ = c.stdin.Close()
	})
	select {
	case <-c.exited:
	case <-time.After(exitGrace):
	}
	// Descendants started while the leader was dying: end them too.
	endDescendants(c.cmd, c.mark)
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

func (t *tail) add(line []byte) { t.addCut(line, len(line)) }

// addCut adds a line of size bytes of which line is the start.
func (t *tail) addCut(line []byte, size int) {
	const max = 300
	var s string
	if size > max { // a context is tens of kilobytes: copy what is kept
		s = string(line[:min(max, len(line))]) + fmt.Sprintf("… (%d bytes)", size)
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
