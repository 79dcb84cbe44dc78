package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results/assemble"
)

// The HTML report of a 16-rank run (what `npuprof report` and `analyze
// --html` do: pipeline.Analyze, then render.WriteHTML) holds at most `workers`
// models at once, and none once the analysis returned: the report's mini
// timelines, MoE layer charts and longest waits are drawn from results.
// Weak pointers to each model (and to its task array, the bulk of it) tell
// which models are still reachable after a GC.
func TestHTMLReportHoldsAtMostWorkersModels(t *testing.T) {
	dir, _ := pipeline.SlowCluster(t, 3, 3)
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			var mu sync.Mutex
			var ranks []weak.Pointer[model.Rank]
			var tasks []weak.Pointer[model.DeviceTask]
			alive := func() int {
				n := 0
				for i := range ranks {
					if ranks[i].Value() != nil || tasks[i].Value() != nil {
						n++
					}
				}
				return n
			}
			most := 0
			restore := pipeline.SetModelHook(func(r *model.Rank) {
				mu.Lock()
				defer mu.Unlock()
				require.NotEmpty(t, r.Tasks)
				ranks = append(ranks, weak.Make(r))
				tasks = append(tasks, weak.Make(&r.Tasks[0]))
				// a goroutine stopped at an unsafe point (asynchronous
				// preemption) has its frame scanned conservatively, which
				// can keep a model it is done with for one more cycle:
				// count again after another GC before calling it alive
				n := workers + 1
				for try := 0; try < 3 && n > workers; try++ {
					runtime.GC()
					n = alive()
				}
				most = max(most, n)
			})
			res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{Workers: workers, TimelineSample: true})
			restore()
			require.NoError(t, err)
			require.Len(t, ranks, 16)
			require.GreaterOrEqual(t, most, 1, "the hook sees a live model")
			require.LessOrEqual(t, most, workers, "models alive at once")
			runtime.GC()
			require.Zero(t, alive(), "the results hold no model")

			var buf bytes.Buffer
			require.NoError(t, render.WriteHTML(&buf, assemble.Doc(res, nil)))
			runtime.GC()
			require.Zero(t, alive())
			page := buf.String()
			for _, rr := range res.Ranks {
				require.NotNil(t, analysis.TimelineSampleOf(rr), "rank %d", rr.Rank)
				require.Contains(t, page, fmt.Sprintf(`id="chart-timeline-%d"`, rr.Rank))
			}
			require.Contains(t, page, `id="chart-moe-layers"`)
			require.Contains(t, page, "Longest waits and the op that followed")
			require.Contains(t, page, "rank 11: step ")
			runtime.KeepAlive(res)
		})
	}
}

// TestClusterMemoryBoundedByWorkers through the HTML report (one worker,
// 16 ranks): what the results hold when rendering starts is far less than
// a model per rank, and the report's peak stays under the results plus
// what rendering alone needs (measured on its own) plus a few models:
// keeping every model through rendering would exceed it. Rendering itself
// grows with the ranks drawn, from their results. Runs only with
// NPUPROF_MEMORY_TESTS=1; TestHTMLReportHoldsAtMostWorkersModels is the
// exact check.
func TestClusterMemoryBoundedByWorkersHTML(t *testing.T) {
	if testing.Short() || os.Getenv("NPUPROF_MEMORY_TESTS") == "" {
		t.Skip("memory measurement: set NPUPROF_MEMORY_TESTS=1 to run it")
	}
	// models large enough that twelve of them outweigh the slack
	dir, _ := pipeline.SlowCluster(t, 24, 12)
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	var res *analysis.Result
	var size int
	write := func() any {
		var buf bytes.Buffer
		require.NoError(t, render.WriteHTML(&buf, assemble.Doc(res, nil)))
		size = buf.Len()
		return nil
	}
	report := func() any {
		var err error
		res, err = pipeline.Analyze(context.Background(), dir, pipeline.Options{Workers: 1, TimelineSample: true})
		require.NoError(t, err)
		write()
		return res
	}
	p16, h16 := pipeline.MeasureHeap(report)
	// rendering alone, the results already held: what the report itself
	// needs for 16 ranks (chart options, JSON, the page)
	r16, _ := pipeline.MeasureHeap(write)
	res = nil
	_, k16 := pipeline.MeasureHeap(func() any {
		p, err := gather.Models(context.Background(), dir, gather.Options{Workers: 1, SkipCommunication: true})
		require.NoError(t, err)
		return p
	})
	result := float64(h16) / 16
	model := float64(k16) / 16
	t.Logf("per rank: results %.0f KiB, model %.0f KiB; peak heap above baseline: rendering alone %d KiB (page %d KiB), analysis and report %d KiB (16 ranks, one worker)",
		result/1024, model/1024, r16>>10, size>>10, p16>>10)
	require.Greater(t, model, 64.0*1024, "the measurement can see models")
	require.Less(t, result, 0.5*model, "a rank's results must be far smaller than its model")
	require.Less(t, float64(p16), float64(h16)+float64(r16)+4*model, "the report must not hold the models")
}
