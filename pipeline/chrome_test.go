package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/pipeline"
)

// chromeLacks are the truth metrics a Kineto Chrome trace cannot give:
// EVENT_WAIT tasks, the groups (no profiler_metadata.json) and the decode
// batch (kernel_details.csv's input shapes) are not in it.
func chromeLacks(k string) bool {
	return strings.HasPrefix(k, "event_wait.") || strings.HasPrefix(k, "hccl.group.") || k == "decode.batch.observed"
}

// torch.profiler's Kineto Chrome trace (one *.pt.trace.json per rank in one
// folder) is read with the same metrics: every truth metric the trace can
// give, equal within 1e-6, the steps equal to the truth's, the device and
// rank from the trace; what it cannot give says why.
func TestChromeTraceLayout(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	sc.Ranks, sc.Layers, sc.Steps = 2, 2, 2
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutTorchNPUChrome)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 2)
	for i, rr := range res.Ranks {
		rt := truth.Ranks[i]
		require.Equal(t, model.FormatTorchNPUChrome, rr.Format)
		require.Equal(t, rt.Rank, rr.Rank)
		require.Equal(t, i, rr.Device, "the generator puts rank r on device r")
		require.Equal(t, rt.Dir, rr.Sources.Get(analysis.KeyDevice))
		compared := 0
		for k, v := range rt.Metrics {
			if chromeLacks(k) {
				require.NotContains(t, rr.Metrics, k)
				continue
			}
			require.Contains(t, rr.Metrics, k, "rank %d", i)
			within(t, v, rr.Metrics[k], 1e-6, k)
			require.Equal(t, rt.Dir, rr.Sources.Get(k), k)
			compared++
		}
		require.Greater(t, compared, 20)
		require.Contains(t, rr.Unavailable[analysis.MetricEventWaitUs], "Kineto trace")
		steps := analysis.StepsOf(rr)
		require.Len(t, steps, len(rt.Steps))
		for j, st := range rt.Steps {
			require.Equal(t, st.Step, steps[j].Step)
			within(t, st.FreeUs, float64(steps[j].Free)/1000, 1e-6, "step free")
			within(t, st.ComputingUs, float64(steps[j].Computing)/1000, 1e-6, "step computing")
		}
	}
	require.Equal(t, []int{0, 1}, res.Cluster.RanksUsed["collectives.matched"])
	require.Greater(t, res.Cluster.Metrics["collectives.matched"], 0.0)
}
