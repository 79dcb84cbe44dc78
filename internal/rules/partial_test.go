package rules

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// truncatedRank is the rank whose trace_view.json truncatedCluster cuts.
const truncatedRank = 3

// truncatedCluster generates ep-fc1-cumsum (2 layers, 2 steps) and cuts
// rank 3's trace_view.json at 40% of its events (tracegen.CutTrace). It returns the analysis and
// the generator's truth for the whole rank.
func truncatedCluster(t *testing.T) (*analysis.Result, *tracegen.Truth, string) {
	t.Helper()
	sc := testutil.Scenario(t, "ep-fc1-cumsum")
	sc.Layers, sc.Steps = 2, 2
	dir, truth := testutil.Generate(t, sc)
	trace := filepath.Join(dir, truth.Ranks[truncatedRank].Dir, tracegen.OutputDir, "trace_view.json")
	cut, err := tracegen.CutTrace(trace, 0.4)
	require.NoError(t, err)
	require.Positive(t, cut)

	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{TimelineSample: true})
	require.NoError(t, err)
	return res, truth, trace
}

func rankOf(res *analysis.Result, r int) *analysis.RankResult {
	for _, rr := range res.Ranks {
		if rr.Rank == r {
			return rr
		}
	}
	return nil
}

func evidenceOf(f *results.Finding, metric string) []results.Evidence {
	var out []results.Evidence
	for _, e := range f.Evidence {
		if e.Metric == metric {
			out = append(out, e)
		}
	}
	return out
}

// A rule that fires on a cluster with one truncated trace says which of its
// inputs came from the cut file, where it used them, and that its saving is
// uncertain; the same rule on the intact cluster says nothing of the kind.
func TestFindingFromTruncatedTraceIsPartial(t *testing.T) {
	res, truth, trace := truncatedCluster(t)
	rr := rankOf(res, truncatedRank)
	require.True(t, rr.Partial)
	require.Contains(t, rr.PartialReason, trace+" is truncated: it ends inside an event")
	require.Contains(t, rr.PartialMetrics, "moe.cumsum.time_us")
	// the cut is real: rank 3 measured fewer Cumsum kernels than it ran
	whole := truth.Ranks[truncatedRank].Metrics["moe.cumsum.count"]
	require.Positive(t, rr.Metrics["moe.cumsum.count"])
	require.Less(t, rr.Metrics["moe.cumsum.count"], whole)
	for _, o := range res.Ranks {
		if o.Rank != truncatedRank {
			require.False(t, o.Partial, "rank %d", o.Rank)
			require.Equal(t, whole, o.Metrics["moe.cumsum.count"], "rank %d is whole", o.Rank)
		}
	}

	rep := evaluate(t, builtin(t), res, nil)
	f := finding(rep, "moe-routing-cumsum")
	require.NotNil(t, f, "the rule still fires on the cut cluster")
	require.Len(t, f.Partial, 1)
	p := f.Partial[0]
	require.Equal(t, truncatedRank, p.Rank)
	require.Equal(t, rr.PartialReason, p.Reason)
	// when: moe.cumsum.count; saving: moe.cumsum.time_us; the auto severity:
	// device.window.time_us; title/fix also read moe.cumsum.aicpu.count and
	// moe.routing.count; evidence all five moe.*
	require.Equal(t, []string{"device.window.time_us", "moe.cumsum.aicpu.count", "moe.cumsum.aicpu.time_us", "moe.cumsum.count", "moe.cumsum.time_us", "moe.routing.count"}, p.Metrics)
	require.Equal(t, []string{results.UsedInWhen, results.UsedInSaving, results.UsedInSeverity, results.UsedInEvidence, results.UsedInText}, p.UsedIn)
	require.True(t, f.SavingUncertain)
	require.True(t, f.HasPartial())
	require.Equal(t, []int{truncatedRank}, f.PartialRanks())
	// the saving is the mean over ranks, the cut rank's smaller value included
	sum := 0.0
	for _, o := range res.Ranks {
		sum += o.Metrics["moe.cumsum.time_us"]
	}
	require.InDelta(t, sum/float64(len(res.Ranks)), *f.SavingUs, 0.001)
	for _, m := range []string{"moe.cumsum.count", "moe.cumsum.time_us"} {
		ev := evidenceOf(&f.Finding, m)
		require.Len(t, ev, 1, m)
		require.Equal(t, []int{truncatedRank}, ev[0].PartialRanks, m)
	}

	// intact: the same finding, nothing partial
	clean := evaluate(t, builtin(t), analyzed(t, "ep-fc1-cumsum"), nil)
	for _, x := range clean.Findings {
		require.Empty(t, x.Partial, x.Rule)
		require.False(t, x.SavingUncertain, x.Rule)
		for _, e := range x.Evidence {
			require.Empty(t, e.PartialRanks, "%s %s", x.Rule, e.Metric)
		}
	}
	require.NotNil(t, finding(clean, "moe-routing-cumsum"))
}

// Only the ranks folded into a value are partial: a maximum taken on
// another rank is whole; "each" flags the cut rank's row only; a rule whose
// condition and saving read whole metrics only is partial in its evidence
// alone, with a certain saving.
func TestPartialFollowsTheRanksUsed(t *testing.T) {
	res, truth, _ := truncatedCluster(t)
	set, err := Parse("p.yaml", []byte(`rules:
  - id: max-elsewhere
    title: t
    severity: low
    when: max_ranks("moe.cumsum.count") > 0
    saving: rank_metric("moe.cumsum.time_us", 0)
    evidence:
      - metric: moe.cumsum.count
        of: max
      - metric: moe.cumsum.count
        of: each
    fix: f
  - id: cluster
    title: t
    severity: low
    when: metric("skew.computing.max_over_median") > 0
    fix: f
  - id: cut-rank-only
    title: t
    severity: low
    when: rank_metric("moe.cumsum.count", 3) < max_ranks("moe.cumsum.count")
    fix: f
`))
	require.NoError(t, err)
	rep := evaluate(t, set, res, nil)

	f := finding(rep, "max-elsewhere")
	require.NotNil(t, f)
	require.False(t, f.SavingUncertain, "the saving read rank 0 only")
	require.InDelta(t, truth.Ranks[0].Metrics["moe.cumsum.time_us"], *f.SavingUs, 0.001)
	ev := evidenceOf(&f.Finding, "moe.cumsum.count")
	require.Len(t, ev, 1+len(res.Ranks))
	require.NotNil(t, ev[0].Rank)
	require.NotEqual(t, truncatedRank, *ev[0].Rank, "the maximum is on a whole rank")
	require.Empty(t, ev[0].PartialRanks)
	for _, e := range ev[1:] {
		if *e.Rank == truncatedRank {
			require.Equal(t, []int{truncatedRank}, e.PartialRanks)
		} else {
			require.Empty(t, e.PartialRanks, "rank %d", *e.Rank)
		}
	}
	// max_ranks in when read every rank, the cut one included
	require.Equal(t, []results.PartialInput{{Rank: truncatedRank, Reason: rankOf(res, truncatedRank).PartialReason,
		Metrics: []string{"moe.cumsum.count"}, UsedIn: []string{results.UsedInWhen, results.UsedInEvidence}}}, f.Partial)

	// a cluster metric is computed from every rank, the cut one included
	c := finding(rep, "cluster")
	require.NotNil(t, c)
	require.Equal(t, []results.PartialInput{{Rank: truncatedRank, Reason: rankOf(res, truncatedRank).PartialReason,
		Metrics: []string{"skew.computing.max_over_median"}, UsedIn: []string{results.UsedInWhen}}}, c.Partial)

	g := finding(rep, "cut-rank-only")
	require.NotNil(t, g, "rank 3 measured fewer Cumsums: its file was cut")
	require.Equal(t, []string{results.UsedInWhen}, g.Partial[0].UsedIn)
	require.Equal(t, []int{truncatedRank}, g.PartialRanks())
	require.False(t, g.SavingUncertain, "no saving")
	require.Len(t, results.Whole(rep.Contract()), 0)
}

// A budget over a metric measured on a cut file: its "now" value and its
// saving are marked.
func TestBudgetOnPartialMetric(t *testing.T) {
	res, _, _ := truncatedCluster(t)
	set, err := Parse("b.yaml", []byte("budgets:\n  - moe.cumsum.time_us <= baseline * 0.5\n"))
	require.NoError(t, err)
	fs, _ := BuildFacts(res, nil, nil)
	rep := Evaluate(set, &Input{Result: res, Facts: fs, Baseline: &results.Baseline{Path: "old.json", Metrics: map[string]float64{"moe.cumsum.time_us": 1}}})
	f := finding(rep, "budget/moe.cumsum.time_us")
	require.NotNil(t, f)
	require.True(t, f.SavingUncertain)
	require.Equal(t, []int{truncatedRank}, f.Evidence[0].PartialRanks)
	require.Empty(t, f.Evidence[1].PartialRanks, "the baseline is another document")
	require.Equal(t, []string{results.UsedInWhen, results.UsedInSaving, results.UsedInEvidence}, f.Partial[0].UsedIn)
}

// A baseline whose rank 5 was cut: a budget and baseline_metric() that
// read its value list baseline rank 5 (baseline: true) after this
// capture's own cut rank 3, and the "now" evidence keeps this capture's
// ranks only.
func TestBaselinePartialRanks(t *testing.T) {
	res, _, _ := truncatedCluster(t)
	set, err := Parse("b.yaml", []byte(`rules:
  - id: vs-baseline
    title: t
    severity: low
    when: baseline_metric("hccl.total.time_us") > 0
    fix: f
budgets:
  - moe.cumsum.time_us <= baseline * 0.5
`))
	require.NoError(t, err)
	fs, _ := BuildFacts(res, nil, nil)
	base := &results.Baseline{Path: "old.json", Metrics: map[string]float64{"moe.cumsum.time_us": 1, "hccl.total.time_us": 10},
		PartialRanks:  map[string][]int{"moe.cumsum.time_us": {5}, "hccl.total.time_us": {5}},
		PartialReason: map[int]string{5: "t.json is truncated"}}
	rep := Evaluate(set, &Input{Result: res, Facts: fs, Baseline: base})
	require.Empty(t, rep.Failed())

	f := finding(rep, "budget/moe.cumsum.time_us")
	require.NotNil(t, f)
	require.True(t, f.SavingUncertain)
	require.Equal(t, []int{truncatedRank}, f.Evidence[0].PartialRanks, "now: this capture's cut rank only")
	require.Equal(t, []int{5}, f.Evidence[1].PartialRanks, "the baseline value read its rank 5")
	require.Len(t, f.Partial, 2)
	require.Equal(t, truncatedRank, f.Partial[0].Rank)
	require.False(t, f.Partial[0].Baseline)
	require.Equal(t, results.PartialInput{Rank: 5, Reason: "baseline old.json: t.json is truncated", Metrics: []string{"moe.cumsum.time_us"},
		UsedIn: []string{results.UsedInWhen, results.UsedInSaving, results.UsedInEvidence}, Baseline: true}, f.Partial[1])

	g := finding(rep, "vs-baseline")
	require.NotNil(t, g)
	require.Equal(t, []results.PartialInput{{Rank: 5, Reason: "baseline old.json: t.json is truncated", Metrics: []string{"hccl.total.time_us"},
		UsedIn: []string{results.UsedInWhen}, Baseline: true}}, g.Partial)

	// a whole baseline adds nothing
	base.PartialRanks, base.PartialReason = nil, nil
	rep = Evaluate(set, &Input{Result: res, Facts: fs, Baseline: base})
	require.Nil(t, finding(rep, "vs-baseline").Partial)
	require.Len(t, finding(rep, "budget/moe.cumsum.time_us").Partial, 1)
}

// has("m") is an input like metric("m"): true because a rank cut short
// measured m, the finding lists that rank; false, a per-rank m is listed
// under every rank cut short (its missing part may have held m); true from
// whole ranks only, or about a cluster metric that was not computed,
// nothing is listed.
func TestHasMarksPartial(t *testing.T) {
	res, _, _ := truncatedCluster(t)
	reason := rankOf(res, truncatedRank).PartialReason
	rep := evaluate(t, mustParse(t, `rules:
  - id: has-cumsum
    title: t
    severity: low
    when: has("moe.cumsum.count")
    fix: f
`), res, nil)
	f := finding(rep, "has-cumsum")
	require.NotNil(t, f)
	require.Equal(t, []results.PartialInput{{Rank: truncatedRank, Reason: reason, Metrics: []string{"moe.cumsum.count"}, UsedIn: []string{results.UsedInWhen}}}, f.Partial)

	// by hand: rank 0 whole, rank 1 cut short
	cut := &analysis.Result{Path: "p", Ranks: []*analysis.RankResult{
		{Rank: 0, Metrics: map[string]float64{"device.window.time_us": 1000, "overlap.free.time_us": 90}, Unavailable: map[string]string{}},
		{Rank: 1, Metrics: map[string]float64{"device.window.time_us": 400, "moe.cumsum.count": 3}, Unavailable: map[string]string{},
			Partial: true, PartialReason: "t.json is truncated", PartialMetrics: []string{"device.window.time_us", "moe.cumsum.count"}},
	}}
	rep = evaluate(t, mustParse(t, `rules:
  - id: only-on-cut
    title: t
    severity: low
    when: has("moe.cumsum.count")
    fix: f
  - id: absent
    title: t
    severity: low
    when: '!has("event_wait.count")'
    fix: f
  - id: whole-only
    title: t
    severity: low
    when: has("overlap.free.time_us")
    fix: f
  - id: in-text
    title: '{{ has("moe.cumsum.count") ? "cumsum" : "none" }}'
    severity: low
    when: rank_metric("device.window.time_us", 0) > 0
    fix: f
  - id: cluster-absent
    title: t
    severity: low
    when: '!has("skew.computing.max_over_median")'
    fix: f
`), cut, nil)
	one := func(metric string, used ...string) []results.PartialInput {
		return []results.PartialInput{{Rank: 1, Reason: "t.json is truncated", Metrics: []string{metric}, UsedIn: used}}
	}
	require.Equal(t, one("moe.cumsum.count", results.UsedInWhen), finding(rep, "only-on-cut").Partial)
	require.Equal(t, one("event_wait.count", results.UsedInWhen), finding(rep, "absent").Partial)
	require.Nil(t, finding(rep, "whole-only").Partial)
	g := finding(rep, "in-text")
	require.Equal(t, "cumsum", g.Title)
	require.Equal(t, one("moe.cumsum.count", results.UsedInText), g.Partial)
	require.Nil(t, finding(rep, "cluster-absent").Partial)
}

func mustParse(t *testing.T, text string) *Set {
	t.Helper()
	set, err := Parse("h.yaml", []byte(text))
	require.NoError(t, err)
	return set
}
