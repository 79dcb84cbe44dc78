// Package eplb predicts per-rank MoE load for an expert placement and
// computes a new placement (an EPLB plan) from per-expert loads. It reads
// only the model (model.Deployment, per-expert token counts); the algorithm
// is documented in docs/eplb.md.
//
// The load model is the one vLLM-Ascend's EPLB worker uses to report
// "current" and "updated" imbalance (EplbWorker._compute_imbalance in
// vllm_ascend/eplb/core/eplb_worker.py): an expert with c copies sends 1/c
// of its tokens to each copy, a rank's load is the sum over its slots, and
// a layer's imbalance is max over ranks / mean over ranks of that load.
package eplb

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// RankLoads returns the predicted load of each rank of one layer placement.
// An expert placed c times sends tokens/c to each copy; an expert never
// placed contributes nothing.
func RankLoads(devices [][]int, tokens []int64) []float64 {
	count := map[int]int{}
	for _, dev := range devices {
		for _, e := range dev {
			count[e]++
		}
	}
	out := make([]float64, len(devices))
	for r, dev := range devices {
		for _, e := range dev {
			if e >= 0 && e < len(tokens) {
				out[r] += float64(tokens[e]) / float64(count[e])
			}
		}
	}
	return out
}

// MaxOverMean returns max(v)/mean(v), and false when the mean is not
// positive (nothing to compare).
func MaxOverMean(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var sum, mx float64
	for i, x := range v {
		sum += x
		if i == 0 || x > mx {
			mx = x
		}
	}
	mean := sum / float64(len(v))
	if mean <= 0 {
		return 0, false
	}
	return mx / mean, true
}

// Prediction summarises the predicted per-rank imbalance of a placement
// over layers.
type Prediction struct {
	// PerLayer[l] is max/mean rank load of layer l (NaN when the layer has
	// no load).
	PerLayer []float64
	// Mean and Max are over layers with load (the quantities vLLM-Ascend
	// logs as "mean" and "max").
	Mean, Max float64
	// MaxLoad is the sum over layers of the largest rank load, MeanLoad
	// the sum of the mean rank loads: the tokens the slowest rank and an
	// average rank process through all layers.
	MaxLoad, MeanLoad float64
	// Layers is the number of layers with load.
	Layers int
}

// Predict computes the Prediction of dep for loads[l][e] (dep.Layers[l]
// pairs with loads[l]).
func Predict(dep *model.Deployment, loads [][]int64) (Prediction, error) {
	if len(dep.Layers) != len(loads) {
		return Prediction{}, fmt.Errorf("placement has %d layers, loads %d", len(dep.Layers), len(loads))
	}
	p := Prediction{PerLayer: make([]float64, len(loads))}
	for l, tok := range loads {
		rl := RankLoads(dep.Layers[l].Devices, tok)
		r, ok := MaxOverMean(rl)
		if !ok {
			p.PerLayer[l] = math.NaN()
			continue
		}
		p.PerLayer[l] = r
		p.Layers++
		p.Mean += r
		p.Max = max(p.Max, r)
		var sum, mx float64
		for _, x := range rl {
			sum += x
			mx = max(mx, x)
		}
		p.MaxLoad += mx
		p.MeanLoad += sum / float64(len(rl))
	}
	if p.Layers > 0 {
		p.Mean /= float64(p.Layers)
	}
	return p, nil
}

// DefaultPlacement is the placement vLLM-Ascend starts from without an
// expert map: with redundant == 0 the contiguous split of
// vllm.model_executor.layers.fused_moe determine_expert_map (the first
// numExperts%ranks ranks get one extra expert); with redundant > 0 the
// physical layout of generate_global_placement in
// vllm_ascend/eplb/core/eplb_utils.py (logical experts 0..E-1, then copies
// of experts 0..N-1, cut into ranks of equal size).
func DefaultPlacement(numExperts, ranks, redundant, layers int) (*model.Deployment, error) {
	if numExperts < 1 || ranks < 1 || redundant < 0 || layers < 0 {
		return nil, fmt.Errorf("bad placement size: %d experts, %d ranks, %d redundant", numExperts, ranks, redundant)
	}
	var devs [][]int
	if redundant == 0 {
		base, rem := numExperts/ranks, numExperts%ranks
		e := 0
		for r := 0; r < ranks; r++ {
			n := base
			if r < rem {
				n++
			}
			dev := make([]int, 0, n)
			for i := 0; i < n; i++ {
				dev = append(dev, e)
				e++
			}
			devs = append(devs, dev)
		}
	} else {
		if (numExperts+redundant)%ranks != 0 {
			return nil, fmt.Errorf("%d experts + %d redundant is not a multiple of %d ranks", numExperts, redundant, ranks)
		}
		phys := make([]int, 0, numExperts+redundant)
		for e := 0; e < numExperts; e++ {
			phys = append(phys, e)
		}
		for i := 0; i < redundant; i++ {
			phys = append(phys, i%numExperts)
		}
		s := len(phys) / ranks
		for r := 0; r < ranks; r++ {
			devs = append(devs, phys[r*s:(r+1)*s])
		}
	}
	d := &model.Deployment{}
	for l := 0; l < layers; l++ {
		dl := model.DeploymentLayer{ID: l, Devices: make([][]int, len(devs))}
		for r, dev := range devs {
			dl.Devices[r] = append([]int(nil), dev...)
		}
		d.Layers = append(d.Layers, dl)
	}
	return d, nil
}

// AutoRedundant is the redundant-slot count npuprof plans with when none is
// given: one per EP rank (vLLM-Ascend's documented recommendation, e.g. 16
// for EP16), raised until experts + redundant divide evenly by the ranks,
// and at most what fits (every rank holding every expert). 0 for one rank.
func AutoRedundant(numExperts, ranks int) int {
	if ranks <= 1 || numExperts < 1 {
		return 0
	}
	n := ranks
	for (numExperts+n)%ranks != 0 {
		n++
	}
	return min(n, numExperts*(ranks-1))
}

// MaxRanks bounds the EP size of a plan before any input is read: the
// expert readers accept at most 65536 experts per layer (internal/inputs/expertload),
// and a plan never has more EP ranks than experts (MaxEPSize).
const MaxRanks = 1 << 16

// MaxEPSize is the largest EP size a plan for numExperts experts per layer
// can have: every rank must hold at least one logical expert in vLLM's
// default split of the experts over the EP ranks (the "before" of a plan),
// so the EP size is at most the number of experts, unless the expert map
// read with the loads (mapRanks ranks, 0 when none) already has more ranks.
func MaxEPSize(numExperts, mapRanks int) int {
	return min(MaxRanks, max(numExperts, mapRanks))
}

// MaxRedundant is the largest redundant slot count for numExperts experts
// on ranks EP ranks: an expert has at most one copy per rank, so at most
// ranks-1 redundant copies each.
func MaxRedundant(numExperts, ranks int) int {
	if numExperts < 1 || ranks < 1 {
		return 0
	}
	return numExperts * (ranks - 1)
}

// CheckRedundant says why a plan with these sizes is impossible, or nil.
func CheckRedundant(numExperts, ranks, redundant int) error {
	switch {
	case numExperts < 1:
		return fmt.Errorf("no experts to place")
	case ranks < 1:
		return fmt.Errorf("EP size must be at least 1, got %d", ranks)
	case ranks > MaxRanks:
		return fmt.Errorf("EP size %d is above %d", ranks, MaxRanks)
	case redundant < 0:
		return fmt.Errorf("redundant experts must be >= 0, got %d", redundant)
	case redundant > MaxRedundant(numExperts, ranks):
		// before the divisibility test: numExperts+redundant must not overflow
		return fmt.Errorf("%d redundant copies do not fit: with %d ranks each of %d experts has at most %d copies (one per rank)", redundant, ranks, numExperts, ranks)
	case (numExperts+redundant)%ranks != 0:
		lo := redundant - (numExperts+redundant)%ranks
		hi := lo + ranks
		if lo < 0 {
			return fmt.Errorf("%d experts + %d redundant is not a multiple of EP size %d (vLLM-Ascend requires it): use %d", numExperts, redundant, ranks, hi)
		}
		return fmt.Errorf("%d experts + %d redundant is not a multiple of EP size %d (vLLM-Ascend requires it): use %d or %d", numExperts, redundant, ranks, lo, hi)
	}
	return nil
}

// Check verifies a placement for vLLM-Ascend: every layer has ranks ranks
// of slots slots each, every expert 0..numExperts-1 is placed at least once
// per layer, and no rank holds an expert twice.
func Check(d *model.Deployment, numExperts, ranks, slots int) error {
	for _, l := range d.Layers {
		if len(l.Devices) != ranks {
			return fmt.Errorf("layer %d: %d ranks, want %d", l.ID, len(l.Devices), ranks)
		}
		placed := make([]bool, numExperts)
		for r, dev := range l.Devices {
			if len(dev) != slots {
				return fmt.Errorf("layer %d rank %d: %d slots, want %d", l.ID, r, len(dev), slots)
			}
			held := map[int]bool{}
			for _, e := range dev {
				if e < 0 || e >= numExperts {
					return fmt.Errorf("layer %d rank %d: expert %d out of range", l.ID, r, e)
				}
				if held[e] {
					return fmt.Errorf("layer %d rank %d: expert %d placed twice on one rank", l.ID, r, e)
				}
				held[e] = true
				placed[e] = true
			}
		}
		for e, ok := range placed {
			if !ok {
				return fmt.Errorf("layer %d: expert %d is not placed", l.ID, e)
			}
		}
	}
	return nil
}

// replica is one physical copy of an expert during planning.
type replica struct {
	expert int
	copies int
	w      float64
}

// Plan computes a placement of numExperts = len(loads[l]) experts on ranks
// ranks with redundant extra slots, one layer at a time (docs/eplb.md):
//
//  1. replicate: give each of the redundant slots, one at a time, to the
//     expert with the largest load per copy (fewer than ranks copies);
//  2. pack: take copies by load per copy, largest first, and put each on
//     the least-loaded rank that has a free slot and no copy of that expert
//     yet (longest-processing-time-first under the slot and one-copy-per-
//     rank constraints); when no such rank exists, move a copy from a full
//     rank to a rank with a free slot to make room;
//  3. improve: while swapping a copy on the most-loaded rank with a copy on
//     another rank lowers the larger of the two loads, make the best swap;
//  4. keep the better of that plan and the starting placement improved by
//     the same swaps (the starting placement is current when it has the
//     same ranks and slots, else vLLM-Ascend's default layout for this
//     redundancy), so a plan never predicts a slower rank than its start.
//
// Slots within a rank are ordered by expert id.
func Plan(loads [][]int64, ranks, redundant int, current *model.Deployment) (*model.Deployment, error) {
	if len(loads) == 0 {
		return nil, fmt.Errorf("no layers to plan")
	}
	e := len(loads[0])
	if err := CheckRedundant(e, ranks, redundant); err != nil {
		return nil, err
	}
	slots := (e + redundant) / ranks
	start := current
	if start == nil || len(start.Layers) != len(loads) || Check(start, e, ranks, slots) != nil {
		var err error
		if start, err = DefaultPlacement(e, ranks, redundant, len(loads)); err != nil {
			return nil, err
		}
		if Check(start, e, ranks, slots) != nil {
			start = nil // e.g. a default copy landing on a rank that holds it
		}
	}
	d := &model.Deployment{}
	for l, tok := range loads {
		if len(tok) != e {
			return nil, fmt.Errorf("layer %d has %d experts, layer 0 has %d", l, len(tok), e)
		}
		devs, err := planLayer(tok, ranks, redundant)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", l, err)
		}
		if start != nil {
			alt := improvePlacement(start.Layers[l].Devices, tok, slots)
			if maxLoad(alt, tok) < maxLoad(devs, tok) {
				devs = alt
			}
		}
		d.Layers = append(d.Layers, model.DeploymentLayer{ID: l, Devices: devs})
	}
	return d, nil
}

// maxLoad is the largest predicted rank load of one layer placement.
func maxLoad(devs [][]int, tok []int64) float64 {
	m := 0.0
	for _, v := range RankLoads(devs, tok) {
		m = max(m, v)
	}
	return m
}

// improvePlacement applies the swap search to an existing placement.
func improvePlacement(devs [][]int, tok []int64, slots int) [][]int {
	count := map[int]int{}
	for _, dev := range devs {
		for _, e := range dev {
			count[e]++
		}
	}
	p := newPacking(len(devs), slots, len(tok))
	for r, dev := range devs {
		for _, e := range dev {
			p.put(r, replica{expert: e, copies: count[e], w: float64(tok[e]) / float64(count[e])})
		}
	}
	p.improve(1000)
	return p.placement()
}

func planLayer(tok []int64, ranks, redundant int) ([][]int, error) {
	e := len(tok)
	slots := (e + redundant) / ranks
	copies := make([]int, e)
	for i := range copies {
		copies[i] = 1
	}
	for n := 0; n < redundant; n++ {
		best := -1
		var bw float64
		for i, t := range tok {
			if copies[i] >= ranks {
				continue
			}
			w := float64(t) / float64(copies[i])
			if best < 0 || w > bw {
				best, bw = i, w
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("internal error: no expert can take another copy")
		}
		copies[best]++
	}
	reps := make([]replica, 0, e+redundant)
	for i, c := range copies {
		for k := 0; k < c; k++ {
			reps = append(reps, replica{expert: i, copies: c, w: float64(tok[i]) / float64(c)})
		}
	}
	slices.SortStableFunc(reps, func(x, y replica) int {
		return cmp.Or(cmp.Compare(y.w, x.w), cmp.Compare(y.copies, x.copies), cmp.Compare(x.expert, y.expert))
	})
	st := newPacking(ranks, slots, e)
	for _, rp := range reps {
		r := st.bestRank(rp.expert)
		if r < 0 {
			var err error
			if r, err = st.makeRoom(rp); err != nil {
				return nil, err
			}
		}
		st.put(r, rp)
	}
	st.improve(1000)
	return st.placement(), nil
}

// placement returns the expert ids of each rank, sorted.
func (p *packing) placement() [][]int {
	devs := make([][]int, len(p.held))
	for r := range devs {
		for _, rp := range p.held[r] {
			devs[r] = append(devs[r], rp.expert)
		}
		sort.Ints(devs[r])
	}
	return devs
}

// packing is the state of one layer's placement.
type packing struct {
	slots int
	load  []float64
	held  [][]replica
	has   []map[int]bool
}

func newPacking(ranks, slots, experts int) *packing {
	p := &packing{slots: slots, load: make([]float64, ranks), held: make([][]replica, ranks), has: make([]map[int]bool, ranks)}
	for r := range p.has {
		p.has[r] = make(map[int]bool, slots)
	}
	return p
}

// bestRank is the least-loaded rank with a free slot and no copy of
// expert (ties: fewer slots used, then lower rank), or -1.
func (p *packing) bestRank(expert int) int {
	best := -1
	for r := range p.load {
		if len(p.held[r]) >= p.slots || p.has[r][expert] {
			continue
		}
		if best < 0 || p.load[r] < p.load[best] || (p.load[r] == p.load[best] && len(p.held[r]) < len(p.held[best])) {
			best = r
		}
	}
	return best
}

func (p *packing) put(r int, rp replica) {
	p.held[r] = append(p.held[r], rp)
	p.has[r][rp.expert] = true
	p.load[r] += rp.w
}

// makeRoom handles a copy of rp.expert when every rank with a free slot
// already holds that expert: some full rank g lacks the expert (an expert
// has at most one copy per rank), and g holds at least two experts the
// free rank f lacks, so one of them moves g -> f and g takes rp. The move
// that keeps the larger of the two new loads smallest is chosen.
func (p *packing) makeRoom(rp replica) (int, error) {
	type move struct {
		f, g, i int
		cost    float64
	}
	best := move{f: -1}
	for f := range p.load {
		if len(p.held[f]) >= p.slots {
			continue
		}
		for g := range p.load {
			if g == f || p.has[g][rp.expert] || len(p.held[g]) < p.slots {
				continue
			}
			for i, x := range p.held[g] {
				if p.has[f][x.expert] {
					continue
				}
				c := max(p.load[f]+x.w, p.load[g]-x.w+rp.w)
				if best.f < 0 || c < best.cost {
					best = move{f, g, i, c}
				}
			}
		}
	}
	if best.f < 0 {
		return -1, fmt.Errorf("internal error: no rank can take a copy of expert %d", rp.expert)
	}
	x := p.held[best.g][best.i]
	p.held[best.g] = append(p.held[best.g][:best.i], p.held[best.g][best.i+1:]...)
	delete(p.has[best.g], x.expert)
	p.load[best.g] -= x.w
	p.put(best.f, x)
	return best.g, nil
}

// improve makes at most limit swaps between the most-loaded rank and
// another rank, each strictly lowering the larger load of the pair (so the
// sum of squared loads falls and the loop cannot cycle).
func (p *packing) improve(limit int) {
	for it := 0; it < limit; it++ {
		m := 0
		for r := range p.load {
			if p.load[r] > p.load[m] {
				m = r
			}
		}
		type swap struct {
			o, a, b int
			cost    float64
		}
		best := swap{o: -1, cost: p.load[m]}
		for a, x := range p.held[m] {
			for o := range p.load {
				if o == m || p.has[o][x.expert] {
					continue
				}
				for b, y := range p.held[o] {
					if p.has[m][y.expert] || y.w >= x.w {
						continue
					}
					c := max(p.load[m]-x.w+y.w, p.load[o]-y.w+x.w)
					if c < best.cost-1e-9*max(1, p.load[m]) {
						best = swap{o, a, b, c}
					}
				}
			}
		}
		if best.o < 0 {
			return
		}
		x, y := p.held[m][best.a], p.held[best.o][best.b]
		p.held[m][best.a], p.held[best.o][best.b] = y, x
		delete(p.has[m], x.expert)
		delete(p.has[best.o], y.expert)
		p.has[m][y.expert] = true
		p.has[best.o][x.expert] = true
		p.load[m] += y.w - x.w
		p.load[best.o] += x.w - y.w
	}
}
