package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
)

// BenchmarkReadBack is `npuprof analyze OUTDIR` on the Parquet export of
// the rank BenchmarkAnalyze reads (issue 7, item 5): parquetio.ReadRank,
// every pass, the model released, the cluster passes. MB/s counts the
// original trace's bytes, so it compares with BenchmarkAnalyze; B/op is
// what one read-back allocates and peak-heap-MiB the largest heap the
// loop reached (benchdata.PeakHeap). It reads scripts/bench.sh's cached
// export when there is one, else exports the rank into a temporary
// folder first (the metrics table is then empty: analyze does not read
// it).
func BenchmarkReadBack(b *testing.B) {
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
		pq := benchdata.ParquetDir(sz)
		if _, err := os.Stat(filepath.Join(pq, ".complete")); err != nil {
			pq = b.TempDir()
			p, err := gather.Models(context.Background(), dir, gather.Options{})
			if err != nil {
				b.Fatal(err)
			}
			var nodes []parquetio.NodeRank
			for _, r := range p.Ranks {
				if err := parquetio.WriteRank(pq, r, parquetio.Extra{}); err != nil {
					b.Fatal(err)
				}
				nodes = append(nodes, parquetio.NodeRank{ID: parquetio.RankID{Rank: r.Rank}, Groups: r.Groups})
			}
			if err := parquetio.WriteNode(pq, "bench", nodes); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(sz.Name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			runtime.GC()
			peak := benchdata.StartPeakHeap()
			cpu0 := benchdata.CPUTime()
			for b.Loop() {
				res, err := pipeline.Analyze(context.Background(), pq, pipeline.Options{Workers: 1})
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
