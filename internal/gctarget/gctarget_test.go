package gctarget

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercentForCapsTheHeapsGrowth(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, Percent},
		{4 << 20, Percent},
		{Headroom * 100 / Percent, Percent},
		{Headroom*100/Percent + 1, Headroom * 100 / (Headroom*100/Percent + 1)},
		{Headroom / 2, 200},
		{Headroom, 100},
		{10 * Headroom, 100},
	} {
		if got := percentFor(c.live); got != c.want {
			t.Errorf("percentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// collectUntil collects until the GC target is want, or fails after a while: tune runs on
// the finalizer goroutine after a collection.
func collectUntil(t *testing.T, want int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(time.Millisecond)
		if Current() == want {
			return
		}
	}
	t.Fatalf("the GC target is %d, want %d", Current(), want)
}

func TestSetLowersTheTargetWhileMuchIsLive(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	Set()
	collectUntil(t, Percent)
	live := make([]byte, 2*Headroom)
	for i := range live {
		live[i] = 1
	}
	collectUntil(t, 100)
	runtime.KeepAlive(live)
	live = nil
	collectUntil(t, Percent)

	// Once something else sets the target, the tuner leaves it alone.
	debug.SetGCPercent(250)
	held := make([]byte, 2*Headroom)
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(held)
	if p := Current(); p != 250 {
		t.Errorf("after SetGCPercent(250) the target is %d", p)
	}
}

func TestSetAgainTunesAgain(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	Set()
	debug.SetGCPercent(250)
	live := make([]byte, 2*Headroom)
	for deadline := time.Now().Add(20 * time.Second); isArmed(); {
		if time.Now().After(deadline) {
			t.Fatal("the tuner still runs after SetGCPercent(250)")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if p := Current(); p != 250 {
		t.Fatalf("the tuner stopped leaving %d, not 250", p)
	}
	Set()
	collectUntil(t, 100)
	runtime.KeepAlive(live)
}

func isArmed() bool {
	mu.Lock()
	defer mu.Unlock()
	return armed
}
