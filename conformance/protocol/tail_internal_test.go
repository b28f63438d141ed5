package protocol

import "testing"

// TestTailShowsWhatEarlierScenariosWrote: a crash report's tail of stderr sets apart the
// lines an earlier scenario of the same process wrote.
func TestTailShowsWhatEarlierScenariosWrote(t *testing.T) {
	tl := newTail(5)
	tl.add([]byte("before"))
	if got := tl.String(); got != "  | before\n" {
		t.Errorf("never marked: %q", got)
	}
	tl.mark()
	if got, want := tl.String(), "  (written during earlier scenarios of this process:)\n  | before\n  (nothing written during this scenario)\n"; got != want {
		t.Errorf("marked, nothing since:\n%s", got)
	}
	tl.add([]byte("Traceback"))
	want := "  (written during earlier scenarios of this process:)\n  | before\n  (written during this scenario:)\n  | Traceback\n"
	if got := tl.String(); got != want {
		t.Errorf("marked, a line since:\n%s", got)
	}
	for range 6 {
		tl.add([]byte("x"))
	}
	if got := tl.String(); got != "  | x\n  | x\n  | x\n  | x\n  | x\n" {
		t.Errorf("only this scenario's lines kept:\n%s", got)
	}
}
