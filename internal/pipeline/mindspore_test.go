package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// MindSpore's *_ascend_ms output is read with the same metrics: every
// metric of the generator's truth, the MoE routing Cumsum under its
// MindSpore name included.
func TestMindSporeLayout(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum")
	sc.Ranks, sc.Layers, sc.Steps = 2, 2, 1
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutMindSporeText)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 2)
	for i, rr := range res.Ranks {
		require.Equal(t, model.FormatMindSporeText, rr.Format)
		for k, v := range truth.Ranks[i].Metrics {
			require.Contains(t, rr.Metrics, k, "rank %d", i)
			within(t, v, rr.Metrics[k], 1e-6, k)
		}
		require.Greater(t, rr.Metrics["moe.cumsum.count"], 0.0)
		require.True(t, strings.HasSuffix(truth.Ranks[i].Dir, "_ascend_ms"), truth.Ranks[i].Dir)
	}
	// MindSpore's kernel_details.csv (leading Device_id, Step ID) alone
	// gives the kernels and the device
	devices := []int{res.Ranks[0].Device, res.Ranks[1].Device}
	for _, rt := range truth.Ranks {
		require.NoError(t, os.Remove(filepath.Join(dir, rt.Dir, tracegen.OutputDir, "trace_view.json")))
	}
	res, err = pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	for i, rr := range res.Ranks {
		within(t, truth.Ranks[i].Metrics["kernel.compute.time_us"], rr.Metrics["kernel.compute.time_us"], 1e-6, "kernel.compute.time_us")
		require.Equal(t, devices[i], rr.Device)
		require.Equal(t, "ASCEND_PROFILER_OUTPUT/kernel_details.csv", rr.Sources.Get("device"))
	}
}
