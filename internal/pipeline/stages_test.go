package pipeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
)

// A pipeline-parallel capture of two stages, the second computing 1.5x
// longer (it holds more layers): each rank is compared with its own
// stage's peers, so no rank is slow, and the difference is reported as
// pipeline-stage imbalance with each stage's computing.
func TestPipelineStagesAreNotSlowRanks(t *testing.T) {
	sc := testutil.Scenario(t, "clean-steps")
	sc.Ranks, sc.TP, sc.PP, sc.StageFactor = 8, 4, 2, 1.5
	sc.Layers, sc.Steps = 2, 2
	dir, truth := testutil.Generate(t, sc)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 8)
	sk := analysis.SkewOf(res.Cluster)
	require.NotNil(t, sk)
	require.Empty(t, sk.Slow, "a stage is not a slow rank")
	m := res.Cluster.Metrics
	require.Equal(t, 0.0, m[analysis.MetricSlowRanksCount])
	require.Equal(t, 2.0, m[analysis.MetricPipelineStagesCount])
	require.Equal(t, 1.0, m[analysis.MetricStageImbalanceHeaviest])
	require.Len(t, sk.Stages, 2)
	require.Equal(t, []int{0, 1, 2, 3}, sk.Stages[0].Ranks)
	require.Equal(t, []int{4, 5, 6, 7}, sk.Stages[1].Ranks)
	// each stage's computing is the median of its ranks' (the truth's)
	for _, st := range sk.Stages {
		var xs []float64
		for _, r := range st.Ranks {
			xs = append(xs, truth.Ranks[r].Metrics["overlap.computing.time_us"])
		}
		within(t, midpoint(xs), st.ComputingUs, 1e-9, "stage computing")
		require.Equal(t, st.ComputingUs, m[analysis.FamilyStageComputingUs.Of([]string{"0", "1"}[st.Stage])])
	}
	within(t, sk.Stages[1].ComputingUs/sk.Stages[0].ComputingUs, m[analysis.MetricStageImbalanceRatio], 1e-12, "ratio")
	require.InDelta(t, 1.5, m[analysis.MetricStageImbalanceRatio], 0.05)
	require.Contains(t, sk.Imbalance, "pipeline-stage imbalance: stage 1 (ranks 4-7)")
	require.Contains(t, sk.Imbalance, "stage 0 (ranks 0-3")

	// four stages, the last heavier: against the median of all 16 ranks
	// its ranks' computing is an outlier (robust z above 3.5, what npuprof
	// named slow before), against their own stage's peers it is not
	sc.Ranks, sc.PP = 16, 4
	dir, _ = testutil.Generate(t, sc)
	res, err = pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	sk = analysis.SkewOf(res.Cluster)
	m = res.Cluster.Metrics
	for _, s := range sk.Slow {
		// (the generator's random host gaps may still set one rank's
		// free time apart within its stage)
		require.NotEqual(t, "computing", s.Quantity, "rank %d: %s", s.Rank, s.Reason)
	}
	require.Equal(t, 4.0, m[analysis.MetricPipelineStagesCount])
	require.Equal(t, 3.0, m[analysis.MetricStageImbalanceHeaviest])
	med, mad, mx := m[analysis.FamilySkewMedianUs.Of("computing")], m[analysis.FamilySkewMADUs.Of("computing")], m[analysis.FamilySkewMaxUs.Of("computing")]
	require.GreaterOrEqual(t, m[analysis.FamilySkewMaxRank.Of("computing")], 12.0)
	require.Greater(t, (mx-med)/(1.4826*mad), analysis.SlowZ, "over all ranks the last stage stands out")
	require.Contains(t, sk.Imbalance, "pipeline-stage imbalance: stage 3 (ranks 12-15)")

	// without pipeline parallelism the pipeline metrics say why not
	sc.Ranks, sc.PP = 8, 0
	flat, _ := testutil.Generate(t, sc)
	res, err = pipeline.Analyze(context.Background(), flat, pipeline.Options{})
	require.NoError(t, err)
	require.Contains(t, res.Cluster.Unavailable[analysis.MetricPipelineStagesCount], "no pipeline parallelism")
	require.Nil(t, analysis.SkewOf(res.Cluster).Stages)
}

// midpoint is the median of xs, the midpoint of the two middle values for
// an even count.
func midpoint(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
