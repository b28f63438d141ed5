// Package exchange records the protocol lines a harness and an adapter exchange over runs of
// one scenario, and plays either side of them back without doing that side's work. Each
// playback measures the other side alone:
//
//   - Harness plays the harness's lines to a fresh adapter process and reads the adapter's:
//     the adapter's ceiling, what it does against a harness that costs nothing.
//   - ServeAdapter plays the adapter's lines to a harness (a protocol.Process, as
//     `turnstile conform` runs; HarnessCeiling): the harness's ceiling, against an adapter
//     that answers at once.
//
// Each side's lines are written as that side writes them, one write a line, at the point of
// the exchange where it wrote them. Both check every line they read against the recording,
// so a playback that drifted from the recorded exchange fails instead of measuring something
// else.
package exchange

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
)

// Line is one protocol line of a recording, without its newline.
type Line struct {
	// FromHarness says the harness wrote it; otherwise the adapter did.
	FromHarness bool
	Text        []byte
}

// Exchange is the recording of Runs runs of one scenario, each making Turns provider
// requests, through one adapter process: its hello first, its shutdown last.
type Exchange struct {
	Lines []Line
	Runs  int
	Turns int
}

// Record runs sc runs times through the adapter started by argv and keeps every line.
func Record(argv []string, sc *sim.Scenario, turns, runs int) (*Exchange, error) {
	var log bytes.Buffer
	p := &protocol.Process{Command: argv, Stderr: os.Stderr, Log: &log}
	for i := range runs {
		if err := runOnce(sc, p); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("recording %s, run %d: %w", sc.Name, i+1, err)
		}
	}
	if err := p.Close(); err != nil {
		return nil, fmt.Errorf("recording %s: %w", sc.Name, err)
	}
	lines, err := parseLog(log.Bytes(), 1)
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", sc.Name, err)
	}
	return &Exchange{Lines: lines, Runs: runs, Turns: turns}, nil
}

// runOnce runs sc through p; a failed run is an error naming the failure.
func runOnce(sc *sim.Scenario, p *protocol.Process) error {
	tr, err := sim.Run(sc, p)
	if err != nil {
		return err
	}
	if f := tr.Failure(); f != nil {
		return fmt.Errorf("the run failed: %s %s", f.Name, f.Error)
	}
	return nil
}

// parseLog reads a protocol.Process log: "> " before the harness's lines, "< " before the
// adapter's. Errors name the line counting from first (the log's first line).
func parseLog(log []byte, first int) ([]Line, error) {
	var lines []Line
	for text := range bytes.Lines(log) {
		text = bytes.TrimSuffix(text, []byte("\n"))
		switch {
		case bytes.HasPrefix(text, []byte("> ")):
			lines = append(lines, Line{FromHarness: true, Text: text[2:]})
		case bytes.HasPrefix(text, []byte("< ")):
			lines = append(lines, Line{Text: text[2:]})
		default:
			return nil, fmt.Errorf("line %d has no direction (\"> \" or \"< \"): %.80q", first+len(lines), text)
		}
	}
	return lines, nil
}

// Save writes e to a file, in the log's form, for a process that serves it (Load, ServeAdapter).
func (e *Exchange) Save(path string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# runs %d turns %d\n", e.Runs, e.Turns)
	for _, l := range e.Lines {
		if l.FromHarness {
			b.WriteString("> ")
		} else {
			b.WriteString("< ")
		}
		b.Write(l.Text)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// Load reads a file Save wrote.
func Load(path string) (*Exchange, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%s:%d: the file ends inside a line (Save ends every line): was it cut short?", path, bytes.Count(data, []byte("\n"))+1)
	}
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	e := &Exchange{}
	if _, err := fmt.Sscanf(string(head), "# runs %d turns %d", &e.Runs, &e.Turns); err != nil || string(head) != fmt.Sprintf("# runs %d turns %d", e.Runs, e.Turns) {
		return nil, fmt.Errorf("%s:1: expected \"# runs N turns N\", got %.80q", path, head)
	}
	if e.Lines, err = parseLog(rest, 2); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// Measure is what one playback measured over the runs after the first (which warms the
// playing-against side up: Node imports pi after its hello).
type Measure struct {
	// Turns is the number of provider requests timed.
	Turns int
	// TurnsPerSec is provider requests per wall second.
	TurnsPerSec float64
	// CPUPerTurn is the CPU time (user and system) per turn of the side measured: the
	// adapter's process for Harness (read from /proc; 0 without it), the calling process for
	// HarnessCeiling.
	CPUPerTurn time.Duration
}

// timedTurns is the number of turns a playback times, or an error when the recording has no
// run after the warm-up one.
func (e *Exchange) timedTurns() (int, error) {
	starts := 0
	for _, l := range e.Lines {
		if l.FromHarness && isStart(l.Text) {
			starts++
		}
	}
	if starts < 2 || e.Runs != starts {
		return 0, fmt.Errorf("the recording has %d runs (it says %d): a playback needs two or more, the first warms up", starts, e.Runs)
	}
	return (e.Runs - 1) * e.Turns, nil
}

// Harness plays the harness's side of e to a fresh process of argv and measures the adapter.
// Like the harness (protocol.Process), it writes each of its lines as it comes, one write a
// line, and waits at most timeout for each line of the adapter's; after the recorded shutdown
// the adapter must write nothing more and exit with status 0.
func (e *Exchange) Harness(argv []string, timeout time.Duration) (Measure, error) {
	turns, err := e.timedTurns()
	if err != nil {
		return Measure{}, err
	}
	p, err := startPlayback(argv, timeout)
	if err != nil {
		return Measure{}, err
	}
	defer p.stop()
	wall, cpu, err := p.play(e.Lines)
	if err != nil {
		return Measure{}, err
	}
	if err := p.shutdown(); err != nil {
		return Measure{}, err
	}
	return Measure{Turns: turns, TurnsPerSec: float64(turns) / wall.Seconds(), CPUPerTurn: cpu / time.Duration(turns)}, nil
}

// playback is an adapter process Harness plays a recording to.
type playback struct {
	cmd     *exec.Cmd
	in      *os.File // the adapter's stdin
	outR    *os.File // the adapter's stdout
	out     *bufio.Reader
	exited  chan error
	timeout time.Duration
}

// startPlayback starts a process of argv with its stdin and stdout on pipes.
func startPlayback(argv []string, timeout time.Duration) (*playback, error) {
	if len(argv) == 0 {
		return nil, errors.New("no adapter command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	closeAll(inR, outW)
	p := &playback{cmd: cmd, in: inW, outR: outR, out: bufio.NewReaderSize(outR, 1<<16), exited: make(chan error, 1), timeout: timeout}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// stop closes the pipes and waits for the process, killing it after the timeout.
func (p *playback) stop() {
	closeAll(p.in, p.outR)
	select {
	case <-p.exited:
	case <-time.After(p.timeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// play writes the harness's lines and checks the adapter's, timing the runs after the first.
func (p *playback) play(lines []Line) (wall, cpu time.Duration, err error) {
	var line []byte
	starts := 0
	var began time.Time
	var cpu0 time.Duration
	for i, l := range lines {
		if l.FromHarness {
			if isStart(l.Text) {
				if starts++; starts == 2 {
					began, cpu0 = time.Now(), processCPU(p.cmd.Process.Pid)
				}
			}
			_ = p.in.SetWriteDeadline(time.Now().Add(p.timeout))
			line = append(append(line[:0], l.Text...), '\n')
			if _, err := p.in.Write(line); err != nil {
				return 0, 0, fmt.Errorf("line %d of the recording, to the adapter: %w", i+1, err)
			}
			continue
		}
		_ = p.outR.SetReadDeadline(time.Now().Add(p.timeout))
		got, err := readLine(p.out)
		if err != nil {
			return 0, 0, fmt.Errorf("line %d of the recording, from the adapter: %w", i+1, err)
		}
		if !bytes.Equal(got, l.Text) {
			return 0, 0, fmt.Errorf("line %d of the recording: the adapter wrote %.120q, the recording has %.120q", i+1, got, l.Text)
		}
	}
	return time.Since(began), processCPU(p.cmd.Process.Pid) - cpu0, nil
}

// shutdown closes the adapter's stdin, as the harness does after its shutdown line: the
// adapter must write nothing more and exit with status 0.
func (p *playback) shutdown() error {
	_ = p.in.Close()
	_ = p.outR.SetReadDeadline(time.Now().Add(p.timeout))
	if extra, err := p.out.ReadBytes('\n'); len(extra) > 0 || !errors.Is(err, io.EOF) {
		return fmt.Errorf("after the recording's last line: the adapter wrote %.120q (%v), where it should have exited", extra, err)
	}
	select {
	case err := <-p.exited:
		p.exited <- err // for stop's wait
		if err != nil {
			return fmt.Errorf("the adapter, after the recorded shutdown: %w", err)
		}
	case <-time.After(p.timeout):
		return fmt.Errorf("the adapter did not exit within %v of the recorded shutdown", p.timeout)
	}
	return nil
}

// readLine reads one line without its newline, however long.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// The slice is the reader's buffer, which the next read overwrites: copy it first.
		line = append([]byte(nil), line...)
		var rest []byte
		rest, err = r.ReadBytes('\n')
		line = append(line, rest...)
	}
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// ServeAdapter plays the adapter's side of e on r (the harness's lines) and w: it reads each
// line the harness wrote, and writes each line the adapter wrote, one write a line as the kits
// do, until the shutdown.
func (e *Exchange) ServeAdapter(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 1<<16)
	var line []byte
	for i, l := range e.Lines {
		if !l.FromHarness {
			line = append(append(line[:0], l.Text...), '\n')
			if _, err := w.Write(line); err != nil {
				return fmt.Errorf("line %d of the recording, to the harness: %w", i+1, err)
			}
			continue
		}
		got, err := readLine(in)
		if err != nil {
			return fmt.Errorf("line %d of the recording, from the harness: %w", i+1, err)
		}
		if !bytes.Equal(got, l.Text) {
			return fmt.Errorf("line %d of the recording: the harness wrote %.120q, the recording has %.120q", i+1, got, l.Text)
		}
	}
	return nil
}

// HarnessCeiling runs sc e.Runs times through a protocol.Process whose command (argv, with
// env added) serves e with ServeAdapter, and measures this process: turns/s and its CPU per
// turn. The played-back adapter's exit status is checked when the process is closed.
func (e *Exchange) HarnessCeiling(argv []string, env []string, sc *sim.Scenario) (Measure, error) {
	turns, err := e.timedTurns()
	if err != nil {
		return Measure{}, err
	}
	p := &protocol.Process{Command: argv, Env: env, Stderr: os.Stderr}
	var began time.Time
	var cpu0 time.Duration
	for i := range e.Runs {
		if i == 1 {
			began, cpu0 = time.Now(), ownCPU()
		}
		if err := runOnce(sc, p); err != nil {
			_ = p.Close()
			return Measure{}, fmt.Errorf("run %d against the played-back adapter: %w", i+1, err)
		}
	}
	wall, cpu := time.Since(began), ownCPU()-cpu0
	if err := p.Close(); err != nil {
		return Measure{}, fmt.Errorf("the played-back adapter: %w", err)
	}
	return Measure{Turns: turns, TurnsPerSec: float64(turns) / wall.Seconds(), CPUPerTurn: cpu / time.Duration(turns)}, nil
}

func isStart(line []byte) bool { return bytes.HasPrefix(line, []byte(`{"type":"start"`)) }

// ownCPU is this process's CPU time so far, user and system.
func ownCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is a process's CPU time so far, user and system, from /proc (0 without it).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) start with the state, field
	// 3 of the line: utime and stime, fields 14 and 15, are the 12th and 13th from there.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const clockTicks = 100
