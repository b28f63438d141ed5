package audit

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// repeated reads unit again and again, size bytes in all (whole units only).
type repeated struct {
	unit []byte
	left int64
	off  int
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.left <= 0 && r.off == 0 {
		return 0, io.EOF
	}
	if r.off == 0 {
		r.left -= int64(len(r.unit))
	}
	n := copy(p, r.unit[r.off:])
	r.off = (r.off + n) % len(r.unit)
	return n, nil
}

// BenchmarkAuditGigabyte audits a 1 GB event recording (AUDIT_BENCH_BYTES to change the
// size): every honest recording of pi that ends its run, one after another, again and again
// — an app's log of some 100,000 runs. It reports the throughput and the peak heap, which
// must stay flat whatever the size (bounded memory).
func BenchmarkAuditGigabyte(b *testing.B) {
	size := int64(1 << 30)
	if s := os.Getenv("AUDIT_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		size = n
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "pi", "*.events.jsonl"))
	var unit []byte
	runs := 0
	for _, f := range files {
		if strings.Contains(f, "fails-run") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		unit = append(unit, data...)
		runs++
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var peak atomic.Uint64
	for b.Loop() {
		runtime.GC()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		findings := 0
		sum, err := Check(&repeated{unit: unit, left: size}, Options{}, func(Finding) { findings++ })
		close(stop)
		wg.Wait()
		if err != nil || findings > 0 {
			b.Fatalf("err %v, %d findings", err, findings)
		}
		if sum.Runs < runs {
			b.Fatalf("%d runs", sum.Runs)
		}
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}
