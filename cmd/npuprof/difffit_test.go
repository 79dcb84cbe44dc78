package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/render"
)

// requireFitsUncut checks that every line of out fits width columns and that
// no line is a table row cut at the width (ending in "…").
func requireFitsUncut(t *testing.T, out string, width int, msg string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		require.LessOrEqual(t, render.DisplayWidth(l), width, "%s: %q", msg, l)
		require.False(t, strings.HasSuffix(l, "…"), "%s: a cut line: %q", msg, l)
	}
}

// On a terminal of 80 or 60 columns, in English and in Chinese, npuprof
// diff fits every table instead of cutting its last columns: a column the
// row has no room for is written under the row ("measured on: ..."), a
// metric name too long for its column above it, and every value is there.
func TestDiffFitsNarrowTerminal(t *testing.T) {
	t.Chdir("../..")
	for _, width := range []int{80, 60} {
		for _, lang := range []string{"en", "zh"} {
			code, out, errs := runWidth(width, "diff", "testdata/traces/ep-fc1-cumsum", "testdata/traces/clean-2ranks", "--lang", lang)
			require.Equal(t, ExitOK, code, errs)
			msg := fmt.Sprintf("%s at %d columns", lang, width)
			requireFitsUncut(t, out, width, msg)
			for _, want := range []string{
				"hccl.total.time_us", "overlap.communication_not_overlapped.time_us", // findings' measured on, a metric
				"4 → 0",                                  // a collective's count per step
				"-279.0µs (-41.3%)", "+336.0µs (+39.3%)", // a step's change, a kernel's
				"1.20ms → 696.2µs", "734.8µs → 635.2µs", // a rank's comm not overlapped and free
			} {
				require.Contains(t, out, want, msg)
			}
		}
	}
	// partial rows: their tags go under the row with the last column
	for _, width := range []int{80, 60} {
		code, out, errs := runWidth(width, "diff", "testdata/traces/ep-fc1-cumsum", "testdata/broken/truncated-mid-event", "--all")
		require.Equal(t, ExitOK, code, errs)
		requireFitsUncut(t, out, width, fmt.Sprintf("partial at %d columns", width))
		require.Contains(t, out, "[partial: after rank 0]")
	}
	// at 80 columns the findings keep their ratio; the metric measured on goes under the row
	_, out, _ := runWidth(80, "diff", "testdata/traces/ep-fc1-cumsum", "testdata/traces/clean-2ranks")
	require.Contains(t, out, "\n  resolved  comm-ep-flashcomm    419.9µs      558.4µs   133%\n      measured on: hccl.total.time_us\n")
}

// On a terminal check --baseline's comparison with its baseline fits the
// terminal as npuprof diff does: its lines wrap at the width, none is
// longer.
func TestCheckBaselineFitsTerminal(t *testing.T) {
	t.Chdir("../..")
	base := filepath.Join(t.TempDir(), "base.json")
	code, _, errs := run("analyze", "testdata/traces/clean-2ranks", "-q", "--format", "json", "-o", base)
	require.Equal(t, ExitOK, code, errs)
	for _, width := range []int{80, 60} {
		code, out, errs := runWidth(width, "check", "testdata/traces/ep-fc1-cumsum", "--baseline", base, "-q")
		require.Equal(t, ExitFindings, code, errs)
		i := strings.Index(out, "\nCompared with the baseline")
		require.Positive(t, i, out)
		cmp := out[i:]
		for _, l := range strings.Split(cmp, "\n") {
			require.LessOrEqual(t, render.DisplayWidth(l), width, "check --baseline at %d columns: %q", width, l)
		}
		requireText(t, cmp, "resolved: env-hygiene (predicted no estimate, measured -125.0µs on device.window.time_us)")
	}
}

// Under --lang zh check --baseline's comparison is in Chinese, as the
// summary above it is.
func TestCheckBaselineZH(t *testing.T) {
	t.Chdir("../..")
	base := filepath.Join(t.TempDir(), "base.json")
	code, _, errs := run("analyze", "testdata/traces/clean-2ranks", "-q", "--format", "json", "-o", base)
	require.Equal(t, ExitOK, code, errs)
	code, out, errs := run("check", "testdata/traces/ep-fc1-cumsum", "--baseline", base, "-q", "--lang", "zh")
	require.Equal(t, ExitFindings, code, errs)
	i := strings.Index(out, "\n与基线 ")
	require.Positive(t, i, out)
	cmp := out[i:]
	require.Empty(t, lang.EnglishSentences(cmp), cmp)
	require.Contains(t, cmp, "  已解决：env-hygiene（预测 未估算，在 device.window.time_us 上实测 -125.0µs）\n")
}
