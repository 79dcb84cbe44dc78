package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWrapLine(t *testing.T) {
	long := "  [HIGH] " + strings.Repeat("word ", 30)
	got := strings.Split(wrapLine(long, 40), "\n")
	for _, l := range got {
		require.LessOrEqual(t, len(l), 40, l)
	}
	require.True(t, strings.HasPrefix(got[1], "      word"), "continuation indented by 4: %q", got[1])
	require.Equal(t, strings.Fields(long), strings.Fields(strings.Join(got, " ")), "no word lost")

	// a quoted JSON value is not broken: the break comes before or after it
	flag := `        - graph mode: --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' (one launch per decode step)`
	got = strings.Split(wrapLine(flag, 100), "\n")
	require.Equal(t, []string{`        - graph mode: --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' (one launch per`,
		`            decode step)`}, got)
	require.Equal(t, "short", wrapLine("short", 100))

	// an apostrophe inside a word is not a quote: the line still breaks at
	// spaces after it, never inside a word
	apos := "      - upgrade: vLLM-Ascend's next release carries the fused dispatch and combine kernels for this path"
	got = strings.Split(wrapLine(apos, 60), "\n")
	require.Equal(t, []string{"      - upgrade: vLLM-Ascend's next release carries the",
		"          fused dispatch and combine kernels for this path"}, got)

	// a quote that never closes does not make the rest unbreakable
	open := "    - set '" + strings.Repeat("value ", 15)
	for _, l := range strings.Split(wrapLine(open, 40), "\n") {
		require.LessOrEqual(t, len(l), 40, l)
		require.False(t, strings.HasSuffix(l, "valu"), "word cut: %q", l)
	}
}

func TestSlowestStepsAndStats(t *testing.T) {
	var rows []stepRow
	for i := 1; i <= 20; i++ {
		rows = append(rows, stepRow{id: i, key: float64(i % 7)})
	}
	top, capped := slowestSteps(rows, false)
	require.True(t, capped)
	var ids []int
	for _, r := range top {
		ids = append(ids, r.id)
	}
	// keys 6 (6, 13, 20), 5 (5, 12, 19), 4 (4, 11, 18), then the first 3
	// (3; ties keep step order), listed in step order
	require.Equal(t, []int{3, 4, 5, 6, 11, 12, 13, 18, 19, 20}, ids)
	all, capped := slowestSteps(rows, true)
	require.False(t, capped)
	require.Len(t, all, 20)

	require.Equal(t, []float64{5.5, 5, 9, 10}, summaryStats([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}))
	require.Equal(t, []int{3}, outliers([]float64{10, 10.5, 9.5, 40, 10.2, 9.8}, 3.5))
}
