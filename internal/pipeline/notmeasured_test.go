package pipeline

import (
	"bufio"
	"context"
	"encoding/csv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// Zeros for what was not measured (issue 31), on files derived at run
// time from the generator's capture and a real sample (copied to a
// temporary folder, never committed).

// copyTree copies the regular files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// summaryRanks are a generated summaries-only rank and the real level1
// sample's rank, each copied, without its trace_view.json: the rank
// folder and its output folder.
func summaryRanks(t *testing.T) map[string][2]string {
	ranks := map[string][2]string{}
	s := testutil.Tiny()
	s.Ranks, s.CommJSON = 1, true
	dir, _ := testutil.GenerateLayout(t, s, tracegen.LayoutTorchNPUText)
	gen := onlyRank(t, dir)
	ranks["tracegen"] = [2]string{gen, filepath.Join(gen, tracegen.OutputDir)}
	sample := filepath.Join(testutil.SamplesDir(t), "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	cp := filepath.Join(t.TempDir(), "rank0_ascend_pt")
	copyTree(t, sample, cp)
	ranks["sample"] = [2]string{cp, filepath.Join(cp, tracegen.OutputDir)}
	for _, r := range ranks {
		require.NoError(t, os.Remove(filepath.Join(r[1], "trace_view.json")))
	}
	return ranks
}

// headerOnly keeps the first line of the file.
func headerOnly(t *testing.T, p string) {
	f, err := os.Open(p)
	require.NoError(t, err)
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(line), 0o644))
}

// A kernel_details.csv holding only its header measured nothing: the
// kernel and collective metrics are unavailable with a reason naming it,
// never 0. A file beside it that does measure them still gives them
// (communication.json the collectives, op_statistic.csv the kernels).
func TestHeaderOnlyKernelDetailsIsNotMeasured(t *testing.T) {
	metrics := []string{analysis.MetricKernelComputeCount, analysis.MetricKernelComputeUs, analysis.MetricHCCLTotalCount, analysis.MetricHCCLTotalUs}
	for name, r := range summaryRanks(t) {
		kd := filepath.Join(r[1], "kernel_details.csv")
		// the same rank without kernel_details.csv: what the files beside
		// it measure
		orig, err := os.ReadFile(kd)
		require.NoError(t, err)
		require.NoError(t, os.Remove(kd))
		without := analyzeOne(t, r[0])
		require.NoError(t, os.WriteFile(kd, orig, 0o644))
		headerOnly(t, kd)
		got := analyzeOne(t, r[0])
		require.False(t, got.Partial, name)
		for _, m := range metrics {
			if v, ok := without.Metrics[m]; ok {
				require.Equal(t, v, got.Metrics[m], "%s: %s comes from the file beside it", name, m)
				continue
			}
			_, measured := got.Metrics[m]
			require.False(t, measured, "%s: %s = %v", name, m, got.Metrics[m])
			require.Contains(t, got.Unavailable[m], kd+" holds only its header", "%s: %s", name, m)
		}
		// without those files, nothing of the four is measured
		for _, f := range []string{"communication.json", "op_statistic.csv"} {
			os.Remove(filepath.Join(r[1], f))
		}
		got = analyzeOne(t, r[0])
		for _, m := range metrics {
			_, measured := got.Metrics[m]
			require.False(t, measured, "%s: %s = %v", name, m, got.Metrics[m])
			require.Contains(t, got.Unavailable[m], kd+" holds only its header: no kernel or collective row", "%s: %s", name, m)
		}
		require.Contains(t, got.Unavailable[analysis.MetricKernelAICPUCount], kd, name)
	}
}

// A step_trace_time.csv without an Overlapped column (on a rank where it
// gives the overlap metrics: no timeline, no kernel_details.csv) did not
// measure the
// overlapped time: overlap.overlapped.time_us and steps.overlapped_us are
// unavailable naming the file, never 0; the other overlap metrics are
// unchanged and the rank is not partial (Communication cannot be checked
// against a missing column, which is no disagreement).
func TestStepTraceWithoutOverlappedIsNotMeasured(t *testing.T) {
	for name, r := range summaryRanks(t) {
		st := filepath.Join(r[1], "step_trace_time.csv")
		// without kernels, the overlap metrics come from step_trace_time.csv
		require.NoError(t, os.Remove(filepath.Join(r[1], "kernel_details.csv")))
		base := analyzeOne(t, r[0])
		require.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", base.Sources.Get(analysis.MetricOverlappedUs), name)
		require.Contains(t, base.Metrics, analysis.MetricOverlappedUs, name)
		f, err := os.Open(st)
		require.NoError(t, err)
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err)
		i := slices.Index(rows[0], "Overlapped")
		require.GreaterOrEqual(t, i, 0, name)
		var b strings.Builder
		w := csv.NewWriter(&b)
		for _, row := range rows {
			require.NoError(t, w.Write(slices.Delete(slices.Clone(row), i, i+1)))
		}
		w.Flush()
		require.NoError(t, os.WriteFile(st, []byte(b.String()), 0o644))
		got := analyzeOne(t, r[0])
		require.False(t, got.Partial, "%s: %s", name, got.PartialReason)
		_, measured := got.Metrics[analysis.MetricOverlappedUs]
		require.False(t, measured, name)
		why := st + " has no Overlapped value (no Overlapped column, or every value empty or NULL): the overlapped time was not measured"
		require.Equal(t, why, got.Unavailable[analysis.MetricOverlappedUs], name)
		require.Equal(t, why, got.Unavailable["steps.overlapped_us"], name)
		for _, m := range []string{analysis.MetricComputingUs, analysis.MetricCommunicationUs, analysis.MetricCommNotOverlappedUs, analysis.MetricFreeUs} {
			require.Equal(t, base.Metrics[m], got.Metrics[m], "%s: %s", name, m)
		}
		steps := analysis.StepsOf(got)
		require.NotEmpty(t, steps, name)
		for _, s := range steps {
			require.Equal(t, why, s.OverlappedUnavailable, name)
		}
		// the same through a Parquet export read back
		exp := filepath.Join(t.TempDir(), "export")
		_, err = Export(context.Background(), r[0], exp, ExportOptions{Workers: 1})
		require.NoError(t, err, name)
		back := analyzeOne(t, exp)
		_, measured = back.Metrics[analysis.MetricOverlappedUs]
		require.False(t, measured, "%s: read back from the export", name)
		require.Contains(t, back.Unavailable[analysis.MetricOverlappedUs], "has no Overlapped value", name)
		require.Equal(t, got.Metrics[analysis.MetricCommunicationUs], back.Metrics[analysis.MetricCommunicationUs], name)
	}
}

// A step_trace_time.csv holding only its header measured no step: a
// warning names it (not zero steps).
func TestHeaderOnlyStepTraceIsWarned(t *testing.T) {
	for name, r := range summaryRanks(t) {
		st := filepath.Join(r[1], "step_trace_time.csv")
		headerOnly(t, st)
		got := analyzeOne(t, r[0])
		found := false
		for _, w := range got.Warnings {
			found = found || (w.File == st && strings.Contains(w.Message, "holds only its header: no step row, so no step was measured from it"))
		}
		require.True(t, found, "%s: %+v", name, got.Warnings)
	}
}
