package pipeline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
)

// The 2023 training ranks hold no trace_view.json and only an excerpt of
// kernel_details.csv (cut as committed upstream), so the excerpt is no
// reference: without it, the steps are step_trace_time.csv's rows (the
// old header, no Preparing) and hccl.* communication.json's collectives,
// exactly. Nothing names their device: it is unavailable with the reason.
// With the excerpt, a warning says its collectives are not
// communication.json's.
func TestSummaries2023Ranks(t *testing.T) {
	for _, rel := range []string{
		"Ascend-msinsight/server/src/test/test_data/test_rank_0",
		"Ascend-msinsight/server/src/test/test_data/test_rank_1",
	} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			// with the excerpt, its collectives are not communication.json's:
			// a warning says which file is reported
			warned := false
			for _, w := range analyzeOne(t, testutil.Sample(t, rel)).Ranks[0].Warnings {
				warned = warned || strings.Contains(w.Message, "in kernel_details.csv but 28 in communication.json; npuprof reports the kernel_details.csv ones")
			}
			require.True(t, warned, "the excerpt's collectives disagree with communication.json")
			dir := filepath.Join(t.TempDir(), filepath.Base(rel))
			copyTree(t, testutil.Sample(t, rel), dir, "kernel_details.csv")
			p, err := gather.Models(context.Background(), dir, gather.Options{})
			require.NoError(t, err)
			m := p.Ranks[0]
			require.Len(t, m.StepTrace, 1)
			rr := analyzeOne(t, dir).Ranks[0]
			steps := analysis.StepsOf(rr)
			require.Len(t, steps, 1)
			row := m.StepTrace[0]
			require.Equal(t, 2, steps[0].Step)
			require.Equal(t, usToNs(row.Computing), steps[0].Computing)
			require.Equal(t, usToNs(row.Communication), steps[0].Communication)
			require.Equal(t, usToNs(row.Free), steps[0].Free)
			within(t, row.Free, rr.Metrics["overlap.free.time_us"], 1e-7, "overlap.free.time_us")
			var elapse float64
			for _, c := range m.Communication {
				elapse += c.ElapseMs
			}
			require.NotZero(t, elapse)
			within(t, elapse*1000, rr.Metrics["hccl.total.time_us"], 1e-8, "hccl.total.time_us")
			require.Equal(t, float64(len(m.Communication)), rr.Metrics["hccl.total.count"])
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/communication.json", rr.Sources.Get("hccl.total.time_us"))
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", rr.Sources.Get("steps"))
			require.Equal(t, -1, rr.Device)
			require.Contains(t, rr.Unavailable[analysis.KeyDevice], "no file of the rank names its device")
		})
	}
}
