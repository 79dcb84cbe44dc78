package eplb

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// RankLoads splits an expert's tokens evenly over its copies, as
// vLLM-Ascend's EplbWorker._compute_imbalance does (unit_hotness =
// hotness / bincount(deployment)).
func TestRankLoads(t *testing.T) {
	tokens := []int64{100, 10, 20, 30}
	// expert 0 twice (ranks 0 and 1), expert 3 once
	loads := RankLoads([][]int{{0, 1}, {0, 2}, {3, 3}}, tokens)
	// a duplicate on one rank counts as two copies, both on that rank
	assert.Equal(t, []float64{60, 70, 30}, loads)
	r, ok := MaxOverMean(loads)
	require.True(t, ok)
	assert.InDelta(t, 70/(160.0/3), r, 1e-12)
	_, ok = MaxOverMean([]float64{0, 0})
	assert.False(t, ok)
}

func TestPredict(t *testing.T) {
	dep := &model.Deployment{Layers: []model.DeploymentLayer{
		{ID: 0, Devices: [][]int{{0, 1}, {2, 3}}},
		{ID: 1, Devices: [][]int{{0, 1}, {2, 3}}},
		{ID: 2, Devices: [][]int{{0, 1}, {2, 3}}},
	}}
	p, err := Predict(dep, [][]int64{{30, 10, 10, 10}, {5, 5, 5, 5}, {0, 0, 0, 0}})
	require.NoError(t, err)
	// layer 0: ranks 40, 20 -> 40/30; layer 1: 1; layer 2: no load
	assert.InDelta(t, 4.0/3, p.PerLayer[0], 1e-12)
	assert.Equal(t, 1.0, p.PerLayer[1])
	assert.True(t, math.IsNaN(p.PerLayer[2]))
	assert.Equal(t, 2, p.Layers)
	assert.InDelta(t, 4.0/3, p.Max, 1e-12)
	assert.InDelta(t, (4.0/3+1)/2, p.Mean, 1e-12)
	assert.Equal(t, 50.0, p.MaxLoad)
	assert.Equal(t, 40.0, p.MeanLoad)
	_, err = Predict(dep, nil)
	assert.Error(t, err)
}

func TestDefaultPlacement(t *testing.T) {
	d, err := DefaultPlacement(10, 4, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}, {8, 9}}, d.Layers[0].Devices)
	// vLLM-Ascend generate_global_placement: [0..E-1, 0..N-1] cut in ranks
	d, err = DefaultPlacement(6, 4, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1}, {2, 3}, {4, 5}, {0, 1}}, d.Layers[1].Devices)
	_, err = DefaultPlacement(6, 4, 1, 1)
	assert.Error(t, err)
}

func TestRedundantRules(t *testing.T) {
	assert.Equal(t, 8, AutoRedundant(128, 8))
	assert.Equal(t, 2, AutoRedundant(4, 2))
	assert.Equal(t, 0, AutoRedundant(128, 1))
	assert.Equal(t, 3, AutoRedundant(3, 3))
	assert.Equal(t, 5, AutoRedundant(7, 4)) // 7+4=11, 7+5=12
	assert.NoError(t, CheckRedundant(128, 8, 8))
	err := CheckRedundant(128, 8, 5)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use 0 or 8")
	assert.Contains(t, CheckRedundant(4, 2, 3).Error(), "use 2 or 4")
	assert.Contains(t, CheckRedundant(4, 2, 6).Error(), "do not fit")
	assert.Error(t, CheckRedundant(0, 2, 0))
	// no overflow near MaxInt64 (experts + redundant wrapped negative)
	assert.Contains(t, CheckRedundant(4, 2, math.MaxInt).Error(), "do not fit")
	assert.Contains(t, CheckRedundant(4, MaxRanks+1, 0).Error(), "above 65536")
	assert.Equal(t, 4, MaxEPSize(4, 0))
	assert.Equal(t, 320, MaxEPSize(256, 320), "an expert map read with the loads may have more ranks than experts")
	assert.Equal(t, MaxRanks, MaxEPSize(1<<20, 0))
	assert.Equal(t, 12, MaxRedundant(4, 4))
}

// makeRoom resolves the one case greedy packing can meet: the only rank
// with a free slot already holds the expert.
func TestMakeRoom(t *testing.T) {
	p := newPacking(2, 2, 3)
	p.put(0, replica{expert: 0, copies: 2, w: 5})
	p.put(1, replica{expert: 1, copies: 1, w: 4})
	p.put(1, replica{expert: 2, copies: 1, w: 1})
	require.Equal(t, -1, p.bestRank(0))
	r, err := p.makeRoom(replica{expert: 0, copies: 2, w: 5})
	require.NoError(t, err)
	assert.Equal(t, 1, r)
	// moving expert 2 (w 1) to rank 0 gives max(6, 4+5=9) = 9; moving
	// expert 1 (w 4) gives max(9, 1+5=6) = 9 too; the first found wins
	p.put(r, replica{expert: 0, copies: 2, w: 5})
	for rr := range 2 {
		assert.Len(t, p.held[rr], 2)
		assert.True(t, p.has[rr][0])
	}
}

// bruteMax returns the smallest possible max rank load over every
// placement of the given copies (each expert at most once per rank,
// slots per rank fixed), by exhaustive search.
func bruteMax(copies []int, tokens []int64, ranks, slots int) float64 {
	var reps []replica
	for e, c := range copies {
		for k := 0; k < c; k++ {
			reps = append(reps, replica{expert: e, copies: c, w: float64(tokens[e]) / float64(c)})
		}
	}
	best := math.Inf(1)
	load := make([]float64, ranks)
	used := make([]int, ranks)
	has := make([]map[int]bool, ranks)
	for r := range has {
		has[r] = map[int]bool{}
	}
	var rec func(i int)
	rec = func(i int) {
		if i == len(reps) {
			m := 0.0
			for _, l := range load {
				m = max(m, l)
			}
			best = min(best, m)
			return
		}
		x := reps[i]
		for r := 0; r < ranks; r++ {
			if used[r] >= slots || has[r][x.expert] {
				continue
			}
			used[r]++
			has[r][x.expert] = true
			load[r] += x.w
			rec(i + 1)
			load[r] -= x.w
			has[r][x.expert] = false
			used[r]--
		}
	}
	rec(0)
	return best
}

// The plan is valid (every expert placed, slots respected, one copy per
// rank) on random skewed loads, never worse than the starting placement,
// and within the LPT bound (4/3) of the best placement of the same copies.
func TestPlanProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 300; trial++ {
		ranks := 1 + rng.IntN(4)
		experts := ranks * (1 + rng.IntN(3))
		redundant := rng.IntN(3) * ranks
		if redundant > experts*(ranks-1) {
			redundant = 0
		}
		tok := make([]int64, experts)
		for e := range tok {
			tok[e] = int64(rng.IntN(100))
			if rng.IntN(4) == 0 {
				tok[e] *= int64(2 + rng.IntN(20)) // hot expert
			}
		}
		d, err := Plan([][]int64{tok}, ranks, redundant, nil)
		require.NoError(t, err, "trial %d", trial)
		slots := (experts + redundant) / ranks
		require.NoError(t, Check(d, experts, ranks, slots), "trial %d", trial)
		after, err := Predict(d, [][]int64{tok})
		require.NoError(t, err)
		base, err := DefaultPlacement(experts, ranks, redundant, 1)
		require.NoError(t, err)
		before, err := Predict(base, [][]int64{tok})
		require.NoError(t, err)
		if after.Layers == 0 {
			continue
		}
		assert.LessOrEqual(t, after.MaxLoad, before.MaxLoad+1e-9, "trial %d: %v", trial, tok)
		// Given a current placement (a shuffled default), never worse than it.
		if cur, err := DefaultPlacement(experts, ranks, redundant, 1); err == nil && Check(cur, experts, ranks, slots) == nil {
			flat := []int{}
			for _, dev := range cur.Layers[0].Devices {
				flat = append(flat, dev...)
			}
			for tries := 0; tries < 20; tries++ {
				rng.Shuffle(len(flat), func(i, j int) { flat[i], flat[j] = flat[j], flat[i] })
				for r := range cur.Layers[0].Devices {
					cur.Layers[0].Devices[r] = append([]int(nil), flat[r*slots:(r+1)*slots]...)
				}
				if Check(cur, experts, ranks, slots) == nil {
					break
				}
			}
			if Check(cur, experts, ranks, slots) == nil {
				d2, err := Plan([][]int64{tok}, ranks, redundant, cur)
				require.NoError(t, err)
				c, _ := Predict(cur, [][]int64{tok})
				a2, _ := Predict(d2, [][]int64{tok})
				assert.LessOrEqual(t, a2.MaxLoad, c.MaxLoad+1e-9, "trial %d", trial)
			}
		}
		if experts+redundant <= 9 {
			copies := map[int]int{}
			for _, dev := range d.Layers[0].Devices {
				for _, e := range dev {
					copies[e]++
				}
			}
			c := make([]int, experts)
			for e := range c {
				c[e] = copies[e]
			}
			opt := bruteMax(c, tok, ranks, slots)
			assert.LessOrEqual(t, after.MaxLoad, opt*4/3+1e-9, "trial %d: %v on %d ranks", trial, tok, ranks)
		}
	}
}

// One very hot expert: copies spread it over every rank and the predicted
// max/mean falls to what the copies allow.
func TestPlanHotExpert(t *testing.T) {
	tok := []int64{800, 10, 10, 10, 10, 10, 10, 10}
	d, err := Plan([][]int64{tok}, 4, 4, nil)
	require.NoError(t, err)
	require.NoError(t, Check(d, 8, 4, 3))
	n := 0
	for _, dev := range d.Layers[0].Devices {
		for _, e := range dev {
			if e == 0 {
				n++
			}
		}
	}
	assert.Equal(t, 4, n, "the hot expert gets a copy on every rank")
	p, err := Predict(d, [][]int64{tok})
	require.NoError(t, err)
	// 870 tokens over 4 ranks: 200 + 70 spread as 20,20,20,10 -> max 220
	assert.InDelta(t, 220/(870.0/4), p.Max, 1e-12)
	base, _ := DefaultPlacement(8, 4, 0, 1)
	b, _ := Predict(base, [][]int64{tok})
	assert.InDelta(t, 810/(870.0/4), b.Max, 1e-12)

	_, err = Plan([][]int64{tok}, 3, 0, nil)
	assert.Contains(t, err.Error(), "not a multiple of EP size 3")
	_, err = Plan(nil, 2, 0, nil)
	assert.Error(t, err)
	_, err = Plan([][]int64{{1, 2}, {1}}, 2, 0, nil)
	assert.Contains(t, err.Error(), "layer 1 has 1 experts")
}
