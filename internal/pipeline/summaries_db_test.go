package pipeline_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/testutil"
)

// The real DB-export ranks with their ascend_pytorch_profiler_{rank}.db
// removed (the timeline of that export) keep analysis.db: every metric it
// gives equals the full capture's within 0.01%, from analysis.db, and the
// step equals the full capture's. Nothing left names the device.
func TestSummariesDBSamples(t *testing.T) {
	for r := range 2 {
		rel := fmt.Sprintf("Ascend-msinsight/test/data/pytorch/db/level1/rank%d_ascend_pt", r)
		t.Run(filepath.Base(rel), func(t *testing.T) {
			src := testutil.Sample(t, rel)
			full := analyzeOne(t, src).Ranks[0]
			dir := filepath.Join(t.TempDir(), filepath.Base(rel))
			copyTree(t, src, dir, fmt.Sprintf("ascend_pytorch_profiler_%d.db", r))
			got := analyzeOne(t, dir).Ranks[0]
			compared := 0
			for k, v := range got.Metrics {
				want, ok := full.Metrics[k]
				if !ok {
					continue
				}
				compared++
				within(t, want, v, 0.0001, k)
				require.Equal(t, "ASCEND_PROFILER_OUTPUT/analysis.db", got.Sources.Get(k), k)
			}
			for _, k := range []string{"overlap.free.time_us", "overlap.computing.time_us", "device.window.time_us", "hccl.total.time_us", "hccl.total.count"} {
				require.Contains(t, got.Metrics, k)
			}
			require.GreaterOrEqual(t, compared, 5)
			require.Len(t, analysis.StepsOf(got), len(analysis.StepsOf(full)))
			for i, s := range analysis.StepsOf(got) {
				f := analysis.StepsOf(full)[i]
				require.Equal(t, f.Step, s.Step)
				within(t, float64(f.Free), float64(s.Free), 0.0001, "step free")
				within(t, float64(f.Computing), float64(s.Computing), 0.0001, "step computing")
			}
			require.Equal(t, -1, got.Device)
			require.Contains(t, got.Unavailable[analysis.KeyDevice], "no file of the rank names its device")
		})
	}
}
