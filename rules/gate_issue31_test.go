package rules

import (
	"testing"

	"github.com/npuprof/npuprof/results"
	"github.com/stretchr/testify/require"
)

// The gate never vouches for what it could not judge (issue 31): a budget
// that was not evaluated fails unless AllowMissing; no whole rank fails
// whatever GatePartial says.
func TestGateUnjudgedBudgetsAndNoWholeRank(t *testing.T) {
	rep := &Report{Outcomes: []results.Outcome{
		{Rule: "hccl.total.time_us <= baseline * 1.05", Status: results.StatusNotEvaluated, Reason: "metric hccl.total.time_us is not in the baseline old.json"},
		{Rule: "some-rule", Status: results.StatusNotEvaluated, Reason: "metric x unavailable"},
		{Rule: "other", Status: results.StatusClear},
	}}
	budgets := []*Budget{{ID: "hccl.total.time_us <= baseline * 1.05"}}
	v := Gate{FailOn: "high", GatePartial: true, Budgets: budgets, Ranks: 2, WholeRanks: 1}.Judge(rep)
	require.False(t, v.Pass())
	require.Len(t, v.Unjudged, 1, "a rule not evaluated is not a budget")
	require.EqualError(t, v.Err(), "budget hccl.total.time_us <= baseline * 1.05 could not be evaluated: metric hccl.total.time_us is not in the baseline old.json (--allow-missing lets it pass)")
	require.Contains(t, v.Summary(), "1 budget(s) not evaluated: FAIL")

	v = Gate{FailOn: "high", AllowMissing: true, Budgets: budgets, Ranks: 2, WholeRanks: 1}.Judge(rep)
	require.True(t, v.Pass())

	for _, gatePartial := range []bool{true, false} {
		v = Gate{FailOn: "high", GatePartial: gatePartial, AllowMissing: true, Budgets: budgets, Ranks: 3, WholeRanks: 0}.Judge(rep)
		require.False(t, v.Pass(), "no rank whole, --partial-findings gate=%v", gatePartial)
		require.EqualError(t, v.Err(), "no rank was read whole (all 3 are partial: a file cut short or damaged), so the check cannot vouch for the capture")
	}
}
