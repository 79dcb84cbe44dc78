package pipeline_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// chromeLacks are the truth metrics a Kineto Chrome trace cannot give:
// EVENT_WAIT tasks, the groups (no profiler_metadata.json), the decode
// batch (kernel_details.csv's input shapes) and the kernels' Model ID
// (graph.kernels.share) and the HCCL plane tasks are not in it.
func chromeLacks(k string) bool {
	return strings.HasPrefix(k, "event_wait.") || strings.HasPrefix(k, "hccl.group.") || strings.HasPrefix(k, "hccl.plane.") || k == "decode.batch.observed" || k == analysis.MetricGraphKernelsShare
}

// torch.profiler's Kineto Chrome trace (one *.pt.trace.json per rank in one
// folder) is read with the same metrics: every truth metric the trace can
// give, equal within 1e-6, the steps equal to the truth's, the device and
// rank from the trace; what it cannot give says why.
func TestChromeTraceLayout(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	sc.Ranks, sc.Layers, sc.Steps = 2, 2, 2
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutTorchNPUChrome)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 2)
	for i, rr := range res.Ranks {
		rt := truth.Ranks[i]
		require.Equal(t, model.FormatTorchNPUChrome, rr.Format)
		require.Equal(t, rt.Rank, rr.Rank)
		require.Equal(t, i, rr.Device, "the generator puts rank r on device r")
		require.Equal(t, rt.Dir, rr.Sources.Get(analysis.KeyDevice))
		compared := 0
		for k, v := range rt.Metrics {
			if chromeLacks(k) {
				require.NotContains(t, rr.Metrics, k)
				continue
			}
			require.Contains(t, rr.Metrics, k, "rank %d", i)
			within(t, v, rr.Metrics[k], 1e-6, k)
			require.Equal(t, rt.Dir, rr.Sources.Get(k), k)
			compared++
		}
		require.Greater(t, compared, 20)
		require.Contains(t, rr.Unavailable[analysis.MetricEventWaitUs], "Kineto trace")
		steps := analysis.StepsOf(rr)
		require.Len(t, steps, len(rt.Steps))
		for j, st := range rt.Steps {
			require.Equal(t, st.Step, steps[j].Step)
			within(t, st.FreeUs, float64(steps[j].Free)/1000, 1e-6, "step free")
			within(t, st.ComputingUs, float64(steps[j].Computing)/1000, 1e-6, "step computing")
		}
	}
	require.Equal(t, []int{0, 1}, res.Cluster.RanksUsed["collectives.matched"])
	require.Greater(t, res.Cluster.Metrics["collectives.matched"], 0.0)
}

// gzipFile writes data gzip-compressed to dir/name and returns its path.
func gzipFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(data))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
	return p
}

// A gzip-compressed Kineto trace is read like a plain one: a CPU-only one
// gives its rank (distributedInfo) and says why the device is missing; a
// CUDA one, named alone, is refused with a usage error (exit 2) that
// names the file and what was expected.
func TestChromeTraceGzipNotNPU(t *testing.T) {
	dir := t.TempDir()
	head := `{"schemaVersion": 1, "deviceProperties": [%s], "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": 8}, "baseTimeNanoseconds": 1719853884000000000, "traceEvents": [
{"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "python3"}},
{"ph": "M", "name": "process_labels", "pid": 7, "tid": 0, "args": {"labels": "CPU"}},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1212076812889.310, "dur": 2.503}%s
]}`
	cpu := gzipFile(t, dir, "cpu.pt.trace.json.gz", fmt.Sprintf(head, "", 5, ""))
	res, err := pipeline.Analyze(context.Background(), cpu, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 1)
	rr := res.Ranks[0]
	require.Equal(t, 5, rr.Rank)
	require.Equal(t, model.FormatTorchNPUChrome, rr.Format)
	require.Contains(t, rr.Unavailable[analysis.MetricDeviceWindowUs], `without an "NPU" device process`)
	gpu := gzipFile(t, dir, "gpu.pt.trace.json.gz", fmt.Sprintf(head, `{"id": 0, "name": "NVIDIA H100"}`, 0, `,
{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3"}},
{"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
{"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 1212076812890.000, "dur": 1.5, "args": {"device": 0, "stream": 7}}`))
	_, err = pipeline.Analyze(context.Background(), gpu, pipeline.Options{})
	require.Error(t, err)
	require.True(t, errkind.Is(err, errkind.Usage), "%v", err)
	require.ErrorContains(t, err, gpu+`: not an Ascend NPU trace: a torch.profiler (Kineto) trace of another accelerator (process labelled "GPU 0", deviceProperties "NVIDIA H100")`)
}

// The excerpt of a real torch_npu Kineto trace (internal/parser/traceview/testdata/kineto),
// plain and gzip-compressed, gives the metrics computed from it
// independently (Python, decimal µs to integer ns): the window from the
// first kernel's start to the last one's end, 2057.961 µs; the 24 kernels'
// busy time, 194.144 µs (they do not overlap: one stream); free the rest;
// and no Model ID to measure graph replay with.
func TestChromeTraceRealExcerpt(t *testing.T) {
	data, err := os.ReadFile("../parser/traceview/testdata/kineto/msprof_3466812.excerpt.pt.trace.json")
	require.NoError(t, err)
	dir := t.TempDir()
	plain := filepath.Join(dir, "msprof_3466812.excerpt.pt.trace.json")
	require.NoError(t, os.WriteFile(plain, data, 0o644))
	for _, p := range []string{plain, gzipFile(t, dir, "gz.pt.trace.json.gz", string(data))} {
		res, err := pipeline.Analyze(context.Background(), p, pipeline.Options{})
		require.NoError(t, err)
		require.Len(t, res.Ranks, 1)
		rr := res.Ranks[0]
		require.Equal(t, model.FormatTorchNPUChrome, rr.Format, p)
		require.Equal(t, 0, rr.Device, p)
		m := rr.Metrics
		require.InDelta(t, 2057.961, m[analysis.MetricDeviceWindowUs], 1e-9, p)
		require.InDelta(t, 194.144, m[analysis.MetricComputingUs], 1e-9, p)
		require.InDelta(t, 1863.817, m[analysis.MetricFreeUs], 1e-9, p)
		require.InDelta(t, 194.144, m[analysis.MetricKernelComputeUs], 1e-9, p)
		require.Equal(t, 24.0, m[analysis.MetricKernelComputeCount], p)
		require.NotContains(t, m, analysis.MetricGraphKernelsShare)
		require.Contains(t, rr.Unavailable[analysis.MetricGraphKernelsShare], "Kineto trace (torch.profiler): its kernels carry no Model ID")
		require.Contains(t, res.Notes, p+": rank unknown (a Kineto trace whose header has no distributedInfo.rank); reported as rank 0")
	}
}
