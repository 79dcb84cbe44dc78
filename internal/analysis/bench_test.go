package analysis_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/pipeline"
)

// BenchmarkAnalyze is `npuprof analyze` on one rank folder, end to end
// (detect, trace_view.json, kernel_details.csv, step_trace_time.csv,
// communication.json, metadata, every pass). MB/s counts trace bytes only,
// as the targets in docs/performance.md do; peak-heap-MiB is the largest
// heap the loop reached (benchdata.PeakHeap), B/op what one run allocates.
func BenchmarkAnalyze(b *testing.B) {
	sizes, err := benchdata.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	if len(sizes) == 0 {
		b.Skip("set NPUPROF_BENCH_SIZES (e.g. 50MB,200MB) or run `make bench`")
	}
	for _, sz := range sizes {
		dir := benchdata.RankDir(b, sz)
		st, err := os.Stat(filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(sz.Name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			runtime.GC()
			peak := benchdata.StartPeakHeap()
			cpu0 := benchdata.CPUTime()
			for b.Loop() {
				res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{Workers: 1, TimelineSample: true})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Ranks) != 1 || len(res.Ranks[0].Errors) > 0 {
					b.Fatalf("unexpected result: %+v", res.Ranks)
				}
			}
			benchdata.ReportCPU(b, st.Size(), cpu0)
			benchdata.ReportPeakHeap(b, peak)
		})
	}
}
