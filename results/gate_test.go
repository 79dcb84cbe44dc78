package results

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGate(t *testing.T) {
	cut := []PartialInput{{Rank: 3, Reason: "cut", Metrics: []string{"moe.cumsum.time_us"}, UsedIn: []string{UsedInWhen}}}
	findings := []Finding{
		{Rule: "a", Severity: SeverityHigh},
		{Rule: "b", Severity: SeverityHigh, Partial: cut},
		{Rule: "c", Severity: SeverityMedium},
		{Rule: "d", Severity: SeverityLow, Partial: cut},
	}
	v := Gate{FailOn: SeverityMedium, GatePartial: true}.Judge(findings)
	require.False(t, v.Pass())
	require.Len(t, v.Failing, 3)
	require.Equal(t, "check: 4 finding(s), 3 at or above medium (1 of them from a truncated file): FAIL", v.Summary())
	require.EqualError(t, v.Err(), "3 finding(s) at or above medium, 1 of them from a truncated file")

	v = Gate{FailOn: SeverityMedium}.Judge(findings)
	require.Equal(t, []string{"a", "c"}, []string{v.Failing[0].Rule, v.Failing[1].Rule})
	require.Equal(t, "check: 4 finding(s), 2 at or above medium (1 more from a truncated file, not gated: --partial-findings report): FAIL", v.Summary())
	require.EqualError(t, v.Err(), "2 finding(s) at or above medium")

	v = Gate{FailOn: SeverityHigh}.Judge(findings[2:])
	require.True(t, v.Pass())
	require.NoError(t, v.Err())
	require.Equal(t, "check: 2 finding(s), 0 at or above high: PASS", v.Summary())
}
