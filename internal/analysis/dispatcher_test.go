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

// On MC2 the per-layer dispatch and combine times divide the kernels' time
// by the MoE layers executed, and the wait estimate compares each layer's
// dispatch across the ep group: every rank's excess over the group's
// shortest, computed here from the kernels of the model itself.
func TestMC2DispatchCombinePerLayer(t *testing.T) {
	s := tracegen.DispatcherScenario(DispatcherMC2)
	_, p, res := generateAndAnalyze(t, s)
	layers := float64(s.Layers * s.Steps)
	var durs [][2][]int64 // per rank: dispatch, combine per layer
	var busy int64
	for i, rr := range res.Ranks {
		m := rr.Metrics
		moeK := m[MetricMoEDispatchUs] + m[MetricMoECombineUs] + m[MetricMoEGMMUs] + m[MetricMoEGatingUs]
		require.InDelta(t, (m[MetricMoEDispatchUs]+m[MetricMoECombineUs])/moeK, m[MetricMoEDispatchShare], 1e-9)
		var d, c []int64
		for _, task := range p.Ranks[i].Tasks {
			dur := p.Ranks[i].Dur(&task)
			switch p.Ranks[i].Str(p.Ranks[i].OpType(&task)) {
			case "MoeDistributeDispatchV2":
				d = append(d, dur)
				busy += dur
			case "MoeDistributeCombineV2":
				c = append(c, dur)
				busy += dur
			}
		}
		require.Len(t, d, int(layers))
		var sd, sc int64
		for k := range d {
			sd, sc = sd+d[k], sc+c[k]
		}
		require.Equal(t, float64(sd/int64(layers))/1000, m[MetricMoEDispatchLayerUs])
		require.Equal(t, float64(sc/int64(layers))/1000, m[MetricMoECombineLayerUs])
		durs = append(durs, [2][]int64{d, c})
	}
	var wd, wc int64
	for k := 0; k < int(layers); k++ {
		md, mc := durs[0][0][k], durs[0][1][k]
		for _, x := range durs {
			md, mc = min(md, x[0][k]), min(mc, x[1][k])
		}
		for _, x := range durs {
			wd += x[0][k] - md
			wc += x[1][k] - mc
		}
	}
	n := layers * float64(len(durs))
	cm := res.Cluster.Metrics
	require.InDelta(t, float64(wd)/n/1000, cm[MetricMoEDispatchWaitLayerUs], 1e-9)
	require.InDelta(t, float64(wc)/n/1000, cm[MetricMoECombineWaitLayerUs], 1e-9)
	require.InDelta(t, float64(wd+wc)/float64(busy), cm[MetricMoEDispatchWaitShare], 1e-9)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, res.Cluster.RanksUsed[MetricMoEDispatchWaitLayerUs])
}

// On the A3 scenario the MC2 dispatch and combine kernels end together on
// every EP rank (tracegen's exchange), so the excess over the group's
// shortest is exactly each rank's wait: the estimate equals the truth.
func TestMC2WaitEstimateMatchesTruth(t *testing.T) {
	s, ok := tracegen.Lookup("a3-tp4dp4-rc1")
	require.True(t, ok)
	truth, _, res := generateAndAnalyze(t, s)
	cm := res.Cluster.Metrics
	for _, k := range []string{MetricMoEDispatchWaitLayerUs, MetricMoECombineWaitLayerUs} {
		want := truth.Experts.Metrics[k]
		require.Greater(t, want, 0.0, k)
		require.InDelta(t, want, cm[k], 1e-6, k)
	}
	require.Len(t, res.Cluster.RanksUsed[MetricMoEDispatchWaitLayerUs], 16)
}

// The A3 system's idle engines run dummy steps: every MoE layer, no
// sampler, no ProfilerStep#N. Their steps come from the layer period (the
// stretch holding the next step's input copy and embedding breaks it), so
// every rank has its 4 steps of 8 MoE layers, as tracegen wrote them.
func TestA3DummyEnginesStepsFromLayerPeriod(t *testing.T) {
	s, ok := tracegen.Lookup("a3-tp4dp4-rc1")
	require.True(t, ok)
	truth, p, res := generateAndAnalyze(t, s)
	for i, rr := range res.Ranks {
		m, rt := rr.Metrics, truth.Ranks[i]
		require.Equal(t, rt.Metrics[tracegen.MetricDecodeSteps], m[MetricDecodeStepsCount], "rank %d", rr.Rank)
		require.Equal(t, 4.0, m[MetricDecodeStepsCount], "rank %d", rr.Rank)
		require.Equal(t, 8.0, m[MetricMoELayersCount], "rank %d", rr.Rank)
		l := LayersOf(rr)
		bounds := 0
		for _, g := range l.Gaps {
			if g.Boundary {
				bounds++
			}
		}
		require.Equal(t, 3, bounds, "rank %d", rr.Rank)
		require.Equal(t, 4*7, l.PeriodGaps, "rank %d: 4 steps of 8 layers, 7 stretches inside each", rr.Rank)
		if rr.Rank < 4 {
			require.Equal(t, StepsFromProfiler, l.StepsSource)
			require.Positive(t, m[MetricSamplerKernelsCount])
			continue
		}
		require.Empty(t, p.Ranks[i].Steps, "rank %d: a dummy engine writes no ProfilerStep#N", rr.Rank)
		require.Equal(t, StepsFromPeriod, l.StepsSource)
		require.Zero(t, m[MetricSamplerKernelsCount])
		_, ok := m[MetricDecodeStepUs]
		require.True(t, ok, "rank %d: %s", rr.Rank, rr.Unavailable[MetricDecodeStepUs])
	}
}
