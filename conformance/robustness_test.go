package conformance_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/internal/selfadapter"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// markEnv tags every process a hostile adapter starts, so the test can find survivors.
const markEnv = "TURNSTILE_HOSTILE_MARK"

func tinyScenario() *sim.Scenario {
	return &sim.Scenario{Name: "tiny", Model: testModel, Prompts: []loop.Message{user("hi")},
		Responses: []sim.Response{{Content: loop.Text("hello")}}}
}

// TestHostileAdapters runs one misbehaving adapter per case and checks its verdict, that the
// harness returns promptly, and that no process of the adapter survives.
func TestHostileAdapters(t *testing.T) {
	cases := []struct {
		script string
		tweak  func(*protocol.Process)
		want   []string // substrings of the error, in order
	}{
		{"hang.sh", nil, []string{"timeout after 500ms", "did not report idle during start"}},
		{"crash.sh", nil, []string{"exited (exit status 3) during start", "last lines of stdout:", `"type":"hello"`, "last lines of stderr:", "panic: something broke"}},
		// Its stderr copied through as it came, the error says so of the lines it repeats.
		{"crash.sh", func(p *protocol.Process) { p.Stderr = io.Discard }, []string{"exited (exit status 3) during start", "last lines of stderr (copied through above as well):", "panic: something broke"}},
		{"garbage.sh", nil, []string{"protocol error at line 2: not JSON", "was this line meant for stderr?", "starting run for scenario..."}},
		// Writing 16 MiB through a pipe is slow under -race on a busy machine: give it time.
		{"longline.sh", func(p *protocol.Process) { p.Timeout = 20 * time.Second }, []string{"protocol error at line 2: the line is longer than the limit of 16777216 bytes"}},
		{"dupid.sh", nil, []string{"protocol error at line 3: call id 1 is already in use in session 1"}},
		{"badshape.sh", nil, []string{"protocol error at line 2: a \"call\" message does not match the protocol schema", "toolName", "at /id:", "expected: {\"type\":\"call\""}},
		{"earlyexit.sh", nil, []string{"exited (exit status 0) during start"}},
		{"nohello.sh", nil, []string{"exited (exit status 5) before its hello", "cannot find my dependencies"}},
		{"slowstart.sh", func(p *protocol.Process) { p.HelloTimeout = 300 * time.Millisecond }, []string{"timeout after 300ms: no hello"}},
		{"wrongsession.sh", nil, []string{"protocol error at line 2: a \"idle\" message for session 99, but session 1 is running"}},
		{"standingstream.sh", nil, []string{"protocol error at line 2: call id 1 is marked standing, but the start of session 1 promised no answer to a stream call", "§15"}},
		{"standingunpromised.sh", nil, []string{"protocol error at line 2: call id 1 is marked standing, but the start of session 1 promised no answer to a getSteeringMessages call"}},
		{"standingbignum.sh", nil, []string{"protocol error at line 2: call id 1 (getSteeringMessages), marked standing, was refused: bad hook data", "went on with the answer promised"}},
		{"standingwait.sh", nil, []string{"timeout after 500ms: the implementation did not report idle during start", "the last line read was call id 1 (getSteeringMessages), marked standing, which the harness never answers", "§15"}},
		{"standingfalse.sh", nil, []string{"protocol error at line 2: a \"call\" message does not match the protocol schema", "at /standing:", "expected: {\"type\":\"call\""}},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.script, ".sh"), func(t *testing.T) {
			mark := fmt.Sprintf("%s-%d-%d", tc.script, os.Getpid(), time.Now().UnixNano())
			p := &protocol.Process{
				Command: []string{"sh", filepath.Join("testdata", tc.script)},
				Env:     []string{markEnv + "=" + mark},
				Timeout: 500 * time.Millisecond,
			}
			if tc.tweak != nil {
				tc.tweak(p)
			}
			began := time.Now()
			_, err := sim.Run(tinyScenario(), p)
			if elapsed := time.Since(began); elapsed > 10*time.Second {
				t.Errorf("the verdict took %v", elapsed)
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			rest := msg
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("the error lacks %q (in order):\n%s", w, msg)
				}
				rest = rest[i+len(w):]
			}
			if !strings.HasPrefix(msg, "scenario tiny: ") {
				t.Errorf("the error is not in context: %s", msg)
			}
			if err := p.Close(); err != nil {
				t.Errorf("close after failure: %v", err)
			}
			if left := survivors(t, mark); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// survivors lists the processes carrying the mark in their environment, after giving the
// killed ones a moment to be reaped.
func survivors(t *testing.T, mark string) []string {
	t.Helper()
	var found []string
	for range 40 {
		if found = marked(mark); len(found) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return found
}

// marked lists the live processes carrying the mark in their environment.
func marked(mark string) []string {
	needle := []byte(markEnv + "=" + mark)
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(d, "stat"))
		if fields := strings.Fields(string(stat)); len(fields) > 2 && fields[2] == "Z" {
			continue // a zombie awaiting its reaper holds nothing
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		found = append(found, filepath.Base(d)+":"+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return found
}

// TestAdaptersLeaveNothingBehind runs a scenario through the Serve and pi adapters, closes
// them, and checks that none of their processes survive; likewise after a Kill mid-scenario.
func TestAdaptersLeaveNothingBehind(t *testing.T) {
	adapters := map[string]func(t *testing.T, mark string) *protocol.Process{
		"serve": func(t *testing.T, mark string) *protocol.Process {
			return selfadapter.Process(t, "serve", markEnv+"="+mark)
		},
		"pi": func(t *testing.T, mark string) *protocol.Process {
			p := piAdapter(t)
			p.Env = append(p.Env, markEnv+"="+mark)
			return p
		},
	}
	for name, mk := range adapters {
		t.Run(name, func(t *testing.T) {
			mark := fmt.Sprintf("%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
			p := mk(t, mark)
			if _, err := sim.Run(byName("parallel-tools-with-updates"), p); err != nil {
				t.Fatal(err)
			}
			if len(marked(mark)) == 0 {
				t.Fatal("the adapter is not running between scenarios")
			}
			if err := p.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if left := survivors(t, mark); len(left) > 0 {
				t.Errorf("after Close: %v", left)
			}
			// Killed in the middle of a scenario: the scenario fails, nothing survives, and
			// the next scenario gets a fresh process.
			killing := &killingPort{p: p, after: 3}
			_, err := sim.Run(byName("text-only"), killingImpl{p, killing})
			if err == nil || !strings.Contains(err.Error(), "signal: killed") {
				t.Errorf("killed run: %v", err)
			}
			if left := survivors(t, mark); len(left) > 0 {
				t.Errorf("after Kill: %v", left)
			}
			if _, err := sim.Run(byName("text-only"), p); err != nil {
				t.Errorf("after a kill, the next scenario: %v", err)
			}
		})
	}
}

// killingImpl is a Process whose port kills it after a few calls.
type killingImpl struct {
	*protocol.Process
	port *killingPort
}

func (k killingImpl) Start(setup sim.Setup, port sim.Port) error {
	k.port.Port = port
	return k.Process.Start(setup, k.port)
}

type killingPort struct {
	sim.Port
	p     *protocol.Process
	after int
}

func (k *killingPort) Call(c sim.Call) sim.Answer {
	k.after--
	if k.after == 0 {
		k.p.Kill()
	}
	return k.Port.Call(c)
}

// TestDisallowedCallsAreRecordedFailures: a call the scenario does not allow (an uninstalled
// hook, an undefined tool) fails that call and is recorded in the trace, so the verdict
// names it, instead of being answered as if it were scripted.
func TestDisallowedCallsAreRecordedFailures(t *testing.T) {
	p := &protocol.Process{Command: []string{"sh", filepath.Join("testdata", "disallowed.sh")}, Timeout: 5 * time.Second}
	defer p.Close()
	tr, err := sim.Run(tinyScenario(), p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sim.Run(tinyScenario(), sim.NewReference())
	if trace.Compare(want, tr, trace.Strict).Equal() {
		t.Error("the trace equals the reference's")
	}
	timeline := string(tr.Timeline())
	for _, want := range []string{
		"FAIL  protocol: hook finishTurn was called but the scenario does not install it",
		`FAIL  script: tool "ghost" was executed but the scenario does not define it`,
		"FAIL  stuck: the implementation waits for something that was never scheduled",
	} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the trace lacks %q:\n%s", want, timeline)
		}
	}
}
