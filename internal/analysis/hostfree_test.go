package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// hostFree generates a scenario and returns each rank's metrics and the
// truth.
func hostFree(t *testing.T, sc tracegen.Scenario) ([]map[string]float64, *tracegen.Truth) {
	t.Helper()
	dir := t.TempDir()
	truth, err := tracegen.Generate(dir, sc)
	require.NoError(t, err)
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	var out []map[string]float64
	for _, rk := range p.Ranks {
		out = append(out, AnalyzeRank(rk).Metrics)
	}
	return out, truth
}

// The idle within steps is the steps' own free time (ProfilerStep#N: the
// truth's per-step free time, summed), or the free time outside the
// stretches that cross a decode-step boundary; the two parts add up to
// overlap.free.time_us.
func TestFreeWithinAndBetweenSteps(t *testing.T) {
	sc, ok := tracegen.Lookup("clean-steps")
	require.True(t, ok)
	ms, truth := hostFree(t, sc)
	for i, m := range ms {
		want := 0.0
		for _, s := range truth.Ranks[i].Steps {
			want += s.FreeUs
		}
		require.InDelta(t, want, m[MetricFreeInStepsUs], 0.002, "rank %d", i)
		require.InDelta(t, m[MetricFreeUs]-want, m[MetricFreeBetweenStepsUs], 0.002, "rank %d", i)
	}

	// vLLM-style capture (no ProfilerStep#N): decode-step boundaries
	share := map[string]float64{}
	for _, name := range []string{"clean", "host-bound"} {
		sc, ok := tracegen.Lookup(name)
		require.True(t, ok)
		ms, _ := hostFree(t, sc)
		for i, m := range ms {
			in, between := m[MetricFreeInStepsUs], m[MetricFreeBetweenStepsUs]
			require.Positive(t, between, "%s rank %d: the scheduler's turn between steps", name, i)
			require.InDelta(t, m[MetricFreeUs], in+between, 0.002, "%s rank %d", name, i)
			share[name] = math.Max(share[name], in/(m[MetricDeviceWindowUs]-between))
		}
	}
	// the host-bound scenario's launch gaps are within steps; a clean
	// capture's idle is mostly between them
	require.Greater(t, share["host-bound"], 0.25)
	require.Less(t, share["clean"], 0.10)
}
