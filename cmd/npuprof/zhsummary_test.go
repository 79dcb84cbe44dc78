package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// The Chinese summary, by default and with --detail all, holds no
// English sentence on the inputs TestZHOutputsHaveNoEnglish does not
// cover: the A3 field capture (ranks with different step sets, a vLLM log
// in the folder, a superseded fix in the plan), ep-fc1 (a replayed
// collective) and real samples (kernel_details.csv only and cut short; no
// device data; no profiler_metadata.json; summaries beside a timeline).
func TestZHSummaryOfSamplesHasNoEnglish(t *testing.T) {
	gen := func(name string) string {
		sc, ok := tracegen.Lookup(name)
		require.True(t, ok)
		dir := t.TempDir()
		_, err := tracegen.Generate(dir, sc)
		require.NoError(t, err)
		return dir
	}
	for _, p := range []string{
		gen("a3-tp4dp4-rc1"),
		gen("ep-fc1"),
		testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level2"),
		testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/db/level1"),
		testutil.Sample(t, "Ascend-msinsight/server/src/test/test_data"),
		testutil.Sample(t, "xiaobingling93-pixel-Ascend-mstt/profiler/msprof_analyze/test/ut/advisor/compute_advice/data"),
	} {
		for _, detail := range []string{"summary", "all"} {
			code, out, errs := run("analyze", p, "-q", "--lang", "zh", "--detail", detail)
			require.Equal(t, ExitOK, code, errs)
			// the whole output in the message: where its lines break moves
			// with the input's path (a t.TempDir of any length), so a
			// failure shows the line that broke
			assert.Empty(t, lang.EnglishSentences(out), "%s --detail %s:\n%s", p, detail, out)
			// a warning's label in Chinese, whether or not its text has a phrase
			assert.NotContains(t, out, "\n  warning", "%s --detail %s", p, detail)
		}
	}
}
