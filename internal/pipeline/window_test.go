package pipeline_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
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

// The real Level1 capture's window is its own Overlap Analysis's (which
// spans the first to the last kernel: a writer before CANN 8.5), by the
// writer's rule, which npuprof recomputes; the trace names no CANN
// version, so its own events are read and checked against the
// recomputation, which agrees within 0.1% and stands; the free and
// computing times are the trace's own sums but for 14 and 16 ns of its
// slices' decimal rounding.
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
	within(t, 25744.05, m[analysis.MetricFreeUs], 0.015/25744.05, "free")
	// the capture names no CANN version, so its Overlap Analysis is
	// decoded; the recomputation agrees, so it stands (the outputs of
	// before that decoding, to the ns)
	require.Equal(t, 25744.064, m[analysis.MetricFreeUs])
	within(t, 8873.756, m[analysis.MetricComputingUs], 0.02/8873.756, "computing")
	within(t, 105991.878, m[analysis.MetricCommunicationUs], 0.02/105991.878, "communication")
	require.Equal(t, 136581.009, m[analysis.MetricKernelSpanUs])
	require.Zero(t, m[analysis.MetricHeadIdleUs])
	require.Zero(t, m[analysis.MetricTailIdleUs])
	require.Empty(t, warningsWith(rr, ownOverlapWarning))
}

// A capture of the current writer (CANN 8.5) counts the time before the
// first and after the last kernel as Free: tracegen writes that Overlap
// Analysis, and npuprof's window, free time, head and tail, by the writer
// version's rule, equal it (and the ground truth) to the ns, from the
// text and the DB export alike.
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
			if lay == tracegen.LayoutTorchNPUDB {
				// the DB's own OVERLAP_ANALYSIS (msprof's DB writer
				// since CANN 8.5) gives the same, to the ns
				dbs, err := filepath.Glob(filepath.Join(dir, truth.Ranks[i].Dir, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_*.db"))
				require.NoError(t, err)
				require.Len(t, dbs, 1)
				span, free := dbOverlap(t, dbs[0])
				require.Equal(t, float64(span)/1000, rr.Metrics[analysis.MetricDeviceWindowUs])
				require.Equal(t, float64(free)/1000, rr.Metrics[analysis.MetricFreeUs])
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

// An msprof capture of the current writer: its msprof_*.json's own
// Overlap Analysis spans the device tasks around the kernels (head and
// tail Free), and npuprof takes it to the ns. msprof's output names no
// CANN version, so npuprof's recomputation by the older rule (the kernel
// span) differs, and it says so. Without msprof_*.json (task_time and
// op_summary only) the window is the recomputed one.
func TestWindowOfAnMsprofCapture(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 1, 2, 2
	sc.CANNVersion = "8.5.0"
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutMsprofText)
	js, err := filepath.Glob(filepath.Join(dir, truth.Ranks[0].Dir, "mindstudio_profiler_output", "msprof_*.json"))
	require.NoError(t, err)
	require.Len(t, js, 1)
	sums, span, _ := msprofOverlap(t, js[0])
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	rr := res.Ranks[0]
	want := truth.Ranks[0].Metrics
	require.Positive(t, want[tracegen.MetricHeadIdleUs]+want[tracegen.MetricTailIdleUs])
	require.Equal(t, float64(span)/1000, rr.Metrics[analysis.MetricDeviceWindowUs])
	require.Equal(t, float64(sums["Free"])/1000, rr.Metrics[analysis.MetricFreeUs])
	for _, k := range []string{analysis.MetricDeviceWindowUs, analysis.MetricFreeUs, analysis.MetricKernelSpanUs, analysis.MetricHeadIdleUs, analysis.MetricTailIdleUs} {
		within(t, want[k], rr.Metrics[k], 1e-12, k)
	}
	ws := warningsWith(rr, ownOverlapWarning)
	require.Len(t, ws, 1)
	require.Contains(t, ws[0], "before CANN 8.5")

	require.NoError(t, os.Remove(js[0]))
	res, err = pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	rr = res.Ranks[0]
	within(t, want[tracegen.MetricKernelSpanUs], rr.Metrics[analysis.MetricDeviceWindowUs], 1e-12, "the recomputed window")
	require.Zero(t, rr.Metrics[analysis.MetricHeadIdleUs])
	require.Empty(t, warningsWith(rr, ownOverlapWarning))
}

// dbOverlap is the span and the Free sum (ns) of a database's own
// OVERLAP_ANALYSIS rows.
func dbOverlap(t *testing.T, path string) (span, free int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.QueryRow(`SELECT max(endNs) - min(startNs), (SELECT sum(endNs - startNs) FROM OVERLAP_ANALYSIS WHERE type = 3) FROM OVERLAP_ANALYSIS`).Scan(&span, &free))
	require.Positive(t, span)
	return span, free
}

// The real DB export MindStudio Insight rewrote carries an
// OVERLAP_ANALYSIS table (the msprof DB writer's, since CANN 8.5): its
// window and free time are taken to the ns (its sums equal the capture's
// analysis.db StepTraceTime), and npuprof's recomputation agrees within
// 0.1% (no warning).
func TestWindowOfTheDBsOwnOverlap(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/db/level1/rank0_ascend_pt")
	rr := oneRank(t, dir)
	span, free := dbOverlap(t, filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"))
	require.Equal(t, int64(132233522), span)
	require.Equal(t, int64(25258144), free)
	require.Equal(t, 132233.522, rr.Metrics[analysis.MetricDeviceWindowUs])
	require.Equal(t, 25258.144, rr.Metrics[analysis.MetricFreeUs])
	require.Equal(t, 8903.431, rr.Metrics[analysis.MetricComputingUs])
	require.Equal(t, 102108.1, rr.Metrics[analysis.MetricCommunicationUs])
	require.Empty(t, warningsWith(rr, ownOverlapWarning))
}

// A DB whose OVERLAP_ANALYSIS spans the device tasks around the kernels
// (the CANN 8.5 writer) but whose profiler_info names an older CANN:
// npuprof's recomputation by the older rule (the kernel span) differs by
// more than 0.1%, and a warning says so; the window and free time are the
// table's, to the ns.
func TestWindowOfTheDBWarnsWhenTheRuleDiffers(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 1, 2, 2
	sc.CANNVersion = "8.5.0"
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutTorchNPUDB)
	infos, err := filepath.Glob(filepath.Join(dir, truth.Ranks[0].Dir, "profiler_info*.json"))
	require.NoError(t, err)
	require.Len(t, infos, 1)
	b, err := os.ReadFile(infos[0])
	require.NoError(t, err)
	require.Contains(t, string(b), `"8.5.0"`)
	require.NoError(t, os.WriteFile(infos[0], []byte(strings.Replace(string(b), `"8.5.0"`, `"8.3.RC1"`, 1)), 0o644))
	rr := oneRank(t, dir)
	dbs, err := filepath.Glob(filepath.Join(dir, truth.Ranks[0].Dir, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_*.db"))
	require.NoError(t, err)
	require.Len(t, dbs, 1)
	span, free := dbOverlap(t, dbs[0])
	require.Equal(t, float64(span)/1000, rr.Metrics[analysis.MetricDeviceWindowUs])
	require.Equal(t, float64(free)/1000, rr.Metrics[analysis.MetricFreeUs])
	ws := warningsWith(rr, ownOverlapWarning)
	require.Len(t, ws, 1)
	require.Contains(t, ws[0], "before CANN 8.5")
}
