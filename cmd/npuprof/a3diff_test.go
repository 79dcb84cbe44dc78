package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// genTruth writes a tracegen scenario into a temporary folder and returns
// the folder with the scenario's ground truth.
func genTruth(t *testing.T, name string) (string, *tracegen.Truth) {
	t.Helper()
	return testutil.Generate(t, testutil.Scenario(t, name))
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

// Issue 21's after states in a diff: the A3 TP4 x DP4 capture on
// v0.13.0rc1 against the same layout on v0.13.0rc2 and against TP8 x DP2
// on rc2. By tracegen's truth rc2 drops the side-stream work the main
// compute stream waited on in every MoE layer (the field report's rc1 ->
// rc2 gain on an EVENT_WAIT-heavy decode) and launches the gating kernel
// through its custom op; TP8 shrinks the TP-sharded matmuls per rank and
// adds TP communication. diff must give the truth's step breakdown on
// both sides, a shorter step, the rc1-only findings resolved and the
// MC2 dispatch/combine (BF16: no fused MC2 on rc2 either) persisting.
func TestDiffA3AfterUpgradeAndTP8(t *testing.T) {
	before, bt := genTruth(t, "a3-tp4dp4-rc1")
	requireA3PlanHoldsUpgrade(t, before)
	for _, tc := range []struct {
		after string
		// parallel-strategy's status: TP8 x DP2 is the recommended layout
		parallel string
		engines  float64
		// the plan's steps applied (their findings resolved) and not
		applied, notApplied []string
		// the predicted step-time lines of the text diff
		stepTime []string
	}{
		{"a3-tp4dp4-rc2", diff.FindingPersists, 4, []string{"vllm-ascend-upgrade"}, []string{"parallel-strategy", "moe-dispatch-combine"}, []string{
			"  event-wait-skew: predicted -28.13% (upper bound), measured -23.60%, measured together with vllm-ascend-upgrade: see the plan row",
			"  vllm-ascend-upgrade: predicted -27.13% (upper bound), measured -23.60%, measured together with event-wait-skew: see the plan row",
			"  plan: predicted -60.10% (upper bound), measured -23.60% (plan partly applied: steps applied: vllm-ascend-upgrade; not applied: parallel-strategy, moe-dispatch-combine; also resolved, outside the plan: event-wait-skew)",
		}},
		{"a3-tp8dp2-rc2", diff.FindingResolved, 2, []string{"vllm-ascend-upgrade", "parallel-strategy"}, []string{"moe-dispatch-combine"}, []string{
			"  event-wait-skew: predicted -28.13% (upper bound), measured -27.90%, measured together with parallel-strategy, vllm-ascend-upgrade: see the plan row",
			"  vllm-ascend-upgrade: predicted -27.13% (upper bound), measured -27.90%, measured together with event-wait-skew, parallel-strategy: see the plan row",
			"  parallel-strategy: predicted -20.68% (upper bound), measured -27.90%, measured together with event-wait-skew, vllm-ascend-upgrade: see the plan row",
			"  plan: predicted -60.10% (upper bound), measured -27.90% (plan partly applied: steps applied: vllm-ascend-upgrade, parallel-strategy; not applied: moe-dispatch-combine; also resolved, outside the plan: event-wait-skew)",
		}},
	} {
		t.Run(tc.after, func(t *testing.T) {
			after, at := genTruth(t, tc.after)
			r := diffA3(t, before, after, bt, at)
			requireA3PlanPartlyApplied(t, &r, tc.applied, tc.notApplied, tc.stepTime)
			// rc1-only findings: the version and the main stream's
			// EVENT_WAIT on the side stream are gone on the after side
			for _, rule := range []string{"vllm-ascend-upgrade", "event-wait-skew"} {
				f, ok := r.Finding(rule)
				require.True(t, ok, rule)
				require.Equal(t, diff.FindingResolved, f.Status, rule)
			}
			ew, ok := r.Metric("event_wait.main_stream.time_us")
			require.True(t, ok)
			require.Less(t, *ew.After, *ew.Before/2)
			ew, ok = r.Metric("event_wait.main_stream.share")
			require.True(t, ok)
			require.Less(t, *ew.After, 0.33) // event-wait-skew's min_share
			ps, ok := r.Finding("parallel-strategy")
			require.True(t, ok)
			require.Equal(t, tc.parallel, ps.Status)
			require.Contains(t, ps.Title, "over DP=4")
			if tc.parallel == diff.FindingResolved {
				// TP8 shrank the busy engine's compute outside MoE, by
				// less than the bound (half of it)
				require.Equal(t, "engines.busy.dense.time_us", ps.MeasuredMetric)
				require.NotNil(t, ps.Ratio)
				require.Greater(t, *ps.Ratio, 0.1)
				require.LessOrEqual(t, *ps.Ratio, 1.0)
			}
			// BF16 weights: rc2's fused DispatchFFNCombine does not apply,
			// so MC2 dispatch and combine stay and the finding persists
			// the upgrade's bound holds what the after side measures: the
			// waits for the side stream and the gating kernel went down, by
			// no more than the bound
			up, _ := r.Finding("vllm-ascend-upgrade")
			require.NotNil(t, up.Ratio, up.MeasuredMissing)
			require.Greater(t, *up.Ratio, 0.5)
			require.LessOrEqual(t, *up.Ratio, 1.0)
			dc, ok := r.Finding("moe-dispatch-combine")
			require.True(t, ok)
			require.Equal(t, diff.FindingPersists, dc.Status)
			for _, k := range r.Kernels {
				require.NotEqual(t, "DispatchFFNCombine", k.OpType)
			}
			ec, ok := r.Metric("engines.count")
			require.True(t, ok)
			require.Equal(t, 4.0, *ec.Before)
			require.Equal(t, tc.engines, *ec.After)
		})
	}
}

// requireA3PlanPartlyApplied checks the step-time predictions of a
// diff from the rc1 capture: the upgrade, event-wait-skew (left out of the
// plan, superseded by the upgrade) and the other applied steps landed
// together, so each names the others and has no ratio of its own, and the
// plan row says which of its steps were applied, which were not and what
// was resolved outside it.
func requireA3PlanPartlyApplied(t *testing.T, r *diff.Result, applied, notApplied, lines []string) {
	t.Helper()
	resolved := append([]string{"event-wait-skew"}, applied...)
	sort.Strings(resolved)
	for _, rule := range resolved {
		f, ok := r.Finding(rule)
		require.True(t, ok, rule)
		require.NotNil(t, f.StepTime, rule)
		require.Nil(t, f.StepTime.Ratio, rule)
		var others []string
		for _, o := range resolved {
			if o != rule {
				others = append(others, o)
			}
		}
		require.Equal(t, others, f.StepTime.MeasuredWith, rule)
		require.Equal(t, *r.Plan.MeasuredPct, *f.StepTime.MeasuredPct, rule)
	}
	require.Equal(t, &diff.PlanApplied{Steps: applied, NotApplied: notApplied, OutsidePlan: []string{"event-wait-skew"}}, r.Plan.Applied)
	require.Nil(t, r.Plan.Ratio, "the whole plan's prediction against part of it")
	var b strings.Builder
	require.NoError(t, render.WriteDiffText(&b, r))
	require.Equal(t, lines, stepTimeSection(t, b.String()))
}

// diffA3 runs diff before after, checks its per-step breakdown against
// both truths and that the after side is faster (the decode step, the
// busy engine's step and its generation rate in the vLLM log), and
// returns the result.
func diffA3(t *testing.T, before, after string, bt, at *tracegen.Truth) diff.Result {
	t.Helper()
	code, out, errs := run("diff", before, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var r diff.Result
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
	// the truth's sign: a shorter step, by less compute on the main
	// stream's critical path (the side-stream work it waited for)
	require.Negative(t, truthStepMean(at, window)-truthStepMean(bt, window))
	require.Negative(t, truthStepMean(at, quantities["computing"])-truthStepMean(bt, quantities["computing"]))

	for _, m := range []string{"decode.step.time_us", "engines.busy.step.time_us"} {
		d, ok := r.Metric(m)
		require.True(t, ok, m)
		require.Less(t, *d.After, *d.Before, m)
	}
	// the busy engine's rate in the vLLM log follows its step
	bs, ok := bt.BusyStepUs()
	require.True(t, ok)
	as, ok := at.BusyStepUs()
	require.True(t, ok)
	for _, d := range r.Serving {
		if d.Metric == "serving.engine.generation_tps" {
			require.InDelta(t, 18.0, *d.Before, 1e-9)
			require.InDelta(t, 18*bs/as, *d.After, 0.05)
			require.Greater(t, *d.After, *d.Before)
		}
	}
	require.NotNil(t, r.Plan)
	require.NotNil(t, r.Plan.MeasuredPct, r.Plan.Unavailable)
	// measured as the step time per step (the longest window over the
	// ranks of each ProfilerStep), as the diff's step_time says
	require.NotNil(t, r.StepTime)
	require.NotNil(t, r.StepTime.Pct)
	require.InDelta(t, *r.StepTime.Pct, *r.Plan.MeasuredPct, 1e-9)
	// the plan's total is an upper bound the after state stays within
	require.Negative(t, *r.Plan.PredictedPct)
	require.True(t, r.Plan.UpperBound)
	require.Less(t, *r.Plan.MeasuredPct, 0.0)
	require.GreaterOrEqual(t, *r.Plan.MeasuredPct, *r.Plan.PredictedPct)
	return r
}

// The rc1 capture's fix plan: the upgrade and parallel-strategy are plan
// steps now that their rules estimate a saving (both upper bounds, not
// replayed: docs/rules.md, "Parallel layout and version advice"), with
// moe-dispatch-combine; event-wait-skew is left out, superseded by the
// upgrade, whose bound holds the same waits for the side stream. No two
// steps edit the same flag.
func requireA3PlanHoldsUpgrade(t *testing.T, dir string) {
	t.Helper()
	code, out, errs := run("analyze", dir, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Findings []struct {
			Rule     string   `json:"rule"`
			Title    string   `json:"title"`
			SavingUs *float64 `json:"saving_us"`
		} `json:"findings"`
		Plan struct {
			Steps []struct {
				Rule       string `json:"rule"`
				UpperBound bool   `json:"upper_bound"`
				Basis      string `json:"basis"`
			} `json:"steps"`
			LeftOut []struct {
				Rule   string `json:"rule"`
				Reason string `json:"reason"`
			} `json:"left_out"`
			StepTimeChangePct float64 `json:"step_time_change_pct"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	saving := map[string]*float64{}
	for _, f := range doc.Findings {
		saving[f.Rule] = f.SavingUs
		if f.Rule == "vllm-ascend-upgrade" {
			require.Contains(t, f.Title, "v0.13.0rc2")
		}
	}
	var steps []string
	for _, s := range doc.Plan.Steps {
		steps = append(steps, s.Rule)
		require.True(t, s.UpperBound, s.Rule)
		require.NotNil(t, saving[s.Rule], s.Rule)
		require.Positive(t, *saving[s.Rule], s.Rule)
		require.Contains(t, s.Basis, "an upper bound", s.Rule)
	}
	// the bounds in the order of their size: parallel-strategy's (half the
	// dense compute and the time between steps) before dispatch/combine's
	require.Equal(t, []string{"vllm-ascend-upgrade", "parallel-strategy", "moe-dispatch-combine"}, steps)
	require.Len(t, doc.Plan.LeftOut, 1)
	require.Equal(t, "event-wait-skew", doc.Plan.LeftOut[0].Rule)
	require.Contains(t, doc.Plan.LeftOut[0].Reason, "superseded by vllm-ascend-upgrade")
	require.Negative(t, doc.Plan.StepTimeChangePct)
}
