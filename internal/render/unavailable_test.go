package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// The warnings section says each thing once: metrics unavailable for one
// reason on the same ranks share a line, and a reason that names a rank's
// own file names it inside the rank's folder, so ranks share it. A real
// 2-rank training capture printed 50 lines here, each reason once per
// metric and per rank, its path broken across lines.
func TestUnavailableSaysEachReasonOnce(t *testing.T) {
	rank := func(r int, path string) results.RankDoc {
		trace := path + "/ASCEND_PROFILER_OUTPUT/trace_view.json"
		return results.RankDoc{Rank: r, Path: path,
			Metrics: map[string]float64{metric.MetricKernelComputeCount: 3},
			Unavailable: map[string]string{
				"decode.batch.max":   "no decode attention kernel in " + trace,
				"decode.batch.min":   "no decode attention kernel in " + trace,
				"moe.layers.count":   "no MoE layer",
				"decode.steps.count": "no MoE layer",
			}}
	}
	doc := &results.Document{Ranks: []results.RankDoc{rank(0, "prof/rank0_ascend_pt"), rank(1, "prof/rank1_ascend_pt"), rank(2, "prof/rank2_ascend_pt")}}
	doc.Ranks[2].Unavailable["hccl.group.*"] = "no parallel_group_info in prof/rank2_ascend_pt/profiler_metadata.json"
	var b strings.Builder
	writeUnavailable(&errWriter{w: &b}, doc)
	require.Equal(t, `
Not measured / warnings
  decode.batch.max, decode.batch.min: no decode attention kernel in ASCEND_PROFILER_OUTPUT/trace_view.json (ranks 0-2)
  decode.steps.count, moe.layers.count: no MoE layer (ranks 0-2)
  hccl.group.*: no parallel_group_info in profiler_metadata.json (ranks 2)
`, b.String())

	// one rank: its paths stay whole (the header names only PATH)
	doc.Ranks = doc.Ranks[2:]
	b.Reset()
	writeUnavailable(&errWriter{w: &b}, doc)
	require.Contains(t, b.String(), "  hccl.group.*: no parallel_group_info in prof/rank2_ascend_pt/profiler_metadata.json (ranks 2)\n")
}

func TestRankListNamesRuns(t *testing.T) {
	require.Equal(t, "0-7", rankList([]int{0, 1, 2, 3, 4, 5, 6, 7}))
	require.Equal(t, "0,1,3-5,9", rankList([]int{0, 1, 3, 4, 5, 9}))
	require.Equal(t, "0,2,4,6,8,10,12,14,16,18,20,22,…", rankList([]int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24}))
}

// A capture with no device data (summaries only: step_trace_time.csv, as
// the real msinsight Level2 sample) has its kernel sections unavailable,
// not empty: "none" and "no MoE routing kernels found" claimed kernels
// that were never measured did not run.
func TestKernelSectionsUnavailableWithoutDeviceData(t *testing.T) {
	doc := &results.Document{Ranks: []results.RankDoc{{Rank: 0, Path: "rank0_ascend_pt",
		Unavailable: map[string]string{metric.MetricKernelComputeCount: "no device data: rank0_ascend_pt/ASCEND_PROFILER_OUTPUT has no kernel_details.csv"}}}}
	const want = "  unavailable: nothing measured on the device (see Not measured / warnings)\n"
	var b strings.Builder
	writeTopKernels(&errWriter{w: &b}, doc, false)
	require.Contains(t, b.String(), want)
	require.NotContains(t, b.String(), "none")
	b.Reset()
	writeMoE(&errWriter{w: &b}, doc, false)
	require.Equal(t, "\nMoE routing and Cumsum\n"+want, b.String())

	// measured, and no kernel of the kind: that is said
	doc.Ranks[0].Metrics = map[string]float64{metric.MetricKernelComputeCount: 0}
	b.Reset()
	writeMoE(&errWriter{w: &b}, doc, false)
	require.Contains(t, b.String(), "no MoE routing kernels")
}

// A reason naming the rank's folder itself (not a file in it) names it
// "the rank's folder"; another folder whose name starts the same is kept.
func TestRankRelativeNamesTheFolder(t *testing.T) {
	rd := &results.RankDoc{Path: "data/test_rank_1"}
	require.Equal(t, "decode step times need trace_view.json, which the rank's folder lacks",
		rankRelative("decode step times need trace_view.json, which data/test_rank_1 lacks", rd, "the rank's folder"))
	require.Equal(t, "the rank's folder has no profiler_metadata.json; data/test_rank_10 is another; ASCEND_PROFILER_OUTPUT/x.csv; data/test_rank_1.json",
		rankRelative("data/test_rank_1 has no profiler_metadata.json; data/test_rank_10 is another; data/test_rank_1/ASCEND_PROFILER_OUTPUT/x.csv; data/test_rank_1.json", rd, "the rank's folder"))
	require.Equal(t, "ends in the rank's folder.", rankRelative("ends in data/test_rank_1.", rd, "the rank's folder"))
}
