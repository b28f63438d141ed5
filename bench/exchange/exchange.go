// Package exchange records the protocol lines a harness and an adapter exchange over runs of
// one scenario, and plays either side of them back without doing that side's work. Each
// playback measures the other side alone:
//
//   - Harness plays the harness's lines to a fresh adapter process, writing them as the
//     harness did and reading the adapter's: the adapter's ceiling, what it does against a
//     harness that costs nothing.
//   - ServeAdapter plays the adapter's lines to a harness (`turnstile conform`, a
//     conformance.Process): the harness's ceiling, against an adapter that answers at once.
//
// Both check every line they read against the recording, so a playback that drifted from the
// recorded exchange fails instead of measuring something else.
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

	"github.com/turnstile-dev/turnstile/conformance"
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
	p := &conformance.Process{Command: argv, Stderr: os.Stderr, Log: &log}
	for i := range runs {
		tr, err := sim.Run(sc, p)
		if err == nil && tr.Failed() {
			err = errors.New("the run failed")
		}
		if err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("recording %s, run %d: %w", sc.Name, i+1, err)
		}
	}
	if err := p.Close(); err != nil {
		return nil, fmt.Errorf("recording %s: %w", sc.Name, err)
	}
	lines, err := parseLog(log.Bytes())
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", sc.Name, err)
	}
	return &Exchange{Lines: lines, Runs: runs, Turns: turns}, nil
}

// parseLog reads a conformance.Process log: "> " before the harness's lines, "< " before the
// adapter's.
func parseLog(log []byte) ([]Line, error) {
	var lines []Line
	for text := range bytes.Lines(log) {
		text = bytes.TrimSuffix(text, []byte("\n"))
		switch {
		case bytes.HasPrefix(text, []byte("> ")):
			lines = append(lines, Line{FromHarness: true, Text: text[2:]})
		case bytes.HasPrefix(text, []byte("< ")):
			lines = append(lines, Line{Text: text[2:]})
		default:
			return nil, fmt.Errorf("log line %d has no direction: %.80q", len(lines)+1, text)
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
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	e := &Exchange{}
	if _, err := fmt.Sscanf(string(head), "# runs %d turns %d", &e.Runs, &e.Turns); err != nil {
		return nil, fmt.Errorf("%s: line 1: %w", path, err)
	}
	if e.Lines, err = parseLog(rest); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// Measure is what one playback measured over the runs after the first (which warms the
// playing-against side up: Node imports pi after its hello).
type Measure struct {
	// TurnsPerSec is provider requests per wall second.
	TurnsPerSec float64
	// CPUPerTurn is the CPU time (user and system) per turn of the side measured: the
	// adapter's process for Harness (read from /proc; 0 without it), the calling process for
	// HarnessCeiling.
	CPUPerTurn time.Duration
}

// Harness plays the harness's side of e to a fresh process of argv and measures the adapter.
func (e *Exchange) Harness(argv []string) (Measure, error) {
	if e.Runs < 2 {
		return Measure{}, errors.New("a playback needs two runs or more: the first warms up")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Measure{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Measure{}, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return Measure{}, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	defer func() {
		// The recording ends with the shutdown: the adapter exits by itself, unless the
		// playback stopped early.
		_ = stdin.Close()
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	out := bufio.NewReaderSize(stdout, 1<<16)
	var unsent []byte
	starts := 0
	var began time.Time
	var cpu0 time.Duration
	for i, l := range e.Lines {
		if l.FromHarness {
			if isStart(l.Text) {
				if starts++; starts == 2 {
					began, cpu0 = time.Now(), processCPU(cmd.Process.Pid)
				}
			}
			// As the harness does: the lines written since its last read go out together.
			unsent = append(append(unsent, l.Text...), '\n')
			continue
		}
		if len(unsent) > 0 {
			if _, err := stdin.Write(unsent); err != nil {
				return Measure{}, fmt.Errorf("line %d: %w", i+1, err)
			}
			unsent = unsent[:0]
		}
		got, err := out.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: read the rest of it.
			rest, err2 := out.ReadBytes('\n')
			got, err = append(append([]byte(nil), got...), rest...), err2
		}
		if err != nil {
			return Measure{}, fmt.Errorf("line %d: the adapter's line: %w", i+1, err)
		}
		if !bytes.Equal(bytes.TrimSuffix(got, []byte("\n")), l.Text) {
			return Measure{}, fmt.Errorf("line %d: the adapter wrote %.120q, the recording has %.120q", i+1, got, l.Text)
		}
	}
	wall := time.Since(began)
	turns := float64((e.Runs - 1) * e.Turns)
	return Measure{TurnsPerSec: turns / wall.Seconds(), CPUPerTurn: time.Duration(float64(processCPU(cmd.Process.Pid)-cpu0) / turns)}, nil
}

// ServeAdapter plays the adapter's side of e on r (the harness's lines) and w: it reads each
// line the harness wrote, then writes what the adapter wrote next, until the shutdown.
func (e *Exchange) ServeAdapter(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 1<<16)
	out := bufio.NewWriterSize(w, 1<<16)
	for i, l := range e.Lines {
		if !l.FromHarness {
			if _, err := out.Write(append(l.Text, '\n')); err != nil {
				return err
			}
			continue
		}
		if err := out.Flush(); err != nil {
			return err
		}
		got, err := in.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("line %d: the harness's line: %w", i+1, err)
		}
		if !bytes.Equal(bytes.TrimSuffix(got, []byte("\n")), l.Text) {
			return fmt.Errorf("line %d: the harness wrote %.120q, the recording has %.120q", i+1, got, l.Text)
		}
	}
	return out.Flush()
}

// HarnessCeiling runs sc e.Runs times through a conformance.Process whose command (argv)
// serves e with ServeAdapter, and measures this process: turns/s and its CPU per turn.
func (e *Exchange) HarnessCeiling(argv []string, env []string, sc *sim.Scenario) (Measure, error) {
	if e.Runs < 2 {
		return Measure{}, errors.New("a playback needs two runs or more: the first warms up")
	}
	p := &conformance.Process{Command: argv, Env: env, Stderr: os.Stderr}
	defer func() { _ = p.Close() }()
	var began time.Time
	var cpu0 time.Duration
	for i := range e.Runs {
		if i == 1 {
			began, cpu0 = time.Now(), ownCPU()
		}
		tr, err := sim.Run(sc, p)
		if err == nil && tr.Failed() {
			err = errors.New("the run failed")
		}
		if err != nil {
			return Measure{}, fmt.Errorf("run %d against the played-back adapter: %w", i+1, err)
		}
	}
	wall, cpu := time.Since(began), ownCPU()-cpu0
	turns := float64((e.Runs - 1) * e.Turns)
	return Measure{TurnsPerSec: turns / wall.Seconds(), CPUPerTurn: time.Duration(float64(cpu) / turns)}, nil
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
	// The fields after the command name (which may hold spaces) start with the state;
	// utime and stime are fields 14 and 15 of the line, 12 and 13 after the state.
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
