package analysis

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/tracegen"
)

// Every dispatcher path delimits MoE layers: the per-layer metrics equal
// the generator's truth on each, and moe.dispatcher names the path with
// the kernels that say so.
func TestDispatcherPathsDelimitLayers(t *testing.T) {
	for _, c := range []struct {
		path, opener string
		perLayer     map[string]float64 // hccl.per_layer.<type>.count
	}{
		{DispatcherAllGather, "MoeInitRoutingCustom", map[string]float64{"allreduce": 2}},
		{DispatcherMC2, "MoeDistributeDispatchV2", map[string]float64{"allreduce": 1, "allgather": 1}},
		{DispatcherFusedMC2, "DispatchFFNCombine", map[string]float64{"allreduce": 1, "allgather": 1}},
		{DispatcherAllToAll, "MoeTokenPermute", map[string]float64{"allreduce": 1, "alltoallv": 2}},
	} {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			s := tracegen.DispatcherScenario(c.path)
			truth, _, res := generateAndAnalyze(t, s)
			for i, rr := range res.Ranks {
				m := rr.Metrics
				require.Equal(t, float64(s.Layers), m[MetricMoELayersCount], "rank %d: %q", rr.Rank, rr.Unavailable[MetricMoELayersCount])
				require.Equal(t, float64(s.Steps), m[MetricDecodeStepsCount])
				var n float64
				for typ, want := range c.perLayer {
					require.Equal(t, want, m[FamilyHCCLPerLayerTypeCount.Of(typ)], "rank %d %s", rr.Rank, typ)
					n += want
				}
				require.Equal(t, n, m[MetricHCCLPerLayerCount])
				for _, k := range []string{MetricMoELayersCount, MetricHCCLPerLayerCount, MetricDecodeStepsCount, MetricMoEGMMCount, MetricMoEGMMUs, MetricMoERoutingCount} {
					require.Truef(t, closeEnough(truth.Ranks[i].Metrics[k], m[k]), "rank %d %s: truth %v, npuprof %v", rr.Rank, k, truth.Ranks[i].Metrics[k], m[k])
				}
				moe := MoEOf(rr)
				require.Equal(t, c.path, moe.Dispatcher)
				require.Equal(t, map[string]int{c.path: s.Layers * s.Steps}, moe.PathLayers)
				want := strconv.Itoa(s.Layers*s.Steps) + " MoE layers opened by " + c.opener + " (" + c.path + ")"
				if c.path == DispatcherAllToAll {
					want += " with hcom_alltoallv_"
				}
				require.Equal(t, want, moe.DispatcherEvidence)
			}
		})
	}
}
