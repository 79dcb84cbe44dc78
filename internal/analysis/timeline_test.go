package analysis

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
)

// The timeline merges compute intervals on the fly when tasks are sorted
// and falls back to Union otherwise, or keeps only the kernels' indexes
// while none merge: each gives Union's answer, and the same breakdowns.
func TestTimelineComputeUnion(t *testing.T) {
	own, commOwn := 0, 0
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		r := model.NewRank("x")
		var iv []Interval
		// a third of the seeds space the kernels out, so few merge
		gap := 1 + int(seed%3)*30
		for i := 0; i < rng.IntN(50); i++ {
			st := int64(rng.IntN(1000 * gap))
			d := int64(rng.IntN(60))
			c := model.ClassCompute
			if rng.IntN(4) == 0 {
				c = model.ClassEventWait
			}
			r.Tasks = append(r.Tasks, r.NewTask(st, d, model.TaskExtra{Class: c}))
			if c == model.ClassCompute {
				iv = append(iv, Interval{st, st + d})
			}
		}
		for i := 0; i < rng.IntN(6); i++ {
			r.HCCL = append(r.HCCL, model.HCCLOp{Start: int64(rng.IntN(1000 * gap)), Dur: int64(rng.IntN(300))})
		}
		if seed%4 < 2 {
			// readers leave the collectives in start order
			slices.SortFunc(r.HCCL, func(a, b model.HCCLOp) int { return cmp.Compare(a.Start, b.Start) })
			if n := len(r.HCCL); seed%8 == 0 && n >= 2 && r.HCCL[n-2].End() > r.HCCL[n-1].Start {
				// the last starts as the one before ends: they merge
				r.HCCL[n-1].Start = r.HCCL[n-2].End()
			}
		}
		var comm []Interval
		for _, h := range r.HCCL {
			comm = append(comm, Interval{h.Start, h.End()})
		}
		r.Have.Timeline, r.Have.HCCL = true, true
		if seed%2 == 0 {
			r.SortTasks()
			iv = iv[:0]
			for _, t := range r.Tasks {
				if r.Class(&t) == model.ClassCompute {
					iv = append(iv, Interval{t.Start, r.End(&t)})
				}
			}
		}
		res, _, errs, _ := runRank(r, []*Pass{TimelinePass})
		require.Empty(t, errs)
		tl := res.of(TimelinePass).(*Timeline)
		wantComm, gotComm := Union(comm), tl.Comm
		if tl.commOwn {
			commOwn++
			require.True(t, tl.computeOwn)
			require.Nil(t, tl.Comm, "seed %d", seed)
			for _, h := range r.HCCL {
				gotComm = append(gotComm, Interval{h.Start, h.End()})
			}
		}
		require.Equal(t, wantComm, gotComm, "seed %d", seed)
		want := Union(iv)
		got := tl.Compute
		if tl.computeOwn {
			own++
			require.Nil(t, tl.Compute, "seed %d", seed)
			for _, i := range tl.ComputeTasks {
				got = append(got, Interval{r.Tasks[i].Start, r.End(&r.Tasks[i])})
			}
		}
		if len(want) == 0 {
			require.Empty(t, got, "seed %d", seed)
			continue
		}
		require.Equal(t, want, got, "seed %d", seed)
		for range 20 {
			lo := int64(rng.IntN(1100*gap)) - 50
			hi := lo + int64(rng.IntN(500*gap))
			require.Equal(t, breakdown(want, wantComm, lo, hi), tl.breakdownIn(r, lo, hi), "seed %d [%d, %d)", seed, lo, hi)
		}
	}
	// both ways were taken
	require.Greater(t, own, 20)
	require.Less(t, own, 280)
	require.Greater(t, commOwn, 10)
	require.Less(t, commOwn, own)
}

// An empty per-step breakdown says why.
func TestNoStepsSaysWhy(t *testing.T) {
	// the demo scenario has no ProfilerStep#N
	res := analyzeScenario(t, "ep-fc1-cumsum")
	for _, rr := range res.Ranks {
		require.Empty(t, StepsOf(rr))
		require.Contains(t, rr.Unavailable["steps"], "no ProfilerStep#N ranges", "rank %d", rr.Rank)
	}
	res = analyzeScenario(t, "ep-fc1-cumsum-steps")
	for _, rr := range res.Ranks {
		require.NotEmpty(t, StepsOf(rr))
		require.NotContains(t, rr.Unavailable, "steps", "rank %d", rr.Rank)
	}
}

func analyzeScenario(t *testing.T, name string) *Result {
	t.Helper()
	sc := testutil.Scenario(t, name)
	sc.Ranks = 2
	dir, _ := testutil.Generate(t, sc)
	return analyzeDir(t, dir)
}

// placeOps gives each layer gap the collectives that start in it, in the
// ops' order, as a search per op appending to its gap would.
func TestPlaceOps(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		r := model.NewRank("x")
		var gaps []LayerGap
		at := int64(rng.IntN(100))
		for range rng.IntN(20) {
			next := at + 1 + int64(rng.IntN(100))
			gaps = append(gaps, LayerGap{Start: at, End: next})
			at = next
		}
		for range rng.IntN(60) {
			r.HCCL = append(r.HCCL, model.HCCLOp{Start: int64(rng.IntN(int(at) + 200))})
		}
		want := make([][]int32, len(gaps))
		for i, h := range r.HCCL {
			for g := range gaps {
				if h.Start >= gaps[g].Start && h.Start < gaps[g].End {
					want[g] = append(want[g], int32(i))
				}
			}
		}
		placeOps(r, gaps)
		for g := range gaps {
			require.Equal(t, want[g], gaps[g].Ops, "seed %d gap %d", seed, g)
		}
	}
}

// The MoE layers' kernels, grouped in one array, are each layer's in the
// order they were met, as appending to a slice per layer kept them.
func TestLayerKernels(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := rng.IntN(30)
		want := make([][]int32, n)
		var ks []layerKernel
		for i := range rng.IntN(100) {
			if n == 0 {
				break
			}
			l := rng.IntN(n)
			want[l] = append(want[l], int32(i))
			ks = append(ks, layerKernel{int32(l), int32(i)})
		}
		k := newLayerKernels(n, ks)
		for l := range n {
			require.Equal(t, want[l], k.of(l), "seed %d layer %d", seed, l)
		}
	}
}
