package results

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The gate never vouches for what it could not judge: a budget that was
// not evaluated fails unless AllowMissing (a rule not evaluated is not a
// budget); no whole rank fails whatever GatePartial says.
func TestGateUnjudgedBudgetsAndNoWholeRank(t *testing.T) {
	const budget = "hccl.total.time_us <= baseline * 1.05"
	doc := func(partial ...bool) *Document {
		d := &Document{Rules: []Outcome{
			{Rule: budget, Status: StatusNotEvaluated, Reason: "metric hccl.total.time_us is not in the baseline old.json"},
			{Rule: "some-rule", Status: StatusNotEvaluated, Reason: "metric x unavailable"},
			{Rule: "other", Status: StatusClear},
		}}
		d.Detail.RuleSet = []RuleInfo{{ID: budget, Budget: budget}, {ID: "some-rule"}, {ID: "other"}}
		for i, p := range partial {
			d.Ranks = append(d.Ranks, RankDoc{Rank: i, Partial: p})
		}
		return d
	}
	v := Gate{FailOn: "high", GatePartial: true}.JudgeDocument(doc(false, true))
	require.False(t, v.Pass())
	require.Len(t, v.Unjudged, 1, "a rule not evaluated is not a budget")
	require.EqualError(t, v.Err(), "budget hccl.total.time_us <= baseline * 1.05 could not be evaluated: metric hccl.total.time_us is not in the baseline old.json (--allow-missing lets it pass)")
	require.Contains(t, v.Summary(), "1 budget(s) not evaluated: FAIL")

	v = Gate{FailOn: "high", AllowMissing: true}.JudgeDocument(doc(false, true))
	require.True(t, v.Pass())

	for _, gatePartial := range []bool{true, false} {
		v = Gate{FailOn: "high", GatePartial: gatePartial, AllowMissing: true}.JudgeDocument(doc(true, true, true))
		require.False(t, v.Pass(), "no rank whole, --partial-findings gate=%v", gatePartial)
		require.EqualError(t, v.Err(), "no rank was read whole (all 3 are partial: a file cut short or damaged), so the check cannot vouch for the capture")
	}
}
