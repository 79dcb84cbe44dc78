package tracegen

// kept: its standard-library imports resemble service.go's; an import block cannot be shared
import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ExpertDumpDir is the folder, inside the generated directory, of the
// MindIE expert-load dump written for scenarios with HotExperts.
const ExpertDumpDir = "expert_hotspot"

// Profile-level metric names of ExpertsTruth.Metrics (the names npuprof's
// experts pass reports; a public contract, docs/experts.md). Stated here, not
// imported from the pass, so that renaming one there fails the truth tests.
const (
	MetricExpertsImbalanceMax      = "experts.imbalance.max"
	MetricExpertsImbalanceMean     = "experts.imbalance.mean"
	MetricExpertsImbalanceMaxLayer = "experts.imbalance.max_layer"
	MetricExpertsHotShareMax       = "experts.hot.share.max"
	MetricExpertsLayersCount       = "experts.layers.count"
	MetricExpertsCount             = "experts.count"
	MetricExpertsTokensCount       = "experts.tokens.count"
	MetricExpertsRankImbalanceMax  = "experts.rank_imbalance.max"
	MetricExpertsRankImbalanceMean = "experts.rank_imbalance.mean"
	MetricSkewGMMMaxOverMean       = "skew.moe.gmm.max_over_mean"
	MetricSkewGMMMaxRank           = "skew.moe.gmm.max_rank"
	MetricSkewGMMTokensMaxOverMean = "skew.moe.gmm.tokens.max_over_mean"
	MetricSkewGMMLostUs            = "skew.moe.gmm.lost.time_us"
	MetricSkewGMMRanksCount        = "skew.moe.gmm.ranks.count"
)

// ExpertsTruth is the exact ground truth of the profile-level expert
// metrics of one capture.
type ExpertsTruth struct {
	// Dump is the MindIE dump folder relative to the generated directory
	// ("" when the scenario writes none).
	Dump string `json:",omitempty"`
	// HotRank is the scenario's slow EP rank (-1 none); the rank with the
	// most GroupedMatmul time is in Metrics[MetricSkewGMMMaxRank].
	HotRank int
	// HotExperts[l] are the hot experts of MoE layer l, ascending.
	HotExperts [][]int `json:",omitempty"`
	// Tokens[l][e] is the dumped load of expert e in layer l (the last,
	// complete dump), nil without a dump.
	Tokens [][]int64 `json:",omitempty"`
	// Metrics holds experts.* (with a dump) and skew.moe.gmm.* (with an
	// ep group) values.
	Metrics map[string]float64
}

// routedTokens is the number of token-expert pairs of one MoE layer.
func (s Scenario) routedTokens() int {
	full := s.Batch
	if s.FlashComm1 {
		tp := s.tpSize()
		full = (s.Batch + tp - 1) / tp * tp
	}
	return full * topK
}

// hashU is a deterministic uniform number in [0,1) for (seed, a, b, c,
// salt), independent of the simulator's own draws.
func hashU(seed int64, a, b, c, salt int) float64 {
	h := splitmix(uint64(seed) ^ 0x2545f4914f6cdd1d)
	for _, v := range []int{a, b, c, salt} {
		h = splitmix(h ^ uint64(int64(v)+0x51))
	}
	return float64(h>>11) / (1 << 53)
}

// hotExperts returns the HotExperts hot experts of layer l, ascending.
func hotExperts(s Scenario, l int) []int {
	n, first := numExperts, 0
	if s.HotExpertsRank > 0 {
		n = s.localExperts()
		first = (s.HotExpertsRank - 1) * n
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = first + i
	}
	for i := 0; i < s.HotExperts; i++ {
		j := i + int(hashU(s.Seed, l, i, -1, 7)*float64(n-i))
		perm[i], perm[j] = perm[j], perm[i]
	}
	return slices.Sorted(slices.Values(perm[:s.HotExperts]))
}

// expertCounts splits the routed token-expert pairs of MoE layer l in step
// k over the experts: weights 0.75..1.25 per (layer, expert), +-20 % per
// step, times HotExpertFactor for the layer's hot experts and SkewFactor
// for the hot rank's experts; integer counts by largest remainder, so they
// sum to exactly routedTokens.
func expertCounts(s Scenario, k, l int) []int {
	hot := map[int]bool{}
	for _, e := range hotExperts(s, l) {
		hot[e] = true
	}
	per := s.localExperts()
	w := make([]float64, numExperts)
	var sum float64
	for e := range w {
		w[e] = (0.75 + 0.5*hashU(s.Seed, l, e, -1, 1)) * (1 + 0.2*(2*hashU(s.Seed, l, e, k, 2)-1))
		if hot[e] {
			w[e] *= s.HotExpertFactor
		}
		w[e] *= s.skew(e / per)
		sum += w[e]
	}
	total := s.routedTokens()
	counts := make([]int, numExperts)
	type frac struct {
		e int
		f float64
	}
	fr := make([]frac, numExperts)
	left := total
	for e := range w {
		x := float64(total) * w[e] / sum
		counts[e] = int(math.Floor(x))
		left -= counts[e]
		fr[e] = frac{e, x - math.Floor(x)}
	}
	slices.SortStableFunc(fr, func(a, b frac) int { return cmp.Compare(b.f, a.f) })
	for i := 0; i < left; i++ {
		counts[fr[i%numExperts].e]++
	}
	return counts
}

// gmmAcc records every GroupedMatmul of every rank.
type gmmAcc struct {
	ns, tokens []int64
	count      []int
	// layer[(k*Layers+l)] is each rank's GroupedMatmul time in that MoE
	// layer occurrence.
	layer  [][]int64
	layers int
}

func newGMMAcc(s Scenario) *gmmAcc {
	a := &gmmAcc{ns: make([]int64, s.Ranks), tokens: make([]int64, s.Ranks), count: make([]int, s.Ranks), layers: s.Layers}
	a.layer = make([][]int64, s.Steps*s.Layers)
	for i := range a.layer {
		a.layer[i] = make([]int64, s.Ranks)
	}
	return a
}

func (a *gmmAcc) add(r, k, l int, d, tokens int64) {
	a.ns[r] += d
	a.tokens[r] += tokens
	a.count[r]++
	if l >= 0 {
		a.layer[k*a.layers+l][r] += d
	}
}

// maxOverMean returns max/mean of v and the index of the (first) max.
func maxOverMean(v []int64) (float64, int) {
	var sum, mx int64
	at := 0
	for i, x := range v {
		sum += x
		if x > mx {
			mx, at = x, i
		}
	}
	if sum == 0 {
		return 0, at
	}
	return float64(mx) * float64(len(v)) / float64(sum), at
}

// expertsTruth computes the profile-level expert truth of s and, with
// HotExperts, writes the MindIE dump into dir.
func expertsTruth(dir string, s Scenario) (*ExpertsTruth, error) {
	t := &ExpertsTruth{HotRank: s.HotRank, Metrics: map[string]float64{}}
	// every capture has an ep group (vLLM makes one for every MoE model):
	// the skew over its ranks is measured with expert parallel off too
	if s.Ranks >= 2 {
		g := newSim(s, make([]bool, s.Ranks))
		g.gmm = newGMMAcc(s)
		for k := 0; k < s.Steps; k++ {
			g.step()
		}
		if s.ExpertParallel || s.FlashComm1 {
			syncWaitTruth(t.Metrics, g.waits)
		}
		a := g.gmm
		r, at := maxOverMean(a.ns)
		t.Metrics[MetricSkewGMMMaxOverMean] = r
		t.Metrics[MetricSkewGMMMaxRank] = float64(at)
		t.Metrics[MetricSkewGMMRanksCount] = float64(s.Ranks)
		r, _ = maxOverMean(a.tokens)
		t.Metrics[MetricSkewGMMTokensMaxOverMean] = r
		// sum over layer occurrences of (ranks*max - total), exact
		var lost int64
		for _, v := range a.layer {
			var mx, tot int64
			for _, x := range v {
				mx = max(mx, x)
				tot += x
			}
			lost += int64(len(v))*mx - tot
		}
		t.Metrics[MetricSkewGMMLostUs] = float64(lost) / float64(s.Ranks) / 1000
	}
	if s.HotExperts == 0 {
		return t, nil
	}
	t.Dump = ExpertDumpDir
	first := make([][]int64, s.Layers) // an earlier, stale dump (step 0 only)
	t.Tokens = make([][]int64, s.Layers)
	for l := 0; l < s.Layers; l++ {
		t.HotExperts = append(t.HotExperts, hotExperts(s, l))
		t.Tokens[l] = make([]int64, numExperts)
		first[l] = make([]int64, numExperts)
		for k := 0; k < s.Steps; k++ {
			for e, n := range expertCounts(s, k, l) {
				t.Tokens[l][e] += int64(n)
				if k == 0 {
					first[l][e] += int64(n)
				}
			}
		}
	}
	per := s.localExperts()
	var sumR, maxR, maxShare, rSum, rMax float64
	maxLayer := -1
	var total int64
	for l, tok := range t.Tokens {
		var lt, mx int64
		rank := make([]int64, s.Ranks)
		for e, n := range tok {
			lt += n
			mx = max(mx, n)
			rank[e/per] += n
		}
		total += lt
		r := float64(mx) * numExperts / float64(lt)
		sumR += r
		if r > maxR {
			maxR, maxLayer = r, l
		}
		maxShare = max(maxShare, float64(mx)/float64(lt))
		rr, _ := maxOverMean(rank)
		rSum += rr
		rMax = max(rMax, rr)
	}
	t.Metrics[MetricExpertsImbalanceMax] = maxR
	t.Metrics[MetricExpertsImbalanceMean] = sumR / float64(s.Layers)
	t.Metrics[MetricExpertsImbalanceMaxLayer] = float64(maxLayer)
	t.Metrics[MetricExpertsHotShareMax] = maxShare
	t.Metrics[MetricExpertsLayersCount] = float64(s.Layers)
	t.Metrics[MetricExpertsCount] = numExperts
	t.Metrics[MetricExpertsTokensCount] = float64(total)
	t.Metrics[MetricExpertsRankImbalanceMax] = rMax
	t.Metrics[MetricExpertsRankImbalanceMean] = rSum / float64(s.Layers)
	return t, writeExpertDump(filepath.Join(dir, ExpertDumpDir), s, first, t.Tokens)
}

// writeExpertDump writes the MindIE load-balancing dump of every rank
// (docs/formats.md#expert-loads): decode_{rank}.csv with the stale dump's lines followed
// by the full dump's (one line per MoE layer, token counts per local expert
// slot), model_gen_config.json, and decode_global_deployment.json with the
// contiguous placement the routing used.
func writeExpertDump(dir string, s Scenario, stale, full [][]int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	per := s.localExperts()
	for r := 0; r < s.Ranks; r++ {
		var b bytes.Buffer
		for _, dump := range [][][]int64{stale, full} {
			for _, tok := range dump {
				for i, n := range tok[r*per : (r+1)*per] {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(strconv.FormatInt(n, 10))
				}
				b.WriteByte('\n')
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("decode_%d.csv", r)), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	cfg := obj{{"num_moe_layers", s.Layers}, {"collection_Interval", s.Steps}, {"num_of_experts", numExperts},
		{"num_of_selected_experts", topK}, {"num_dangling_shared_experts", 0}}
	if err := writeJSON(filepath.Join(dir, "model_gen_config.json"), cfg); err != nil {
		return err
	}
	var layers []obj
	for l := 0; l < s.Layers; l++ {
		var devs []obj
		for r := 0; r < s.Ranks; r++ {
			ex := make([]int, per)
			for i := range ex {
				ex[i] = r*per + i
			}
			devs = append(devs, obj{{"device_id", r}, {"device_expert", ex}})
		}
		layers = append(layers, obj{{"layer_id", l}, {"device_count", s.Ranks}, {"device_list", devs}})
	}
	return writeJSON(filepath.Join(dir, "decode_global_deployment.json"), obj{{"moe_layer_count", s.Layers}, {"layer_list", layers}})
}

// Metrics of the MC2 dispatch/combine waits (npuprof's moe_wait pass).
const (
	MetricMoEDispatchWaitLayerUs = "moe.dispatch.wait.per_layer.time_us"
	MetricMoECombineWaitLayerUs  = "moe.combine.wait.per_layer.time_us"
)

// syncWaitTruth sets the MC2 kernels' mean wait per rank and layer.
func syncWaitTruth(m map[string]float64, w *syncWaits) {
	if w == nil || w.layers == 0 {
		return
	}
	var d, c int64
	for r := range w.dispatch {
		d, c = d+w.dispatch[r], c+w.combine[r]
	}
	n := float64(w.layers * len(w.dispatch))
	m[MetricMoEDispatchWaitLayerUs] = float64(d) / n / 1000
	m[MetricMoECombineWaitLayerUs] = float64(c) / n / 1000
}
