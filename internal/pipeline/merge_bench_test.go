package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// exportNodes generates a hot-rank capture of n ranks (layers x 2 steps),
// splits it into nodes node folders and exports each with SummaryOnly; it
// returns the export folders.
func exportNodes(tb testing.TB, n, layers, nodes int) []string {
	tb.Helper()
	sc := testutil.Scenario(tb, "hot-rank")
	sc.Ranks, sc.Layers, sc.Steps = n, layers, 2
	gen := tb.TempDir()
	truth, err := tracegen.Generate(gen, sc)
	if err != nil {
		tb.Fatal(err)
	}
	base := tb.TempDir()
	var outs []string
	for k := range nodes {
		node := filepath.Join(base, fmt.Sprintf("node%d", k))
		if err := os.MkdirAll(node, 0o755); err != nil {
			tb.Fatal(err)
		}
		for i, r := range truth.Ranks {
			if i*nodes/len(truth.Ranks) == k {
				if err := os.Rename(filepath.Join(gen, r.Dir), filepath.Join(node, r.Dir)); err != nil {
					tb.Fatal(err)
				}
			}
		}
		out := filepath.Join(base, fmt.Sprintf("node%d.pq", k))
		if _, err := Export(context.Background(), node, out, ExportOptions{SummaryOnly: true}); err != nil {
			tb.Fatal(err)
		}
		outs = append(outs, out)
	}
	return outs
}

// BenchmarkMerge merges 8 node exports (the node tables alone) at several
// rank counts and trace sizes: ns a rank and the peak heap a rank should
// stay flat in the rank count, and not follow the trace's device tasks
// (scripts/mergebench.sh measures the binary at 1,000 and 10,000 ranks).
func BenchmarkMerge(b *testing.B) {
	for _, c := range []struct{ ranks, layers int }{{64, 2}, {256, 2}, {64, 8}} {
		outs := exportNodes(b, c.ranks, c.layers, 8)
		b.Run(fmt.Sprintf("ranks=%d/layers=%d", c.ranks, c.layers), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				p, _ := measureHeap(func() any {
					res, err := Analyze(context.Background(), outs[0], Options{More: outs[1:]})
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Ranks) != c.ranks {
						b.Fatalf("%d ranks merged, want %d", len(res.Ranks), c.ranks)
					}
					return res
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.ranks), "ns/rank")
			b.ReportMetric(float64(peak)/float64(c.ranks)/1024, "peak-KiB/rank")
		})
	}
}
