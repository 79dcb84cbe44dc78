package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// The default Chinese summary holds no English sentence on the inputs
// TestZHOutputsHaveNoEnglish does not cover: the A3 field capture (ranks
// with different step sets, a vLLM log in the folder, a superseded fix in
// the plan) and real samples (kernel_details.csv only and cut short; no
// device data; summaries beside a timeline).
func TestZHSummaryOfSamplesHasNoEnglish(t *testing.T) {
	sc, ok := tracegen.Lookup("a3-tp4dp4-rc1")
	require.True(t, ok)
	a3 := t.TempDir()
	_, err := tracegen.Generate(a3, sc)
	require.NoError(t, err)
	for _, p := range []string{
		a3,
		testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level2"),
		testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/db/level1"),
		testutil.Sample(t, "Ascend-msinsight/server/src/test/test_data"),
		testutil.Sample(t, "xiaobingling93-pixel-Ascend-mstt/profiler/msprof_analyze/test/ut/advisor/compute_advice/data"),
	} {
		code, out, errs := run("analyze", p, "-q", "--lang", "zh")
		require.Equal(t, ExitOK, code, errs)
		require.Empty(t, lang.EnglishSentences(out), "%s:\n%s", p, out)
	}
}
