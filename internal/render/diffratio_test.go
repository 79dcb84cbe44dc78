package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results/diff"
)

// A measured/predicted ratio that rounds to zero reads "0%", never "-0%"
// (a fix predicted at 1.58ms whose metric grew 3.6µs: -0.23%), in the
// findings table of the text diff and of the HTML diff's view.
func TestDiffRatioNeverNegativeZero(t *testing.T) {
	r := &diff.Result{Findings: []diff.FindingDelta{
		{Rule: "moe-dispatch-combine", Status: diff.FindingPersists, PredictedUs: fptr(1580), MeasuredUs: fptr(-3.6), Ratio: fptr(-3.6 / 1580)},
		{Rule: "comm-ep-flashcomm", Status: diff.FindingResolved, PredictedUs: fptr(1710), MeasuredUs: fptr(1990), Ratio: fptr(1990.0 / 1710)},
	}}
	var b strings.Builder
	ew := &errWriter{w: &b}
	writeDiffFindings(ew, r)
	require.NoError(t, ew.err)
	lines := strings.Split(b.String(), "\n")
	require.Contains(t, lines[3], "moe-dispatch-combine")
	require.Regexp(t, `-3\.6µs +0% +`, lines[3])
	require.Regexp(t, `1\.99ms +116% +`, lines[4])
	require.NotContains(t, b.String(), "-0%")
}

// A change that rounds to zero from below shows no minus: "0.0µs (0.0%)"
// and "0.0 pts (0.0%)", not "-0.0µs (-0.0%)" (a kernel 0.04µs faster per
// step; ledger.compute.other.share 0.16213 → 0.16211, as the
// saved-clean-2ranks vs ep-fc1-cumsum golden diff has it).
func TestFormatDeltaNoNegativeZero(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	require.Equal(t, "0.0µs (0.0%)", FormatDelta(aTime, -0.04, pct(-0.02)))
	require.Equal(t, "-0.1µs (-0.1%)", FormatDelta(aTime, -0.1, pct(-0.05001)))
	require.Equal(t, "0.0 pts (0.0%)", FormatDelta("ledger.compute.other.share", -0.00002, pct(-0.012)))
	require.Equal(t, "+0.0µs (+0.0%)", FormatDelta(aTime, 0.04, pct(0.02)))
}
