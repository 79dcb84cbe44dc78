package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/results"
)

func TestGate(t *testing.T) {
	cut := []results.PartialInput{{Rank: 3, Reason: "cut", Metrics: []string{"moe.cumsum.time_us"}, UsedIn: []string{results.UsedInWhen}}}
	rep := &Report{Findings: []results.Finding{
		{Rule: "a", Severity: results.SeverityHigh},
		{Rule: "b", Severity: results.SeverityHigh, Partial: cut},
		{Rule: "c", Severity: results.SeverityMedium},
		{Rule: "d", Severity: results.SeverityLow, Partial: cut},
	}}
	v := Gate{FailOn: results.SeverityMedium, GatePartial: true}.Judge(rep)
	require.False(t, v.Pass())
	require.Len(t, v.Failing, 3)
	require.Equal(t, "check: 4 finding(s), 3 at or above medium (1 of them from a truncated file): FAIL", v.Summary())
	require.EqualError(t, v.Err(), "3 finding(s) at or above medium, 1 of them from a truncated file")

	v = Gate{FailOn: results.SeverityMedium}.Judge(rep)
	require.Equal(t, []string{"a", "c"}, []string{v.Failing[0].Rule, v.Failing[1].Rule})
	require.Equal(t, "check: 4 finding(s), 2 at or above medium (1 more from a truncated file, not gated: --partial-findings report): FAIL", v.Summary())
	require.EqualError(t, v.Err(), "2 finding(s) at or above medium")

	v = Gate{FailOn: results.SeverityHigh}.Judge(&Report{Findings: rep.Findings[2:]})
	require.True(t, v.Pass())
	require.NoError(t, v.Err())
	require.Equal(t, "check: 2 finding(s), 0 at or above high: PASS", v.Summary())
}

func TestAddBudgets(t *testing.T) {
	set := &Set{}
	require.NoError(t, AddBudgets(set, []string{"hccl.total.time_us <= baseline * 1.05"}))
	require.Len(t, set.Budgets, 1)
	require.Equal(t, "--budget 'hccl.total.time_us <= baseline * 1.05'", set.Budgets[0].File)
	require.Equal(t, 0, set.Budgets[0].Line)

	err := AddBudgets(set, []string{"hccl.totl.time_us <= baseline", "moe.cumsum.time_us <= baseline"})
	require.True(t, errkind.Is(err, errkind.Usage))
	problems := errkind.Problems(err)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0], "--budget 'hccl.totl.time_us <= baseline': budget: unknown metric \"hccl.totl.time_us\"")
	require.Len(t, set.Budgets, 2, "the valid budget of the list is added")
}
