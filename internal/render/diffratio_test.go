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
