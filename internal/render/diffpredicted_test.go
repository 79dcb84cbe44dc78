package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results/diff"
)

// stepLines is the text diff's predicted vs measured step-time lines.
func stepLines(t *testing.T, r *diff.Result) []string {
	t.Helper()
	var b strings.Builder
	ew := &errWriter{w: &b}
	writeDiffStepChanges(ew, r)
	require.NoError(t, ew.err)
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")[2:]
}

// Two fixes resolved together with no plan on the before side: no row to
// point at, so the line says so.
func TestStepChangesTogetherWithoutPlan(t *testing.T) {
	r := &diff.Result{Findings: []diff.FindingDelta{
		{Rule: "b-rule", StepTime: &diff.StepChange{PredictedPct: fptr(-10), MeasuredPct: fptr(-25), MeasuredWith: []string{"a-rule"}}},
		{Rule: "a-rule", StepTime: &diff.StepChange{PredictedPct: fptr(-12.5), MeasuredPct: fptr(-25), MeasuredWith: []string{"b-rule"}}},
	}}
	require.Equal(t, []string{
		"  b-rule: predicted -10.00%, measured -25.00%, measured together with a-rule (the before side has no fix plan)",
		"  a-rule: predicted -12.50%, measured -25.00%, measured together with b-rule (the before side has no fix plan)",
	}, stepLines(t, r))
	sec, ok := diffStepChangeSection(r)
	require.True(t, ok)
	require.Equal(t, "measured together with a-rule (the before side has no fix plan)", sec.Rows[0][3].Text)
	require.Nil(t, sec.Rows[0][3].Value)
}

// Two fixes the plan left out, none of its steps applied, and the step
// time unmeasured after: the plan row says all of it, the findings' rows
// say why nothing was measured.
func TestStepChangesNoPlanStepApplied(t *testing.T) {
	why := "decode.step.time_us is not measured after"
	r := &diff.Result{Findings: []diff.FindingDelta{
		{Rule: "x-rule", StepTime: &diff.StepChange{PredictedPct: fptr(-2), UpperBound: true, Unavailable: why, MeasuredWith: []string{"y-rule"}}},
		{Rule: "y-rule", StepTime: &diff.StepChange{PredictedPct: fptr(-3), Unavailable: why, MeasuredWith: []string{"x-rule"}}},
	}, Plan: &diff.StepChange{PredictedPct: fptr(-20), Unavailable: why,
		Applied: &diff.PlanApplied{Steps: []string{}, NotApplied: []string{"a-rule", "b-rule"}, OutsidePlan: []string{"x-rule", "y-rule"}}}}
	scope := "plan not applied: steps applied: none; not applied: a-rule, b-rule; also resolved, outside the plan: x-rule, y-rule"
	require.Equal(t, []string{
		"  x-rule: predicted -2.00% (upper bound), measured n/a (" + why + ")",
		"  y-rule: predicted -3.00%, measured n/a (" + why + ")",
		"  plan: predicted -20.00%, measured n/a (" + why + ") (" + scope + ")",
	}, stepLines(t, r))
	sec, ok := diffStepChangeSection(r)
	require.True(t, ok)
	require.Len(t, sec.Rows, 3)
	require.Equal(t, []string{"plan", "-20.00%", "n/a", "-", scope + "; " + why}, cellTexts(sec.Rows[2]))
	require.Equal(t, []string{"x-rule", "-2.00% (upper bound)", "n/a", "-", why}, cellTexts(sec.Rows[0]))
}

// The plan's first step applied alone: the plan row's ratio is against
// that step's cumulative prediction (an upper bound), in the text and in
// the HTML ratio column.
func TestStepChangesPlanFirstStep(t *testing.T) {
	r := &diff.Result{Findings: []diff.FindingDelta{
		{Rule: "a-rule", StepTime: &diff.StepChange{PredictedPct: fptr(-10), MeasuredPct: fptr(-8), Ratio: fptr(0.8)}},
	}, Plan: &diff.StepChange{PredictedPct: fptr(-20), MeasuredPct: fptr(-8),
		Applied: &diff.PlanApplied{Steps: []string{"a-rule"}, NotApplied: []string{"b-rule"}, OutsidePlan: []string{},
			PredictedPct: fptr(-10), Ratio: fptr(0.8), UpperBound: true}}}
	scope := "plan partly applied: steps applied: a-rule; not applied: b-rule; the applied steps' cumulative prediction is -10.00% (upper bound): measured/predicted 80%"
	require.Equal(t, []string{
		"  a-rule: predicted -10.00%, measured -8.00%, measured/predicted 80%",
		"  plan: predicted -20.00%, measured -8.00% (" + scope + ")",
	}, stepLines(t, r))
	sec, ok := diffStepChangeSection(r)
	require.True(t, ok)
	require.Equal(t, []string{"plan", "-20.00%", "-8.00%", "80%", scope}, cellTexts(sec.Rows[1]))
	require.Equal(t, fptr(0.8), sec.Rows[1][3].Value)
}

// Without a prediction on the before side the HTML diff has no such
// section.
func TestStepChangesNone(t *testing.T) {
	_, ok := diffStepChangeSection(&diff.Result{Findings: []diff.FindingDelta{{Rule: "a-rule", Status: diff.FindingResolved}}})
	require.False(t, ok)
}

func cellTexts(row []DiffCell) []string {
	var out []string
	for _, c := range row {
		out = append(out, c.Text)
	}
	return out
}
