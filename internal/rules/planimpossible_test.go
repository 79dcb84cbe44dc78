package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/stretchr/testify/require"
)

// check --budget 'plan.step_time_change_pct >= X' cannot pass on a plan
// with an impossible step: the plan the A3 system gave before the ledger
// bounded its fixes (0.0 -> -922337203685477632.0 µs, total +0.00%).
func TestPlanBudgetRefusesAnImpossiblePlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.yaml")
	require.NoError(t, os.WriteFile(path, []byte("budgets:\n  - plan.step_time_change_pct >= -5\n  - plan.step_time_change_pct >= -100\n"), 0o644))
	set, err := Load(path)
	require.NoError(t, err)
	in := &Input{Result: &analysis.Result{}, Facts: &FactSet{}}
	impossible := &results.Plan{
		Steps: []results.PlanStep{
			{Rule: "host-bound-free", StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 3829.9, After: 0}, StepTimeChangePct: -100}},
			{Rule: "moe-dispatch-combine", StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 0, After: -922337203685477632.0}}},
		},
		StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 3829.9, After: 3829.9}},
	}
	require.Contains(t, impossible.Impossible(), "step 1 (host-bound-free) goes from 3829.9 to 0 µs")
	for _, p := range []*results.Plan{impossible,
		{StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 1000, After: 1200}, StepTimeChangePct: 20}},
		{Steps: []results.PlanStep{{Rule: "a", StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 1000, After: 1100}}}}, StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 1000, After: 990}, StepTimeChangePct: -1}},
	} {
		rep := &Report{Plan: p, Outcomes: []results.Outcome{}}
		for _, b := range set.Budgets {
			rep.Outcomes = append(rep.Outcomes, results.Outcome{Rule: b.ID})
		}
		rep.EvalPlanBudgets(set, in)
		require.Len(t, rep.Findings, 2, "%+v", rep.Outcomes)
		for _, o := range rep.Outcomes {
			require.Equal(t, results.StatusFired, o.Status, o.Rule)
		}
		require.Contains(t, rep.Findings[0].Title, "The fix plan holds an impossible step: ")
	}
	// a possible plan within the budget passes
	rep := &Report{Plan: &results.Plan{Steps: []results.PlanStep{{Rule: "a", StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 1000, After: 980}, StepTimeChangePct: -2}}},
		StepChange: results.StepChange{StepTimeUs: results.BeforeAfter{Before: 1000, After: 980}, StepTimeChangePct: -2}}}
	for _, b := range set.Budgets {
		rep.Outcomes = append(rep.Outcomes, results.Outcome{Rule: b.ID})
	}
	rep.EvalPlanBudgets(set, in)
	require.Empty(t, rep.Findings)
}
