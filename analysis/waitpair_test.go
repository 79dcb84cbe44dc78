package analysis

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/parser"
)

// At least 99% of the compute stream's EVENT_WAITs after a collective are
// paired with the collective tracegen's truth says they waited for.
func TestWaitPairsMatchTruth(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum", "clean", "hot-rank", "captured-batch"} {
		t.Run(name, func(t *testing.T) {
			dir, truth := testutil.Generate(t, testutil.Scenario(t, name))
			p, err := parser.Load(context.Background(), dir, parser.Options{})
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
					got[at{task.Stream, task.Start}] = w
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
