package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// oneRank analyzes a one-rank folder.
func oneRank(t *testing.T, dir string) *analysis.RankResult {
	t.Helper()
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 1)
	return res.Ranks[0]
}

// The real Level0 capture's kernel_details.csv writes Accelerator Core
// N/A for every compute kernel, and 117 of the 187 names say neither
// AiCpu nor AiCore (the others name an AiCore implementation): read
// alone, kernel.aicpu.* is unavailable with the reason, never 0. With its
// trace_view.json, whose Task Type names every core, 0 is measured: that
// Task Type is the runtime's host task type (KERNEL_AICPU -> AI_CPU),
// collected at every level; the Level0 and Level1 traces of the same job
// hold the same task types, and the Level1 op_statistic.csv's Core Type
// has no AI_CPU row (TestAICPUFromOpStatistic).
func TestAICPUUnknownAtLevel0(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level0/rank0_ascend_pt")
	rr := oneRank(t, src)
	require.Contains(t, rr.Metrics, analysis.MetricKernelAICPUCount)
	require.Zero(t, rr.Metrics[analysis.MetricKernelAICPUCount])
	require.Equal(t, 187.0, rr.Metrics[analysis.MetricKernelComputeCount])

	dir := t.TempDir()
	copyTree(t, src, dir, "trace_view.json")
	rr = oneRank(t, dir)
	require.Equal(t, 187.0, rr.Metrics[analysis.MetricKernelComputeCount])
	for _, m := range []string{analysis.MetricKernelAICPUCount, analysis.MetricKernelAICPUUs} {
		require.NotContains(t, rr.Metrics, m)
		require.Contains(t, rr.Unavailable[m], "the core of 117 of 187 compute kernels is unknown")
		require.Contains(t, rr.Unavailable[m], "Accelerator Core is N/A")
	}
}

// Where the trace does not name a compute kernel's core, kernel.aicpu.*
// is unavailable, never 0 (issue 30: unknown is unavailable): the real
// Level0 trace rewritten at run time so that its compute kernels have no
// Task Type, or Other as old traces write it, or only its 13 MIX_AIV
// kernels lose it (6 of them are named neither AiCpu nor AiCore; the
// AI_CORE kernels' cores are known, and once made the count a measured
// 0). moe.cumsum.aicpu.* follows the same test (OnAICPU).
func TestAICPUUnknownCoreIsUnavailable(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level0/rank0_ascend_pt")
	b, err := os.ReadFile(filepath.Join(src, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
	require.NoError(t, err)
	compute := regexp.MustCompile(`"Task Type": "(AI_CORE|MIX_AIV)", `)
	mix := regexp.MustCompile(`"Task Type": "MIX_AIV", `)
	for _, c := range []struct {
		name, trace, reason string
	}{
		{"no Task Type", compute.ReplaceAllString(string(b), ""), "the core of 115 of 187 compute kernels is unknown (%s names none: the kernels have no Task Type) and their names do not say AI CPU or AI Core"},
		{"Task Type Other", compute.ReplaceAllString(string(b), `"Task Type": "Other", `), `the core of 115 of 187 compute kernels is unknown (%s names none: the Task Type is "Other")`},
		{"some cores known", mix.ReplaceAllString(string(b), ""), "the core of 6 of 187 compute kernels is unknown (%s names none: the kernels have no Task Type)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NotEqual(t, string(b), c.trace)
			dir := t.TempDir()
			copyTree(t, src, dir, "trace_view.json")
			trace := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
			require.NoError(t, os.WriteFile(trace, []byte(c.trace), 0o644))
			rr := oneRank(t, dir)
			require.Equal(t, 187.0, rr.Metrics[analysis.MetricKernelComputeCount])
			for _, m := range []string{analysis.MetricKernelAICPUCount, analysis.MetricKernelAICPUUs} {
				require.NotContains(t, rr.Metrics, m)
				require.Contains(t, rr.Unavailable[m], fmt.Sprintf(c.reason, trace))
			}
		})
	}
}

// A summaries-only rank takes its AI CPU kernels from op_statistic.csv's
// Core Type: here the real Level1 op_statistic.csv with its Cast row
// rewritten to run on the AI CPU.
func TestAICPUFromOpStatistic(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	dir := t.TempDir()
	copyTree(t, src, dir, "trace_view.json", "kernel_details.csv")
	p := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "op_statistic.csv")
	rr := oneRank(t, dir)
	require.Contains(t, rr.Metrics, analysis.MetricKernelAICPUCount)
	require.Zero(t, rr.Metrics[analysis.MetricKernelAICPUCount])

	b, err := os.ReadFile(p)
	require.NoError(t, err)
	const row = "Cast,AI_VECTOR_CORE,4,5.78,"
	require.Contains(t, string(b), row)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), row, "Cast,AI_CPU,4,5.78,", 1)), 0o644))
	rr = oneRank(t, dir)
	require.Equal(t, 4.0, rr.Metrics[analysis.MetricKernelAICPUCount])
	require.Equal(t, 5.78, rr.Metrics[analysis.MetricKernelAICPUUs])
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/op_statistic.csv", rr.Sources.Get(analysis.MetricKernelAICPUCount))
}

// A summaries-only rank's window is the steps' E2E time; when the steps
// have a pipeline bubble, torch_npu's Stage column (E2E minus Bubble) is
// not that window, and a warning says which is which. The real Level1
// step_trace_time.csv, rewritten at run time with a 1000 µs bubble.
func TestSummariesWindowIsE2E(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	dir := t.TempDir()
	copyTree(t, src, dir, "trace_view.json", "kernel_details.csv")
	rr := oneRank(t, dir)
	require.Equal(t, 136581.009, rr.Metrics[analysis.MetricDeviceWindowUs])
	for _, w := range rr.Warnings {
		require.NotContains(t, w.Message, "E2E")
	}
	p := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	const cells = ",136581.0,0,"
	require.Contains(t, string(b), cells)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), cells, ",135581.009,1000,", 1)), 0o644))
	rr = oneRank(t, dir)
	require.Equal(t, 136581.009, rr.Metrics[analysis.MetricDeviceWindowUs])
	found := false
	for _, w := range rr.Warnings {
		if strings.Contains(w.Message, "is the steps' E2E time") {
			found = true
			require.Contains(t, w.Message, "E2E minus Bubble (1000.000 µs of pipeline bubble), sums to 135581.009 µs")
		}
	}
	require.True(t, found, "%v", rr.Warnings)
}

// msprof's op_statistic_*.csv (a leading Device_id and Model Name) is
// read like torch_npu's op_statistic.csv by a PROF_* folder without a
// timeline or op_summary: the compute totals and, from its Core Type, AI
// CPU. The rows are the real Level1 op_statistic.csv's, rewritten at run
// time in msprof's header with its Cast row on the AI CPU.
func TestAICPUFromMsprofOpStatistic(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv")
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
	var out strings.Builder
	out.WriteString("Device_id,Model Name," + lines[0] + "\n")
	var total float64
	for _, l := range lines[1:] {
		l = strings.Replace(l, "Cast,AI_VECTOR_CORE,", "Cast,AI_CPU,", 1)
		out.WriteString("0,4294967295," + l + "\n")
		f := strings.Split(l, ",")
		v, err := strconv.ParseFloat(f[3], 64)
		require.NoError(t, err)
		total += v
	}
	prof := filepath.Join(t.TempDir(), "PROF_000001_20250109081622431_ABCDEFGHIJKLMNOP")
	outDir := filepath.Join(prof, "mindstudio_profiler_output")
	require.NoError(t, os.MkdirAll(outDir, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(prof, "device_0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outDir, "op_statistic_20250109081630123.csv"), []byte(out.String()), 0o644))
	rr := oneRank(t, prof)
	require.Equal(t, 4.0, rr.Metrics[analysis.MetricKernelAICPUCount])
	require.Equal(t, 5.78, rr.Metrics[analysis.MetricKernelAICPUUs])
	within(t, total, rr.Metrics[analysis.MetricKernelComputeUs], 1e-9, "compute time")
	require.Equal(t, "mindstudio_profiler_output/op_statistic_20250109081630123.csv", rr.Sources.Get(analysis.MetricKernelAICPUCount))
}

// An msprof PROF_* folder without its device_{id} folder and its
// msprof_*.json (task_time_*.csv names no device) takes its device from
// op_summary_*.csv's Device_id.
func TestMsprofDeviceFromOpSummary(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 2, 2, 1
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutMsprofText)
	rt := truth.Ranks[1]
	prof := filepath.Join(dir, rt.Dir)
	rr := oneRank(t, prof)
	dev := rr.Device
	require.Positive(t, dev)
	devs, err := filepath.Glob(filepath.Join(prof, "device_*"))
	require.NoError(t, err)
	require.Len(t, devs, 1)
	require.NoError(t, os.RemoveAll(devs[0]))
	js, err := filepath.Glob(filepath.Join(prof, "mindstudio_profiler_output", "msprof_*.json"))
	require.NoError(t, err)
	require.Len(t, js, 1)
	require.NoError(t, os.Remove(js[0]))
	rr = oneRank(t, prof)
	require.Equal(t, dev, rr.Device)
	require.Contains(t, rr.Sources.Get("device"), "op_summary_")
}
