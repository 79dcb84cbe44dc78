package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/npuprof/npuprof/parser/model"
	"github.com/stretchr/testify/require"
)

// The timeline merges compute intervals on the fly when tasks are sorted
// and falls back to Union otherwise: both give Union's answer.
func TestTimelineComputeUnion(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		r := model.NewRank("x")
		var iv []Interval
		for i := 0; i < rng.IntN(50); i++ {
			st := int64(rng.IntN(1000))
			d := int64(rng.IntN(60))
			c := model.ClassCompute
			if rng.IntN(4) == 0 {
				c = model.ClassEventWait
			}
			r.Tasks = append(r.Tasks, model.DeviceTask{Start: st, Dur: d, Class: c})
			if c == model.ClassCompute {
				iv = append(iv, Interval{st, st + d})
			}
		}
		r.Have.Timeline = true
		if seed%2 == 0 {
			r.SortTasks()
			iv = iv[:0]
			for _, t := range r.Tasks {
				if t.Class == model.ClassCompute {
					iv = append(iv, Interval{t.Start, t.End()})
				}
			}
		}
		res, _, errs, _ := runRank(r, []*Pass{TimelinePass})
		require.Empty(t, errs)
		tl := res[TimelinePass].(*Timeline)
		want := Union(iv)
		if len(want) == 0 {
			require.Empty(t, tl.Compute, "seed %d", seed)
			continue
		}
		require.Equal(t, want, tl.Compute, "seed %d", seed)
	}
}
