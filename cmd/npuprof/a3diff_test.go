package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/compare"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// genTruth writes a tracegen scenario into a temporary folder and returns
// the folder with the scenario's ground truth.
func genTruth(t *testing.T, name string) (string, *tracegen.Truth) {
	t.Helper()
	sc, ok := tracegen.Lookup(name)
	require.True(t, ok, name)
	dir := t.TempDir()
	tr, err := tracegen.Generate(dir, sc)
	require.NoError(t, err)
	return dir, tr
}

// truthStepMean is the mean over every rank's ProfilerStep#N of one
// quantity of the step breakdown: what diff's per-step table shows.
func truthStepMean(tr *tracegen.Truth, q func(tracegen.StepTruth) float64) float64 {
	sum, n := 0.0, 0
	for _, r := range tr.Ranks {
		for _, s := range r.Steps {
			sum += q(s)
			n++
		}
	}
	return sum / float64(n)
}

// Issue 21's after state in a diff: the A3 TP4 x DP4 capture on
// v0.13.0rc1 against TP8 x DP2 on v0.13.0rc2. tracegen changes only the
// version facts and the TP size between them (no rc2 kernel speedup, and
// the per-rank compute does not shrink with TP8), so by its truth the step
// gets slower, through more TP communication: diff must say so, exactly.
func TestDiffA3AfterUpgradeAndTP8(t *testing.T) {
	before, bt := genTruth(t, "a3-tp4dp4-rc1")
	after, at := genTruth(t, "a3-tp8dp2-rc2")
	code, out, errs := run("diff", before, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var r compare.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))

	window := func(s tracegen.StepTruth) float64 {
		return s.ComputingUs + s.CommunicationNotOverlappedUs + s.FreeUs
	}
	quantities := map[string]func(tracegen.StepTruth) float64{
		"window":                       window,
		"computing":                    func(s tracegen.StepTruth) float64 { return s.ComputingUs },
		"communication_not_overlapped": func(s tracegen.StepTruth) float64 { return s.CommunicationNotOverlappedUs },
		"free":                         func(s tracegen.StepTruth) float64 { return s.FreeUs },
	}
	for q, f := range quantities {
		s, ok := r.Step(q)
		require.True(t, ok, q)
		require.InDelta(t, truthStepMean(bt, f), s.BeforeUs, 1e-6, q)
		require.InDelta(t, truthStepMean(at, f), s.AfterUs, 1e-6, q)
		require.InDelta(t, truthStepMean(at, f)-truthStepMean(bt, f), s.DeltaUs, 1e-6, q)
	}
	// The truth's sign: the after state's step is longer, and most of the
	// growth is communication not overlapped (more TP ranks per collective).
	wd := truthStepMean(at, window) - truthStepMean(bt, window)
	cd := truthStepMean(at, quantities["communication_not_overlapped"]) -
		truthStepMean(bt, quantities["communication_not_overlapped"])
	require.Positive(t, wd)
	require.Greater(t, cd, wd/2)

	// The decode step time (step start to the next start) moves the same
	// way, and the plan's measured change is that metric's relative change.
	ds, ok := r.Metric("decode.step.time_us")
	require.True(t, ok)
	require.Greater(t, *ds.After, *ds.Before)
	require.NotNil(t, r.Plan)
	require.NotNil(t, r.Plan.MeasuredPct, r.Plan.Unavailable)
	require.InDelta(t, (*ds.After / *ds.Before - 1)*100, *r.Plan.MeasuredPct, 1e-9)
	// The before side's plan predicted a gain (an upper bound); the after
	// state measured a loss, so the ratio is negative.
	require.Negative(t, *r.Plan.PredictedPct)
	require.True(t, r.Plan.UpperBound)
	require.Negative(t, *r.Plan.Ratio)

	// rc2 resolves the upgrade finding.
	up, ok := r.Finding("vllm-ascend-upgrade")
	require.True(t, ok)
	require.Equal(t, compare.FindingResolved, up.Status)
	// TP8 x DP2 is the recommended layout for one request in flight, so
	// parallel-strategy's advice is resolved (no TP16 x DP1 on the after side).
	ps, ok := r.Finding("parallel-strategy")
	require.True(t, ok)
	require.Equal(t, compare.FindingResolved, ps.Status)
	require.Contains(t, ps.Title, "over DP=4")
	// The MC2 dispatch/combine and the main stream's EVENT_WAIT are not
	// touched by either fix.
	for _, rule := range []string{"moe-dispatch-combine", "event-wait-skew"} {
		f, ok := r.Finding(rule)
		require.True(t, ok, rule)
		require.Equal(t, compare.FindingPersists, f.Status, rule)
	}
	requireA3PlanLeavesOutUpgrade(t, before)

	ec, ok := r.Metric("engines.count")
	require.True(t, ok)
	require.Equal(t, 4.0, *ec.Before)
	require.Equal(t, 2.0, *ec.After)
}

// The rc1 capture's fix plan, as it stands: the upgrade finding fires,
// naming rc2 with its CANN and torch_npu pair, but it is not a plan step:
// its fix has no replayable transform and the rule gives no saving
// estimate (saving_us 0), so the plan has no bound for it (plan.bound).
// parallel-strategy is left out for the same reason. The plan's steps are
// the two fixes with a saving estimate, both upper bounds.
func requireA3PlanLeavesOutUpgrade(t *testing.T, dir string) {
	t.Helper()
	code, out, errs := run("analyze", dir, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Findings []struct {
			Rule     string  `json:"rule"`
			Title    string  `json:"title"`
			SavingUs float64 `json:"saving_us"`
		} `json:"findings"`
		Plan struct {
			Steps []struct {
				Rule       string `json:"rule"`
				UpperBound bool   `json:"upper_bound"`
			} `json:"steps"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	saving := map[string]float64{}
	for _, f := range doc.Findings {
		saving[f.Rule] = f.SavingUs
		if f.Rule == "vllm-ascend-upgrade" {
			require.Contains(t, f.Title, "v0.13.0rc2")
		}
	}
	require.Contains(t, saving, "vllm-ascend-upgrade")
	require.Zero(t, saving["vllm-ascend-upgrade"])
	require.Contains(t, saving, "parallel-strategy")
	require.Zero(t, saving["parallel-strategy"])
	var steps []string
	for _, s := range doc.Plan.Steps {
		steps = append(steps, s.Rule)
		require.True(t, s.UpperBound, s.Rule)
		require.Positive(t, saving[s.Rule], s.Rule)
	}
	require.ElementsMatch(t, []string{"moe-dispatch-combine", "event-wait-skew"}, steps)
}
