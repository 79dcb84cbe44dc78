package driver

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/rules"
)

// A check in which no rule or budget could be evaluated does not pass.
func TestCheckRefusesNoRuleEvaluated(t *testing.T) {
	rep := &rules.Report{Outcomes: []results.Outcome{
		{Rule: "a", Status: results.StatusNotEvaluated, Reason: "metric x unavailable"},
		{Rule: "b", Status: results.StatusFailed, Reason: "boom"},
	}}
	err := nothingEvaluated(rep.Outcomes)
	require.True(t, errkind.Is(err, errkind.Usage))
	require.EqualError(t, err, "nothing to check: none of the 2 rule(s) could be evaluated (a: metric x unavailable; b: boom)")
	rep.Outcomes = append(rep.Outcomes, results.Outcome{Rule: "c", Status: results.StatusClear})
	require.NoError(t, nothingEvaluated(rep.Outcomes))
}
