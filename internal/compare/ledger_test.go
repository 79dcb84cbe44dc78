package compare_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/compare"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// withSteps gives a document's rank ProfilerStep#N rows of these windows.
func withSteps(d *results.Document, windows ...float64) *results.Document {
	for i, w := range windows {
		d.Ranks[0].Steps = append(d.Ranks[0].Steps, results.StepDoc{Step: i + 2, WindowUs: w})
	}
	return d
}

// withLedger sets a document's step-time ledger (cluster metrics).
func withLedger(d *results.Document, step float64, entries map[string]float64) *results.Document {
	d.Cluster = &results.ClusterDoc{Metrics: map[string]float64{metric.MetricLedgerStepUs: step}}
	for k, v := range entries {
		d.Cluster.Metrics[k] = v
	}
	return d
}

// The step time's mean is summed in step order: the same documents give
// the same bits on every run (in map order its last digits moved).
func TestStepTimeSameBitsEveryRun(t *testing.T) {
	var windows []float64
	for i := range 64 {
		windows = append(windows, 1000+float64(i)*0.1+1e-7*float64(i*i))
	}
	var want float64
	for _, w := range windows {
		want += w
	}
	want /= float64(len(windows))
	for range 50 {
		before := withSteps(predictedDoc(1000, map[string]float64{"moe-routing-cumsum": -9}, []string{"moe-routing-cumsum"}, -9), windows...)
		after := withSteps(afterDoc(950), windows...)
		r := compare.Compare(before, after, compare.Options{})
		require.NotNil(t, r.StepTime)
		require.Equal(t, math.Float64bits(want), math.Float64bits(r.StepTime.Before.MeanUs))
	}
}

// The measured change is the step time per step over the ProfilerStep#N
// rows (each step's longest window), with its spread, not the mean step
// interval: 3 intervals of 4 steps said -5%, the steps -10%.
func TestStepTimePerStep(t *testing.T) {
	before := withSteps(predictedDoc(1000, map[string]float64{"moe-routing-cumsum": -9}, []string{"moe-routing-cumsum"}, -9), 1000, 1020, 980, 1000)
	after := withSteps(afterDoc(950), 900, 910, 890, 900)
	r := compare.Compare(before, after, compare.Options{})
	require.NotNil(t, r.StepTime)
	require.InDelta(t, 1000, r.StepTime.Before.MeanUs, 1e-9)
	require.Equal(t, 4, r.StepTime.Before.Steps)
	require.InDelta(t, 980, *r.StepTime.Before.MinUs, 1e-9)
	require.InDelta(t, 1020, *r.StepTime.Before.MaxUs, 1e-9)
	require.InDelta(t, 14.142, *r.StepTime.Before.StdevUs, 1e-3)
	require.InDelta(t, -10, *r.StepTime.Pct, 1e-9)
	sc := stepTime(t, r, "moe-routing-cumsum")
	require.InDelta(t, -10, *sc.MeasuredPct, 1e-9)
	require.InDelta(t, -10.0/-9, *sc.Ratio, 1e-9)
}

// A resolved finding whose ledger entries did not shrink is not credited
// with the measured change (no ratio, not in the others' measured_with);
// the one whose entries shrank is, and the ledger rows name the fixes.
func TestLedgerCredit(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"moe-routing-cumsum": -6, "parallel-strategy": -8}, nil, 0)
	before = withLedger(before, 1000, map[string]float64{
		metric.MetricLedgerAICPUUs: 60, metric.MetricLedgerAttentionUs: 200, metric.MetricLedgerComputeOtherUs: 300,
		metric.MetricLedgerCollectiveUs: 100, metric.MetricLedgerPeerWaitUs: 50, metric.MetricLedgerRoutingUs: 10})
	after := withLedger(afterDoc(940), 940, map[string]float64{
		metric.MetricLedgerAICPUUs: 0, metric.MetricLedgerAttentionUs: 201, metric.MetricLedgerComputeOtherUs: 299,
		metric.MetricLedgerCollectiveUs: 100, metric.MetricLedgerPeerWaitUs: 50, metric.MetricLedgerRoutingUs: 10})
	r := compare.Compare(before, after, compare.Options{})
	require.NotEmpty(t, r.Ledger)
	require.Equal(t, metric.MetricLedgerAICPUUs, r.Ledger[0].Entry, "most shrunk first")
	require.True(t, r.Ledger[0].Shrank)
	require.Equal(t, []string{"moe-routing-cumsum"}, r.Ledger[0].Rules)
	for _, l := range r.Ledger[1:] {
		require.False(t, l.Shrank, l.Entry)
	}
	cum := stepTime(t, r, "moe-routing-cumsum")
	require.Empty(t, cum.NotCredited)
	require.Empty(t, cum.MeasuredWith, "the other fix is not credited")
	require.NotNil(t, cum.Ratio)
	ps := stepTime(t, r, "parallel-strategy")
	require.Nil(t, ps.Ratio)
	require.Contains(t, ps.NotCredited, "none of the ledger entries its fix removes shrank: ledger.compute.attention.time_us 200.0 -> 201.0 µs")
}
