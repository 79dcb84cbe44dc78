package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/pipeline"
)

// ownOverlapWarning is how the overlap pass's warning on a recomputed
// window that differs from the capture's own begins.
const ownOverlapWarning = "the profiler's own Overlap Analysis spans"

// warningsWith lists a rank's warnings that contain s.
func warningsWith(rr *analysis.RankResult, s string) []string {
	var out []string
	for _, w := range rr.Warnings {
		if strings.Contains(w.Message, s) {
			out = append(out, w.Message)
		}
	}
	return out
}

// The real Level1 capture's window and split are its own Overlap
// Analysis (which spans the first to the last kernel: a writer before
// CANN 8.5), and npuprof's recomputation agrees, so nothing is warned.
func TestWindowIsTheCapturesOwnOverlap(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 1)
	rr := res.Ranks[0]
	m := rr.Metrics
	// the trace's own events: 1736408883704643.212 to ...841224.221 µs,
	// Free 25744.050 µs (= step_trace_time.csv)
	require.Equal(t, 136581.009, m[analysis.MetricDeviceWindowUs])
	require.Equal(t, 25744.05, m[analysis.MetricFreeUs])
	require.Equal(t, 8873.756, m[analysis.MetricComputingUs])
	require.Equal(t, 105991.878, m[analysis.MetricCommunicationUs])
	require.Equal(t, 136581.009, m[analysis.MetricKernelSpanUs])
	require.Zero(t, m[analysis.MetricHeadIdleUs])
	require.Zero(t, m[analysis.MetricTailIdleUs])
	require.Empty(t, warningsWith(rr, ownOverlapWarning))
}

// A capture of the current writer (CANN 8.5) counts the time before the
// first and after the last kernel as Free: tracegen writes that Overlap
// Analysis, and npuprof's window, free time, head and tail equal it (and
// the ground truth) to the ns, from the trace's own events and, from the
// DB export (which has none), by the writer version's rule.
func TestWindowOfTheCurrentWriter(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 2, 2, 2
	sc.CANNVersion = "8.5.0"
	for _, lay := range []tracegen.Layout{tracegen.LayoutTorchNPUText, tracegen.LayoutTorchNPUDB} {
		dir, truth := testutil.GenerateLayout(t, sc, lay)
		res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
		require.NoError(t, err)
		require.Len(t, res.Ranks, len(truth.Ranks))
		for i, rr := range res.Ranks {
			want := truth.Ranks[i].Metrics
			head, tail := want[tracegen.MetricHeadIdleUs], want[tracegen.MetricTailIdleUs]
			require.Positive(t, head+tail, "%s rank %d: the writer's window reaches past the kernels", lay, i)
			for _, k := range []string{analysis.MetricDeviceWindowUs, analysis.MetricFreeUs, analysis.MetricComputingUs,
				analysis.MetricKernelSpanUs, analysis.MetricHeadIdleUs, analysis.MetricTailIdleUs} {
				require.Contains(t, rr.Metrics, k, "%s rank %d", lay, i)
				within(t, want[k], rr.Metrics[k], 1e-12, string(lay)+" "+k)
			}
			require.Less(t, rr.Metrics[analysis.MetricKernelSpanUs], rr.Metrics[analysis.MetricDeviceWindowUs])
			require.Empty(t, warningsWith(rr, ownOverlapWarning), "%s rank %d", lay, i)
			if lay != tracegen.LayoutTorchNPUText {
				continue
			}
			// the trace's own events give the same, to the ns
			js, err := filepath.Glob(filepath.Join(dir, truth.Ranks[i].Dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
			require.NoError(t, err)
			require.Len(t, js, 1)
			sums, span, _ := msprofOverlap(t, js[0])
			require.Equal(t, float64(span)/1000, rr.Metrics[analysis.MetricDeviceWindowUs])
			require.Equal(t, float64(sums["Free"])/1000, rr.Metrics[analysis.MetricFreeUs])
		}
	}
}

// A capture whose own Overlap Analysis differs from the window npuprof
// recomputes by more than 0.1% keeps the capture's figures and says so:
// here an older writer's events (the kernel span) under a profiler_info
// that names CANN 8.5, whose rule also spans the copies around the
// kernels.
func TestWindowWarnsWhenTheRecomputedOneDiffers(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 1, 2, 2
	dir, truth := testutil.Generate(t, sc)
	infos, err := filepath.Glob(filepath.Join(dir, truth.Ranks[0].Dir, "profiler_info_*.json"))
	require.NoError(t, err)
	require.Len(t, infos, 1)
	b, err := os.ReadFile(infos[0])
	require.NoError(t, err)
	require.Contains(t, string(b), `"8.1.RC1"`)
	require.NoError(t, os.WriteFile(infos[0], []byte(strings.Replace(string(b), `"8.1.RC1"`, `"8.5.0"`, 1)), 0o644))
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	rr := res.Ranks[0]
	want := truth.Ranks[0].Metrics
	within(t, want[tracegen.MetricWindowUs], rr.Metrics[analysis.MetricDeviceWindowUs], 1e-12, "the capture's own window")
	within(t, want[tracegen.MetricFreeUs], rr.Metrics[analysis.MetricFreeUs], 1e-12, "the capture's own free time")
	ws := warningsWith(rr, ownOverlapWarning)
	require.Len(t, ws, 1)
	require.Contains(t, ws[0], "CANN 8.5 and later")
}
