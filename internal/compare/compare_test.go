package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/compare"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// generate writes a scenario and returns its analysis document, after a
// JSON round trip (what `diff` reads from a saved document).
func generate(t *testing.T, name string) (*results.Document, *tracegen.Truth) {
	t.Helper()
	dir, truth := testutil.Generate(t, testutil.Scenario(t, name))
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{Workers: 2})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, render.WriteJSON(&buf, assemble.Doc(res, nil)))
	doc, err := results.Read(&buf, name)
	require.NoError(t, err)
	return doc, truth
}

func TestCompareEPFlashCommCumsumToClean(t *testing.T) {
	before, bt := generate(t, "ep-fc1-cumsum-steps")
	after, at := generate(t, "clean-steps")
	r := compare.Compare(before, after, compare.Options{})
	require.Equal(t, diff.Schema, r.Schema)
	require.Equal(t, bt.Scenario.Steps, r.Before.Steps)
	require.Equal(t, "ProfilerStep#N", r.Before.StepsFrom)
	require.Equal(t, at.Scenario.Steps, r.After.Steps)

	// The FLASHCOMM1/EP all-gathers and reduce-scatters are gone; the TP
	// all-reduces are new.
	gone := map[string]bool{}
	for _, c := range r.Collectives {
		if c.Status == diff.StatusGone {
			gone[c.Type+"@"+c.Group] = true
			require.Zero(t, c.AfterCount)
			require.Positive(t, c.BeforeCount)
		}
	}
	require.True(t, gone["reducescatter@tp"], "%+v", r.Collectives)
	require.True(t, gone["reducescatter@ep"], "%+v", r.Collectives)
	require.True(t, gone["allgather@ep"], "%+v", r.Collectives)
	ar, ok := r.Collective("allreduce", "tp")
	require.True(t, ok)
	require.Equal(t, diff.StatusNew, ar.Status)
	require.Zero(t, ar.BeforeCount)

	// The routing Cumsum is gone: metric and kernel.
	cs, ok := r.Metric("moe.cumsum.count")
	require.True(t, ok)
	require.Positive(t, *cs.Before)
	require.Zero(t, *cs.After)
	require.Equal(t, -100.0, *cs.Pct)
	var cumsum *diff.KernelDelta
	for i := range r.Kernels {
		if r.Kernels[i].Name == "aclnnCumsum_CumsumAiCpu_Cumsum" {
			cumsum = &r.Kernels[i]
		}
	}
	require.NotNil(t, cumsum, "Cumsum among the most changed kernels: %+v", r.Kernels)
	require.Equal(t, diff.StatusGone, cumsum.Status)
	require.Zero(t, cumsum.AfterUs)
	// Per step: the before total per rank divided by the step count.
	var sum float64
	n := 0
	for _, rk := range before.Ranks {
		for _, k := range rk.Kernels {
			if k.OpType == cumsum.OpType && k.Name == cumsum.Name {
				sum += k.TotalUs
			}
		}
		n++
	}
	require.InDelta(t, sum/float64(n)/float64(r.Before.Steps), cumsum.BeforeUs, 1e-9)

	// Step time: the mean step window over every step of every rank.
	w, ok := r.Step("window")
	require.True(t, ok)
	var bw float64
	bn := 0
	for _, rk := range before.Ranks {
		for _, s := range rk.Steps {
			bw += s.WindowUs
			bn++
		}
	}
	require.InDelta(t, bw/float64(bn), w.BeforeUs, 1e-9)
	require.InDelta(t, w.AfterUs-w.BeforeUs, w.DeltaUs, 1e-9)
	require.Negative(t, w.DeltaUs, "the clean deployment's steps are shorter")

	// Per rank: every rank on both sides, each metric exact.
	require.Len(t, r.Ranks, len(before.Ranks))
	for _, rd := range r.Ranks {
		for _, m := range rd.Metrics {
			if m.Metric != "hccl.total.time_us" {
				continue
			}
			var bv, av float64
			for _, rk := range before.Ranks {
				if rk.Rank == rd.Rank {
					bv = rk.Metrics[m.Metric]
				}
			}
			for _, rk := range after.Ranks {
				if rk.Rank == rd.Rank {
					av = rk.Metrics[m.Metric]
				}
			}
			require.Equal(t, bv, *m.Before)
			require.Equal(t, av, *m.After)
			require.Equal(t, av-bv, *m.Delta)
		}
	}
	// An absent metric carries the reason.
	for _, m := range r.Overall {
		if m.Metric == "moe.cumsum.aicpu.time_us" {
			require.NotNil(t, m.Before)
		}
	}
	require.Empty(t, r.Unavailable["steps"])
}

func ptrInt(v int) *int { return &v }

// Findings: resolved (with the measured effect on its metric, scaled to the
// before side's step count), new, persisting.
func TestCompareFindings(t *testing.T) {
	mk := func(steps int, cumsum, free float64, fs ...results.Finding) *results.Document {
		d := &results.Document{Schema: results.Schema, Findings: fs}
		for r := 0; r < 2; r++ {
			rd := results.RankDoc{Rank: r, Metrics: map[string]float64{"moe.cumsum.time_us": cumsum, "overlap.free.time_us": free + float64(r)},
				Unavailable: map[string]string{}}
			for s := 0; s < steps; s++ {
				rd.Steps = append(rd.Steps, results.StepDoc{Step: s, WindowUs: 100})
			}
			d.Ranks = append(d.Ranks, rd)
		}
		return d
	}
	fCumsum := results.Finding{Rule: "moe-routing-cumsum", Title: "Cumsum", Severity: "high", SavingUs: results.Estimated(400), Ranks: []int{0, 1},
		Evidence: []results.Evidence{{Metric: "moe.cumsum.time_us", Rank: ptrInt(0), Value: 400}}}
	fGraph := results.Finding{Rule: "graph-capture-sizes", Title: "graph", Severity: "medium", SavingUs: results.Estimated(300)}
	fNew := results.Finding{Rule: "event-wait-skew", Title: "waits", Severity: "low", SavingUs: results.Estimated(50)}
	before := mk(4, 400, 1000, fCumsum, fGraph)
	// After: 8 steps (twice the capture), Cumsum gone, free 600 over 8 steps = 300 per 4 steps.
	after := mk(8, 0, 600, fGraph, fNew)
	r := compare.Compare(before, after, compare.Options{})
	require.Len(t, r.Notes, 1)
	require.Contains(t, r.Notes[0], "different step counts (4 before, 8 after)")
	require.Len(t, r.Findings, 3)
	c, ok := r.Finding("moe-routing-cumsum")
	require.True(t, ok)
	require.Equal(t, diff.FindingResolved, c.Status)
	require.Equal(t, 400.0, *c.PredictedUs)
	require.Equal(t, "moe.cumsum.time_us", c.MeasuredMetric)
	require.Equal(t, 400.0, *c.MeasuredUs)
	require.Equal(t, 1.0, *c.Ratio)
	g, _ := r.Finding("graph-capture-sizes")
	require.Equal(t, diff.FindingPersists, g.Status)
	// Free: before mean 1000.5; after mean 600.5 over 8 steps → 300.25 per 4 steps.
	require.InDelta(t, 1000.5-300.25, *g.MeasuredUs, 1e-9)
	n, _ := r.Finding("event-wait-skew")
	require.Equal(t, diff.FindingNew, n.Status)
	require.Nil(t, n.MeasuredUs)
	require.Contains(t, n.MeasuredMissing, "no fix to measure")
	require.Equal(t, "event_wait.time_us", n.MeasuredMetric)
	require.Equal(t, diff.FindingResolved, r.Findings[0].Status, "resolved first")
}

// A finding whose rule gives no saving estimate predicts nothing: its
// predicted_saving_us is null, never 0, and no measured/predicted ratio is
// made of it; one estimate among a rule's findings is the rule's.
func TestCompareNoEstimate(t *testing.T) {
	doc := func(fs ...results.Finding) *results.Document {
		return &results.Document{Schema: results.Schema, Findings: fs, Ranks: []results.RankDoc{{Rank: 0,
			Metrics: map[string]float64{"overlap.communication_not_overlapped.time_us": 500, "moe.cumsum.time_us": 30}, Unavailable: map[string]string{}}}}
	}
	bound := results.Finding{Rule: "comm-bound", Title: "comm", Severity: "medium",
		Evidence: []results.Evidence{{Metric: "overlap.communication_not_overlapped.time_us", Value: 500}}}
	cumsum := results.Finding{Rule: "moe-routing-cumsum", Title: "Cumsum", Severity: "high", SavingUs: results.Estimated(30)}
	r := compare.Compare(doc(bound, cumsum, cumsum), doc(), compare.Options{})
	c, ok := r.Finding("comm-bound")
	require.True(t, ok)
	require.Nil(t, c.PredictedUs)
	require.NotNil(t, c.MeasuredUs, "the effect is still measured")
	require.Nil(t, c.Ratio)
	m, _ := r.Finding("moe-routing-cumsum")
	require.Equal(t, 60.0, *m.PredictedUs, "two findings of one rule add up")
	require.Equal(t, "moe-routing-cumsum", r.Findings[0].Rule, "an estimate orders before none")
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.Contains(t, string(b), `"predicted_saving_us":null`)
}

func TestCompareMissingParts(t *testing.T) {
	d := &results.Document{Schema: results.Schema, Ranks: []results.RankDoc{{Rank: 0, Metrics: map[string]float64{"a.time_us": 1}, Unavailable: map[string]string{"b.time_us": "no data"}}}}
	e := &results.Document{Schema: results.Schema, Ranks: []results.RankDoc{{Rank: 1, Metrics: map[string]float64{"a.time_us": 3, "b.time_us": 2}, Unavailable: map[string]string{}}}}
	r := compare.Compare(d, e, compare.Options{})
	require.Contains(t, r.Unavailable["steps"], "neither document has steps")
	require.Contains(t, r.Unavailable["kernels"], "no per-rank kernels list")
	require.Len(t, r.Notes, 2, "rank 0 only before, rank 1 only after")
	b, _ := r.Metric("b.time_us")
	require.Nil(t, b.Before)
	require.Equal(t, "no data", b.BeforeMissing)
	require.Nil(t, b.Delta)
	a, _ := r.Metric("a.time_us")
	require.Equal(t, 200.0, *a.Pct)
}
