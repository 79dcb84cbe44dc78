package benchdata

import (
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// heapObjects is the runtime/metrics name of the bytes of heap objects,
// live or not yet swept (runtime.MemStats.HeapAlloc, without stopping the
// world to read it).
const heapObjects = "/memory/classes/heap/objects:bytes"

// PeakHeap samples the heap every 200 µs from Start to Stop and keeps the
// largest value: the peak a benchmark's loop reached, garbage not yet
// collected included (what the process's resident memory follows). A
// sampler can miss a peak shorter than its period; at 200 MB a rank's
// heap stays near its peak for tens of milliseconds.
type PeakHeap struct {
	max  atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

// StartPeakHeap starts sampling.
func StartPeakHeap() *PeakHeap {
	p := &PeakHeap{stop: make(chan struct{}), done: make(chan struct{})}
	s := []metrics.Sample{{Name: heapObjects}}
	go func() {
		defer close(p.done)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 {
				if v := s[0].Value.Uint64(); v > p.max.Load() {
					p.max.Store(v)
				}
			}
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// Stop ends sampling and returns the peak in bytes.
func (p *PeakHeap) Stop() uint64 {
	close(p.stop)
	<-p.done
	return p.max.Load()
}

// ReportPeakHeap stops p and reports its peak as peak-heap-MiB.
func ReportPeakHeap(b *testing.B, p *PeakHeap) {
	b.ReportMetric(float64(p.Stop())/(1<<20), "peak-heap-MiB")
}

// ParquetDir is where scripts/bench.sh caches the `npuprof export` of the
// rank of size sz (complete when it holds a .complete file); benchmarks
// reuse it when present.
func ParquetDir(sz Size) string {
	return filepath.Join(CacheDir(), fmt.Sprintf("%s-%s-%s-parquet", Scenario, CacheTag, sz.Name))
}
