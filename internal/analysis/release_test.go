package analysis

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/results/metric"
	"github.com/npuprof/npuprof/internal/tracegen"
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

	rr.ReleasePassResults()
	require.Nil(t, KernelsOf(rr))
	require.Nil(t, TimelineOf(rr))
	require.Nil(t, HCCLOf(rr))
	require.Equal(t, window, rr.Metrics[metric.MetricDeviceWindowUs])
	require.Equal(t, metrics, rr.Metrics)
	require.Equal(t, sources, rr.Sources)
	require.Empty(t, res.Errors())
}

// What a finished rank keeps only for its own passes (the layers pass's
// stretches) and only for the cluster passes (the collectives the arrival
// pass matches, the exchanges the ledger cluster pass matches) is dropped
// without changing a metric, and what the plan reads (the replay
// timeline) stays.
func TestReleaseKeepsMetrics(t *testing.T) {
	sc, ok := tracegen.Lookup("ep-fc1-cumsum-steps")
	require.True(t, ok)
	sc.Ranks, sc.Layers, sc.Steps = 2, 6, 3
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, sc)
	require.NoError(t, err)
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	want, err := analyzeProfile(p)
	require.NoError(t, err)

	got := &Result{Ranks: RunRanks(p.Ranks, Passes)}
	for _, rr := range got.Ranks {
		require.NotEmpty(t, LayersOf(rr).Gaps)
		rr.ReleaseModel()
		require.Nil(t, LayersOf(rr).Gaps)
	}
	got.Cluster = RunCluster(got.Ranks, p.Experts)
	require.Positive(t, got.Cluster.Metrics[MetricCollectivesMatched])
	require.NotNil(t, LedgerClusterOf(got.Cluster))
	got.ReleaseClusterInputs()
	for i, rr := range got.Ranks {
		require.Equal(t, want.Ranks[i].Metrics, rr.Metrics)
		require.Nil(t, CollectivesOf(rr).Ops)
		require.NotEmpty(t, LedgerOf(rr).Steps)
		for _, st := range LedgerOf(rr).Steps {
			require.Nil(t, st.Sync)
		}
		require.NotNil(t, ReplayOf(rr))
		require.Equal(t, ReplayOf(want.Ranks[i]).Steps, ReplayOf(rr).Steps)
	}
	require.Equal(t, want.Cluster.Metrics, got.Cluster.Metrics)
	require.Equal(t, want.Cluster.Unavailable, got.Cluster.Unavailable)
	for _, rl := range LedgerClusterOf(got.Cluster).Ranks {
		for _, st := range rl.Steps {
			require.Nil(t, st.Sync)
		}
	}
}
