package analysis

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/pipeline/gather"
	"github.com/npuprof/npuprof/results/metric"
)

// ReleasePassResults drops what the accessors read and keeps what the
// rank result holds beside them: its metrics, unavailable reasons,
// sources and errors.
func TestReleasePassResults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "trace_view.json"), benchdata.SmallTrace(t), 0o644))
	p, err := gather.Models(context.Background(), filepath.Dir(out), gather.Options{Workers: 1})
	require.NoError(t, err)
	rr := AnalyzeRank(p.Ranks[0])
	res := &Result{Ranks: []*RankResult{rr}}
	require.NotNil(t, KernelsOf(rr))
	require.NotNil(t, TimelineOf(rr))
	metrics, sources := rr.Metrics, rr.Sources
	window := rr.Metrics[metric.MetricDeviceWindowUs]
	require.Positive(t, window)

	res.ReleasePassResults()
	require.Nil(t, KernelsOf(rr))
	require.Nil(t, TimelineOf(rr))
	require.Nil(t, HCCLOf(rr))
	require.Equal(t, window, rr.Metrics[metric.MetricDeviceWindowUs])
	require.Equal(t, metrics, rr.Metrics)
	require.Equal(t, sources, rr.Sources)
	require.Empty(t, res.Errors())
}
