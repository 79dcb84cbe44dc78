package assemble

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
)

// AddDetailReleasing writes the detail AddDetail writes and leaves no
// rank's pass results behind it.
func TestAddDetailReleasingSameDetail(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []string{"rank0_ascend_pt", "rank1_ascend_pt"} {
		out := filepath.Join(dir, r, "ASCEND_PROFILER_OUTPUT")
		require.NoError(t, os.MkdirAll(out, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, "trace_view.json"), benchdata.SmallTrace(t), 0o644))
	}
	analyze := func() *analysis.Result {
		p, err := gather.Models(context.Background(), dir, gather.Options{Workers: 1})
		require.NoError(t, err)
		res := &analysis.Result{}
		for _, m := range p.Ranks {
			res.Ranks = append(res.Ranks, analysis.AnalyzeRank(m))
		}
		return res
	}
	kept, released := analyze(), analyze()
	want := NewContract(kept, nil, nil)
	AddDetail(want, kept)
	got := NewContract(released, nil, nil)
	AddDetailReleasing(got, released)
	require.Len(t, released.Ranks, 2)
	for i := range released.Ranks {
		require.NotNil(t, analysis.KernelsOf(kept.Ranks[i]))
		require.Nil(t, analysis.KernelsOf(released.Ranks[i]))
		require.Nil(t, analysis.TimelineOf(released.Ranks[i]))
		require.NotNil(t, got.Ranks[i].Detail)
	}
	require.Equal(t, want, got)
}
