package analysis

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// At least 99% of the compute stream's EVENT_WAITs after a collective are
// paired with the collective tracegen's truth says they waited for.
func TestWaitPairsMatchTruth(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum", "clean", "hot-rank", "captured-batch"} {
		t.Run(name, func(t *testing.T) {
			dir, truth := testutil.Generate(t, testutil.Scenario(t, name))
			p, err := gather.Models(context.Background(), dir, gather.Options{})
			require.NoError(t, err)
			total, right := 0, 0
			for i, rk := range p.Ranks {
				rt := truth.Ranks[i]
				require.Equal(t, rt.Rank, rk.Rank)
				type at struct {
					stream int32
					start  int64
				}
				got := map[at]WaitPair{}
				PairWaits(rk, func(w WaitPair) {
					task := &rk.Tasks[w.Wait]
					got[at{rk.Stream(task), task.Start}] = w
				})
				for _, w := range rt.Waits {
					total++
					g, ok := got[at{int32(w.Stream), w.StartNs}]
					if ok && g.Kind == AwaitCollective && g.Name == w.Awaited {
						right++
					}
				}
			}
			require.Positive(t, total, "the truth lists the waits")
			require.GreaterOrEqualf(t, float64(right), 0.99*float64(total), "%d of %d waits paired with the collective they waited for", right, total)
			t.Logf("%s: %d of %d waits paired with their collective", name, right, total)
		})
	}
}

// The main compute stream's waits for the side stream's kernels
// (event_wait.main_stream.kernel.time_us) equal tracegen's truth on the
// A3 captures: large on rc1 (the side-stream work), the router gate alone
// on rc2; the busy engines' dense compute shrinks at TP8.
func TestMainStreamKernelWaitsMatchTruth(t *testing.T) {
	dense := map[string]float64{}
	for _, sc := range tracegen.FieldReport2() {
		t.Run(sc.Name, func(t *testing.T) {
			truth, _, res := generateAndAnalyze(t, sc)
			for i, rt := range truth.Ranks {
				want, ok := rt.Metrics[tracegen.MetricEventWaitMainStreamKernelUs]
				require.True(t, ok, "rank %d", rt.Rank)
				got, ok := res.Ranks[i].Metrics[MetricEventWaitMainStreamKernelUs]
				require.True(t, ok, "rank %d: %s", rt.Rank, res.Ranks[i].Unavailable[MetricEventWaitMainStreamKernelUs])
				require.Truef(t, closeEnough(want, got), "rank %d: truth %v, npuprof %v", rt.Rank, want, got)
				// the main stream's waits are these and the collectives'
				require.Less(t, got, res.Ranks[i].Metrics[MetricEventWaitMainStreamUs])
				if sc.SideStreamNs > 0 {
					require.Greater(t, got, 0.5*res.Ranks[i].Metrics[MetricEventWaitMainStreamUs])
				} else {
					require.Less(t, got, 0.15*res.Ranks[i].Metrics[MetricEventWaitMainStreamUs])
				}
			}
			d, ok := res.Cluster.Metrics[MetricEnginesBusyDenseUs]
			require.True(t, ok, res.Cluster.Unavailable[MetricEnginesBusyDenseUs])
			require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}[:sc.TP], res.Cluster.RanksUsed[MetricEnginesBusyDenseUs])
			dense[sc.Name] = d
		})
	}
	// the same compute outside MoE on rc1 and rc2 (within the jitter), less
	// at TP8 (the o_proj, lm_head and QKV matmuls per rank shrink)
	require.InEpsilon(t, dense["a3-tp4dp4-rc1"], dense["a3-tp4dp4-rc2"], 0.05)
	require.Less(t, dense["a3-tp8dp2-rc2"], 0.9*dense["a3-tp4dp4-rc2"])
}

// searchFrom finds what sort.Search finds, from any starting guess.
func TestSearchFromIsSearch(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for ans := 0; ans <= n; ans++ {
			f := func(i int) bool { return i >= ans }
			for g := 0; g <= n; g++ {
				if got := searchFrom(n, g, f); got != ans {
					t.Fatalf("searchFrom(%d, %d) = %d, want %d", n, g, got, ans)
				}
			}
		}
	}
}
