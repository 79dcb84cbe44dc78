package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/pipeline"
)

// mindsporeLayout turns a generated torch_npu capture into MindSpore's
// *_ascend_ms layout (docs/formats.md): the folder suffix, the framework
// process named "MindSpore", mindspore_to_npu flows, and the MoE routing
// Cumsum under MindSpore's graph-mode name (scope path, CumSum-opN).
func mindsporeLayout(t *testing.T, dir string, truth *tracegen.Truth) {
	t.Helper()
	for i, rt := range truth.Ranks {
		old := filepath.Join(dir, rt.Dir)
		for _, f := range []string{"trace_view.json", "kernel_details.csv"} {
			p := filepath.Join(old, tracegen.OutputDir, f)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b = bytes.ReplaceAll(b, []byte(`"name": "Python"`), []byte(`"name": "MindSpore"`))
			b = bytes.ReplaceAll(b, []byte(`"torch_to_npu"`), []byte(`"mindspore_to_npu"`))
			b = bytes.ReplaceAll(b, []byte("aclnnCumsum_CumsumAiCpu_Cumsum"), []byte("Default/network/model/moe/CumSum-op17"))
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}
		ms := strings.TrimSuffix(rt.Dir, "_ascend_pt") + "_ascend_ms"
		require.NoError(t, os.Rename(old, filepath.Join(dir, ms)))
		truth.Ranks[i].Dir = ms
	}
}

// MindSpore's *_ascend_ms output is read with the same metrics: every
// metric of the generator's truth, the MoE routing Cumsum under its
// MindSpore name included.
func TestMindSporeLayout(t *testing.T) {
	sc, ok := tracegen.Lookup("ep-fc1-cumsum")
	require.True(t, ok)
	sc.Ranks, sc.Layers, sc.Steps = 2, 2, 1
	dir := t.TempDir()
	truth, err := tracegen.Generate(dir, sc)
	require.NoError(t, err)
	mindsporeLayout(t, dir, truth)
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
	}
}
