package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
)

// rewrite replaces old with new in the file p (which must hold old).
func rewrite(t *testing.T, p string, old, new string) {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(b), old, p)
	require.NoError(t, os.WriteFile(p, bytes.ReplaceAll(b, []byte(old), []byte(new)), 0o644))
}

// A 4-rank cluster in the shape of the torch_npu 2.7.1 / CANN 8.3 capture
// of the issue, built from the real Level1 ranks: profiler_info with
// "_export_type": ["text"] and "rank_id" a string, step_trace_time.csv's
// 11 columns with a leading Device_id (devices 0, 1, 4, 5),
// kernel_details.csv's collectives with Accelerator Core = COMMUNICATION;
// rank 1 lacks trace_view.json, ranks 2 and 3 hold only the summaries.
// Every rank is measured: its step, its collectives, its device; the
// cross-rank matching says it used ranks 0 and 1.
func TestTorchNPU271Cluster(t *testing.T) {
	dir := t.TempDir()
	devices := []int{0, 1, 4, 5}
	for r := range 4 {
		src := testutil.Sample(t, fmt.Sprintf("Ascend-msinsight/test/data/pytorch/text/level1/rank%d_ascend_pt", r%2))
		rd := filepath.Join(dir, fmt.Sprintf("rank%d_ascend_pt", r))
		var drop []string
		switch r {
		case 1:
			drop = []string{"trace_view.json"}
		case 2, 3:
			drop = []string{"trace_view.json", "kernel_details.csv"}
		}
		copyTree(t, src, rd, drop...)
		info := filepath.Join(rd, fmt.Sprintf("profiler_info_%d.json", r%2))
		rewrite(t, info, `"_export_type": "text"`, `"_export_type": ["text"]`)
		rewrite(t, info, fmt.Sprintf(`"rank_id": %d`, r%2), fmt.Sprintf(`"rank_id": "%d"`, r))
		if r >= 2 {
			require.NoError(t, os.Rename(info, filepath.Join(rd, fmt.Sprintf("profiler_info_%d.json", r))))
		}
		out := filepath.Join(rd, "ASCEND_PROFILER_OUTPUT")
		st := filepath.Join(out, "step_trace_time.csv")
		b, err := os.ReadFile(st)
		require.NoError(t, err)
		lines := bytes.SplitAfter(b, []byte("\n"))
		var nb bytes.Buffer
		for k, l := range lines {
			if len(bytes.TrimSpace(l)) == 0 {
				nb.Write(l)
				continue
			}
			if k == 0 {
				nb.WriteString("Device_id,")
			} else {
				fmt.Fprintf(&nb, "%d,", devices[r])
			}
			nb.Write(l)
		}
		require.NoError(t, os.WriteFile(st, nb.Bytes(), 0o644))
		if r <= 1 {
			rewrite(t, filepath.Join(out, "kernel_details.csv"), ",HCCL,", ",COMMUNICATION,")
		}
	}
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 4)
	for r, rr := range res.Ranks {
		require.Equal(t, r, rr.Rank)
		steps := analysis.StepsOf(rr)
		require.Len(t, steps, 1, "rank %d", r)
		require.Equal(t, 50, steps[0].Step)
		require.Positive(t, rr.Metrics["hccl.total.count"], "rank %d", r)
		require.Positive(t, rr.Metrics["hccl.allreduce.count"], "rank %d", r)
		require.Contains(t, rr.Metrics, "overlap.free.time_us")
		switch r {
		case 0:
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/trace_view.json", rr.Sources.Get("hccl.total.count"))
		case 1:
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/kernel_details.csv", rr.Sources.Get("hccl.total.count"))
		default:
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/communication.json", rr.Sources.Get("hccl.total.count"))
		}
		if r == 0 {
			require.Equal(t, 0, rr.Device, "the trace's device")
		} else {
			require.Equal(t, devices[r], rr.Device)
			require.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", rr.Sources.Get(analysis.KeyDevice))
		}
	}
	require.Equal(t, []int{0, 1}, res.Cluster.RanksUsed["collectives.matched"])
	require.Equal(t, []int{0, 1, 2, 3}, res.Cluster.RanksUsed["skew.computing.max_us"])
}
