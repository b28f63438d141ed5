package conformance_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestRunawayAdaptersAreStoppedByTheBudget: an adapter that goes on making calls, or sending
// events, once the run's budget is spent is ended, and the run's verdict names the budget,
// as an in-process run's does, long before the timeout.
func TestRunawayAdaptersAreStoppedByTheBudget(t *testing.T) {
	cases := []struct {
		script string
		budget sim.Budget
		kind   string
		want   string
	}{
		{"runawayrequests.sh", sim.Budget{Requests: 20}, "requests", "the run made 20 requests; budget 20"},
		{"runawayevents.sh", sim.Budget{Entries: 200}, "entries", "the trace reached 200 entries; budget 200"},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.script, ".sh"), func(t *testing.T) {
			mark := fmt.Sprintf("%s-%d-%d", tc.script, os.Getpid(), time.Now().UnixNano())
			p := &protocol.Process{Command: []string{"sh", filepath.Join("testdata", tc.script)},
				Env: []string{markEnv + "=" + mark}, Timeout: time.Minute}
			defer p.Close()
			sc := tinyScenario()
			sc.Budget = tc.budget
			began := time.Now()
			tr, err := sim.Run(sc, p)
			if elapsed := time.Since(began); elapsed > 20*time.Second {
				t.Errorf("the verdict took %v (the timeout is a minute)", elapsed)
			}
			var over *sim.BudgetError
			if !errors.As(err, &over) || over.Budget != tc.kind || over.Text != tc.want {
				t.Fatalf("err %v, want the %s budget: %s", err, tc.kind, tc.want)
			}
			if last := tr.Entries[len(tr.Entries)-1]; last.Kind != trace.KindFail || last.Name != "budget" || last.Error != tc.want {
				t.Errorf("the trace ends with %+v", last)
			}
			if left := survivors(t, mark); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// TestAdapterExitsAndDescendants: an adapter's exit is seen from the process, not from its
// stdout's end, even while something it started keeps stdout open; every process it started
// is ended, those in a session of their own included; a stderr line of 17 MB neither stops
// the reading of stderr nor blocks the adapter, and the verdict shows it cut; one that never
// stops after the run has ended is ended after 10,000 lines.
func TestAdapterExitsAndDescendants(t *testing.T) {
	cases := []struct {
		script  string
		timeout time.Duration
		within  time.Duration
		want    []string
	}{
		// Seen within a second; the bound is generous for a loaded machine, and far below
		// the minute's timeout.
		{"exitchild.sh", time.Minute, 5 * time.Second, []string{"exited (exit status 0) during start"}},
		{"exitsetsid.sh", time.Minute, 5 * time.Second, []string{"exited (exit status 0) during start"}},
		{"setsidhang.sh", 500 * time.Millisecond, 10 * time.Second, []string{"timeout after 500ms", "did not report idle during start"}},
		{"stderrflood.sh", time.Minute, 20 * time.Second, []string{"exited (exit status 3) during start", "last lines of stderr:",
			"| " + strings.Repeat("e", 300) + "… (17000000 bytes)", "| boom after the flood"}},
		{"afterstop.sh", time.Minute, 10 * time.Second, []string{"stop: the implementation sent over 10000 lines during stop, after the run had ended, without reporting stopped"}},
		{"bigid.sh", time.Minute, 5 * time.Second, []string{`protocol error at line 2: a "call" message: "id" is 1e30, which is not a plain whole number from 1 to 9223372036854775807 (write ids and sessions as digits)`}},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.script, ".sh"), func(t *testing.T) {
			mark := fmt.Sprintf("%s-%d-%d", tc.script, os.Getpid(), time.Now().UnixNano())
			p := &protocol.Process{Command: []string{"sh", filepath.Join("testdata", tc.script)},
				Env: []string{markEnv + "=" + mark}, Timeout: tc.timeout}
			defer p.Close()
			began := time.Now()
			_, err := sim.Run(tinyScenario(), p)
			if elapsed := time.Since(began); elapsed > tc.within {
				t.Errorf("the verdict took %v; bound %v", elapsed, tc.within)
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg, rest := err.Error(), err.Error()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("the error lacks %q (in order):\n%.3000s", w, msg)
				}
				rest = rest[i+len(w):]
			}
			if len(msg) > 20_000 {
				t.Errorf("the verdict is %d bytes long", len(msg))
			}
			if left := survivors(t, mark); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}
