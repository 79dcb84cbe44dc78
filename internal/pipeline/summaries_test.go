package pipeline_test

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// usToNs is a summary's float µs as int64 ns (as the passes round it).
func usToNs(us float64) int64 { return int64(math.Round(us * 1000)) }

func within(t *testing.T, want, got, rel float64, msg string) {
	t.Helper()
	require.LessOrEqualf(t, math.Abs(got-want), rel*math.Abs(want), "%s: want %v got %v", msg, want, got)
}

// copyTree copies the folder src to dst, leaving out the files named in
// drop (base names).
func copyTree(t *testing.T, src, dst string, drop ...string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		for _, n := range drop {
			if d.Name() == n {
				return nil
			}
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		o, err := os.Create(out)
		if err != nil {
			return err
		}
		_, err = io.Copy(o, in)
		if cerr := o.Close(); err == nil {
			err = cerr
		}
		return err
	})
	require.NoError(t, err)
}

func analyzeOne(t *testing.T, dir string) *analysis.Result {
	t.Helper()
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 1)
	return res
}

var textSamples = []string{
	"Ascend-msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
	"Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
	"Ascend-msinsight/test/data/pytorch/text/level1/rank1_ascend_pt",
	"Ascend-msinsight/test/data/pytorch/text/level2/rank0_ascend_pt",
}

// Every metric a capture with trace_view.json (or kernel_details.csv, or
// both) removed still gives equals the full capture's within 0.01%, and
// its source names a file that was left.
func TestSummariesGiveFullCaptureValues(t *testing.T) {
	for _, rel := range textSamples {
		src := testutil.Sample(t, rel)
		full := analyzeOne(t, src).Ranks[0]
		for _, drop := range [][]string{{"trace_view.json"}, {"kernel_details.csv"}, {"trace_view.json", "kernel_details.csv"}} {
			t.Run(filepath.Base(filepath.Dir(rel))+"/"+filepath.Base(rel)+"/-"+strings.Join(drop, ",-"), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), filepath.Base(rel))
				copyTree(t, src, dir, drop...)
				got := analyzeOne(t, dir).Ranks[0]
				require.NotEmpty(t, got.Metrics)
				compared := 0
				for k, v := range got.Metrics {
					want, ok := full.Metrics[k]
					if !ok {
						continue
					}
					compared++
					within(t, want, v, 0.0001, k)
					f := got.Sources.Get(k)
					require.NotEmpty(t, f, "source of %s", k)
					for _, d := range drop {
						require.NotContains(t, f, d, "source of %s", k)
					}
					_, err := os.Stat(filepath.Join(dir, f))
					require.NoError(t, err, "source of %s", k)
				}
				require.Greater(t, compared, 0)
				for _, k := range []string{"overlap.computing.time_us", "device.window.time_us", "kernel.compute.time_us"} {
					_, err := os.Stat(filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "op_statistic.csv"))
					if _, ok := full.Metrics[k]; ok && (k != "kernel.compute.time_us" || err == nil || !slicesHas(drop, "kernel_details.csv")) {
						require.Contains(t, got.Metrics, k)
					}
				}
				_, err := os.Stat(filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "communication.json"))
				if _, ok := full.Metrics["hccl.total.time_us"]; ok && (err == nil || len(drop) < 2) {
					require.Contains(t, got.Metrics, "hccl.total.time_us")
				}
				require.Len(t, analysis.StepsOf(got), len(analysis.StepsOf(full)))
				for i, s := range analysis.StepsOf(got) {
					require.Equal(t, analysis.StepsOf(full)[i].Step, s.Step)
					within(t, float64(analysis.StepsOf(full)[i].Computing), float64(s.Computing), 0.0001, "step computing")
				}
				checkDevice(t, dir, full, got)
				for _, w := range got.Warnings {
					require.NotContains(t, w.Message, "the collectives", "kernel_details.csv and communication.json agree")
				}
				if slicesHas(drop, "trace_view.json") && full.Sources.Get("overlap.free.time_us") != "" && strings.Contains(full.Sources.Get("overlap.free.time_us"), "trace_view") {
					// timeline-only metrics say why
					require.Contains(t, got.Unavailable["event_wait.time_us"], "trace_view.json")
				}
			})
		}
	}
}

// checkDevice: a rank whose remaining files name its device has the full
// capture's, with the file as its source; else device is unavailable with
// the reason.
func checkDevice(t *testing.T, dir string, full, got *analysis.RankResult) {
	t.Helper()
	if got.Device < 0 {
		require.Contains(t, got.Unavailable[analysis.KeyDevice], "no file of the rank names its device")
		for _, f := range []string{"npu_module_mem.csv", "memory_record.csv"} {
			_, err := os.Stat(filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", f))
			require.Error(t, err, "%s names the device", f)
		}
		return
	}
	if full.Device >= 0 {
		require.Equal(t, full.Device, got.Device)
	}
	f := got.Sources.Get(analysis.KeyDevice)
	require.NotEmpty(t, f)
	_, err := os.Stat(filepath.Join(dir, f))
	require.NoError(t, err, "source of device")
}

func slicesHas(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Without a timeline the steps are step_trace_time.csv's rows and hccl.*
// are communication.json's collectives, exactly.
func TestSummariesOnlyRank(t *testing.T) {
	rel := "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
	src := testutil.Sample(t, rel)
	dir := filepath.Join(t.TempDir(), filepath.Base(rel))
	copyTree(t, src, dir, "trace_view.json", "kernel_details.csv")
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	m := p.Ranks[0]
	require.Len(t, m.StepTrace, 1)
	require.NotEmpty(t, m.Communication)
	rr := analyzeOne(t, dir).Ranks[0]
	require.Len(t, analysis.StepsOf(rr), 1)
	s := analysis.StepsOf(rr)[0]
	row := m.StepTrace[0]
	require.Equal(t, 50, s.Step)
	require.Equal(t, usToNs(row.Computing), s.Computing)
	require.Equal(t, usToNs(row.Communication), s.Communication)
	require.Equal(t, usToNs(row.CommunicationNotOverlapped), s.CommunicationNotOverlapped)
	require.Equal(t, usToNs(row.Overlapped), s.Overlapped)
	require.Equal(t, usToNs(row.Free), s.Free)
	require.Equal(t, usToNs(17902.5), s.Preparing)
	require.Equal(t, -1, s.Tasks)
	var elapse float64
	for _, c := range m.Communication {
		elapse += c.ElapseMs
	}
	within(t, elapse*1000, rr.Metrics["hccl.total.time_us"], 1e-8, "hccl.total.time_us")
	require.Equal(t, float64(len(m.Communication)), rr.Metrics["hccl.total.count"])
	require.Equal(t, 4.0, rr.Metrics["hccl.allreduce.count"])
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/communication.json", rr.Sources.Get("hccl.total.time_us"))
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", rr.Sources.Get("overlap.free.time_us"))
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", rr.Sources.Get("steps"))
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/op_statistic.csv", rr.Sources.Get("kernel.compute.time_us"))
	// op_statistic.csv's own totals
	within(t, 8873.751, rr.Metrics["kernel.compute.time_us"], 1e-9, "kernel.compute.time_us")
	require.Equal(t, 187.0, rr.Metrics["kernel.compute.count"])
	// timeline-only metrics stay unavailable with the reason
	require.Contains(t, rr.Unavailable["event_wait.time_us"], "trace_view.json")
	require.Contains(t, rr.Unavailable["moe.routing.time_us"], "kernel_details.csv")
}

// A text rank holding only analysis.db (and the metadata) takes its steps
// from StepTraceTime and its collectives from CommAnalyzerTime.
func TestAnalysisDBOnlyRank(t *testing.T) {
	db := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/db/level1/rank1_ascend_pt")
	ref, err := gather.Models(context.Background(), db, gather.Options{})
	require.NoError(t, err)
	want := ref.Ranks[0]
	require.NotEmpty(t, want.StepTrace)
	require.NotEmpty(t, want.Communication)
	dir := filepath.Join(t.TempDir(), "rank1_ascend_pt")
	copyTree(t, testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank1_ascend_pt"), dir,
		"trace_view.json", "kernel_details.csv", "step_trace_time.csv", "communication.json")
	in, err := os.ReadFile(filepath.Join(db, "ASCEND_PROFILER_OUTPUT", "analysis.db"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "analysis.db"), in, 0o644))
	rr := analyzeOne(t, dir).Ranks[0]
	require.Len(t, analysis.StepsOf(rr), len(want.StepTrace))
	require.Equal(t, usToNs(want.StepTrace[0].Free), analysis.StepsOf(rr)[0].Free)
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/analysis.db", rr.Sources.Get("steps"))
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/analysis.db", rr.Sources.Get("hccl.total.count"))
	require.Equal(t, float64(len(want.Communication)), rr.Metrics["hccl.total.count"])
}

// A cluster in which half of the ranks are summaries-only: every rank is
// measured, the summaries-only ranks from step_trace_time.csv and
// communication.json, and the cross-rank metrics say which ranks they used.
func TestClusterHalfSummariesOnly(t *testing.T) {
	sc, ok := tracegen.Lookup("clean-steps")
	require.True(t, ok)
	sc.Ranks, sc.Layers, sc.Steps = 4, 2, 1
	dir := t.TempDir()
	// every odd rank summaries-only
	truth, err := tracegen.GenerateLayout(dir, sc, tracegen.LayoutSummariesHalf)
	require.NoError(t, err)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 4)
	for i, rr := range res.Ranks {
		want := truth.Ranks[i].Metrics
		for _, k := range []string{"overlap.computing.time_us", "overlap.communication.time_us", "overlap.free.time_us",
			"overlap.communication_not_overlapped.time_us", "device.window.time_us", "hccl.total.time_us", "hccl.total.count"} {
			require.Contains(t, rr.Metrics, k, "rank %d", rr.Rank)
			require.InDelta(t, want[k], rr.Metrics[k], 0.0015, "rank %d %s", rr.Rank, k)
		}
		require.Len(t, analysis.StepsOf(rr), 1, "rank %d", rr.Rank)
		if i%2 == 1 {
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", rr.Sources.Get("overlap.free.time_us"))
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/communication.json", rr.Sources.Get("hccl.total.time_us"))
			require.Contains(t, rr.Unavailable, "event_wait.time_us")
		} else {
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/trace_view.json", rr.Sources.Get("overlap.free.time_us"))
		}
	}
	c := res.Cluster
	require.Equal(t, []int{0, 2}, c.RanksUsed["collectives.matched"])
	require.Equal(t, []int{0, 1, 2, 3}, c.RanksUsed["skew.computing.max_us"])
	require.Empty(t, c.NotUsed([]int{0, 1, 2, 3}), "skew used every rank")
}

// A summaries-only rank whose step_trace_time.csv or op_statistic.csv is
// cut short: the metrics computed from the cut file are partial and the
// rank is partial with the file and line in its reason (both were read as
// complete, with no warning when the cut fell inside a row's last cell).
func TestCutSummariesArePartial(t *testing.T) {
	rel := "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
	src := testutil.Sample(t, rel)
	for _, c := range []struct {
		file, metric, other string
		cut                 func([]byte) []byte
	}{
		// inside the only row's last cell: every cell still there
		{"step_trace_time.csv", "overlap.free.time_us", "kernel.compute.time_us", func(b []byte) []byte { return b[:len(b)-2] }},
		// half-way: a row with too few cells, then the end
		{"op_statistic.csv", "kernel.compute.time_us", "overlap.free.time_us", func(b []byte) []byte { return b[:len(b)/2] }},
	} {
		dir := filepath.Join(t.TempDir(), filepath.Base(rel))
		copyTree(t, src, dir, "trace_view.json", "kernel_details.csv")
		p := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", c.file)
		whole := analyzeOne(t, dir).Ranks[0]
		require.False(t, whole.Partial, c.file)
		require.Empty(t, whole.PartialMetrics, c.file)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		cut := c.cut(b)
		require.NoError(t, os.WriteFile(p, cut, 0o644))
		rr := analyzeOne(t, dir).Ranks[0]
		require.True(t, rr.Partial, c.file)
		line := strings.Count(string(cut), "\n") + 1
		require.Contains(t, rr.PartialReason, p+" ends inside line "+strconv.Itoa(line)+", without a newline (cut short?)", c.file)
		require.Contains(t, rr.PartialMetrics, c.metric, c.file)
		require.NotContains(t, rr.PartialMetrics, c.other, "a metric from a whole file is not partial")
		var warned bool
		for _, w := range rr.Warnings {
			warned = warned || w.File == p && strings.Contains(w.Message, "the file ends inside line "+strconv.Itoa(line))
		}
		require.True(t, warned, c.file)
	}
}

// Without a timeline, kernel_details.csv's Step Id gives the steps (each
// from its first row's start to its last row's end) and so the MoE layers
// per step: the same counts as the timeline's ProfilerStep#N.
func TestStepsFromKernelDetailsStepID(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	sc.Ranks, sc.Layers, sc.Steps = 1, 3, 3
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutTorchNPUText)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	full := res.Ranks[0]
	require.Equal(t, 3.0, full.Metrics[analysis.MetricDecodeStepsCount])
	require.NoError(t, os.Remove(filepath.Join(dir, truth.Ranks[0].Dir, tracegen.OutputDir, "trace_view.json")))
	res, err = pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	rr := res.Ranks[0]
	for _, m := range []string{analysis.MetricDecodeStepsCount, analysis.MetricMoELayersCount} {
		require.Contains(t, rr.Metrics, m)
		require.Equal(t, full.Metrics[m], rr.Metrics[m], m)
	}
	require.Len(t, analysis.StepsOf(rr), 3)
}
