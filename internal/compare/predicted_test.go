package compare_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/compare"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// predictedDoc is a one-rank document with a decode step time (µs), one
// finding per rule, each predicting its step-time change (%), and a plan
// whose steps are the rules of plan with its combined prediction.
func predictedDoc(stepUs float64, predicted map[string]float64, plan []string, planPct float64) *results.Document {
	d := &results.Document{Ranks: []results.RankDoc{{Rank: 0, Metrics: map[string]float64{metric.MetricDecodeStepUs: stepUs}}}}
	for _, rule := range []string{"comm-ep-flashcomm", "moe-routing-cumsum", "event-wait-skew", "parallel-strategy"} {
		if pct, ok := predicted[rule]; ok {
			d.Findings = append(d.Findings, results.Finding{Rule: rule, Severity: "high", Predicted: &results.Prediction{StepChange: results.StepChange{StepTimeChangePct: pct}}})
		}
	}
	if len(plan) > 0 {
		d.Plan = &results.Plan{StepChange: results.StepChange{StepTimeChangePct: planPct}}
		for _, rule := range plan {
			d.Plan.Steps = append(d.Plan.Steps, results.PlanStep{Rule: rule, StepChange: results.StepChange{StepTimeChangePct: predicted[rule]}})
		}
	}
	return d
}

// afterDoc is the after side: the decode step time and the findings that
// persist (no prediction needed: only the before side's counts).
func afterDoc(stepUs float64, persist ...string) *results.Document {
	d := &results.Document{Ranks: []results.RankDoc{{Rank: 0, Metrics: map[string]float64{metric.MetricDecodeStepUs: stepUs}}}}
	for _, rule := range persist {
		d.Findings = append(d.Findings, results.Finding{Rule: rule, Severity: "high"})
	}
	return d
}

func ptr(v float64) *float64 { return &v }

func stepTime(t *testing.T, r *diff.Result, rule string) *diff.StepChange {
	t.Helper()
	f, ok := r.Finding(rule)
	require.True(t, ok, rule)
	require.NotNil(t, f.StepTime, rule)
	return f.StepTime
}

// One predicted fix resolved, the first of the plan's two steps: its own
// prediction against the measured change, with the ratio; the plan row
// says the plan was partly applied, has no ratio of the whole plan, and
// compares the first step's cumulative prediction.
func TestStepTimeOneFixAlone(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"comm-ep-flashcomm": -10, "moe-routing-cumsum": -12.5}, []string{"moe-routing-cumsum", "comm-ep-flashcomm"}, -20)
	r := compare.Compare(before, afterDoc(750, "comm-ep-flashcomm"), compare.Options{})
	sc := stepTime(t, r, "moe-routing-cumsum")
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-12.5), MeasuredPct: ptr(-25), Ratio: ptr(2)}, *sc)
	f, _ := r.Finding("comm-ep-flashcomm")
	require.Nil(t, f.StepTime, "a persisting finding is not measured")
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-20), MeasuredPct: ptr(-25),
		Applied: &diff.PlanApplied{Steps: []string{"moe-routing-cumsum"}, NotApplied: []string{"comm-ep-flashcomm"}, OutsidePlan: []string{},
			PredictedPct: ptr(-12.5), Ratio: ptr(2)}}, *r.Plan)
}

// One predicted fix resolved, the second of the plan's two steps: no plan
// number predicts it alone, so the plan row has neither ratio.
func TestStepTimeOneFixNotFirstStep(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"comm-ep-flashcomm": -10, "moe-routing-cumsum": -12.5}, []string{"comm-ep-flashcomm", "moe-routing-cumsum"}, -20)
	r := compare.Compare(before, afterDoc(875, "comm-ep-flashcomm"), compare.Options{})
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-12.5), MeasuredPct: ptr(-12.5), Ratio: ptr(1)}, *stepTime(t, r, "moe-routing-cumsum"))
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-20), MeasuredPct: ptr(-12.5),
		Applied: &diff.PlanApplied{Steps: []string{"moe-routing-cumsum"}, NotApplied: []string{"comm-ep-flashcomm"}, OutsidePlan: []string{}}}, *r.Plan)
}

// A single-step plan whose step was resolved: the plan row is the
// comparison, with its ratio and no applied.
func TestStepTimeSingleStepPlan(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"comm-ep-flashcomm": -10, "moe-routing-cumsum": -12.5}, []string{"moe-routing-cumsum"}, -12.5)
	r := compare.Compare(before, afterDoc(750, "comm-ep-flashcomm"), compare.Options{})
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-12.5), MeasuredPct: ptr(-25), Ratio: ptr(2)}, *r.Plan)
}

// The first two of three plan steps resolved: their changes compound
// (0.9 x 0.8 = 0.72) into the prediction the plan row compares; an upper
// bound among them makes it one.
func TestStepTimePlanFirstSteps(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"parallel-strategy": -10, "moe-routing-cumsum": -20, "comm-ep-flashcomm": -5},
		[]string{"parallel-strategy", "moe-routing-cumsum", "comm-ep-flashcomm"}, -31.6)
	before.Plan.Steps[1].UpperBound = true
	r := compare.Compare(before, afterDoc(640, "comm-ep-flashcomm"), compare.Options{})
	require.Equal(t, &diff.PlanApplied{Steps: []string{"parallel-strategy", "moe-routing-cumsum"}, NotApplied: []string{"comm-ep-flashcomm"}, OutsidePlan: []string{},
		PredictedPct: ptr(-28), Ratio: ptr(-36.0 / -28), UpperBound: true}, r.Plan.Applied)
	require.Nil(t, r.Plan.Ratio)
	require.Equal(t, ptr(-31.6), r.Plan.PredictedPct)
}

// No predicted finding resolved: the plan row holds none of its steps, so
// it has no ratio and says so.
func TestStepTimePlanNotApplied(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"comm-ep-flashcomm": -10, "moe-routing-cumsum": -12.5}, []string{"moe-routing-cumsum", "comm-ep-flashcomm"}, -20)
	r := compare.Compare(before, afterDoc(1010, "comm-ep-flashcomm", "moe-routing-cumsum"), compare.Options{})
	require.Equal(t, &diff.PlanApplied{Steps: []string{}, NotApplied: []string{"moe-routing-cumsum", "comm-ep-flashcomm"}, OutsidePlan: []string{}}, r.Plan.Applied)
	require.Nil(t, r.Plan.Ratio)
}

// Two predicted fixes resolved together, exactly the plan's steps: each
// finding names the other and has no ratio; the plan row is the
// comparison.
func TestStepTimeTwoFixesTogether(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"comm-ep-flashcomm": -10, "moe-routing-cumsum": -12.5}, []string{"moe-routing-cumsum", "comm-ep-flashcomm"}, -20)
	r := compare.Compare(before, afterDoc(750), compare.Options{})
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-10), MeasuredPct: ptr(-25), MeasuredWith: []string{"moe-routing-cumsum"}}, *stepTime(t, r, "comm-ep-flashcomm"))
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-12.5), MeasuredPct: ptr(-25), MeasuredWith: []string{"comm-ep-flashcomm"}}, *stepTime(t, r, "moe-routing-cumsum"))
	require.Equal(t, diff.StepChange{PredictedPct: ptr(-20), MeasuredPct: ptr(-25), Ratio: ptr(1.25),
		Applied: &diff.PlanApplied{Steps: []string{"moe-routing-cumsum", "comm-ep-flashcomm"}, NotApplied: []string{}, OutsidePlan: []string{}, WholePlan: true}}, *r.Plan)
}

// A plan partly applied: two of its three steps resolved with a fix it
// left out; one step persists. measured_with is sorted and holds the fix
// outside the plan; the plan names the steps applied (plan order), not
// applied, and the fix outside it.
func TestStepTimePlanPartlyApplied(t *testing.T) {
	before := predictedDoc(1000, map[string]float64{"parallel-strategy": -15, "moe-routing-cumsum": -12.5, "comm-ep-flashcomm": -10, "event-wait-skew": -2},
		[]string{"parallel-strategy", "moe-routing-cumsum", "comm-ep-flashcomm"}, -32)
	r := compare.Compare(before, afterDoc(750, "moe-routing-cumsum"), compare.Options{})
	require.Equal(t, []string{"event-wait-skew", "parallel-strategy"}, stepTime(t, r, "comm-ep-flashcomm").MeasuredWith)
	require.Equal(t, []string{"comm-ep-flashcomm", "parallel-strategy"}, stepTime(t, r, "event-wait-skew").MeasuredWith)
	ps := stepTime(t, r, "parallel-strategy")
	require.Equal(t, []string{"comm-ep-flashcomm", "event-wait-skew"}, ps.MeasuredWith)
	require.Nil(t, ps.Ratio)
	require.Equal(t, &diff.PlanApplied{Steps: []string{"parallel-strategy", "comm-ep-flashcomm"}, NotApplied: []string{"moe-routing-cumsum"},
		OutsidePlan: []string{"event-wait-skew"}}, r.Plan.Applied)
	require.Equal(t, ptr(-32.0), r.Plan.PredictedPct)
	require.Nil(t, r.Plan.Ratio, "the whole plan's prediction against part of it")
	require.Nil(t, r.Plan.Applied.PredictedPct, "a fix outside the plan landed too")
}
