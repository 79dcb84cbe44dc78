package analysis

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// LayerGap is the stretch between two consecutive MoE layer openers: the
// end of one MoE layer and the start of the next, with the collectives
// that started in it.
type LayerGap struct {
	Start, End int64
	// Ops indexes Rank.HCCL (the gaps' share one array).
	Ops []int32
	// Signature is the sorted multiset of "type@group" of Ops.
	Signature string
	// Boundary: the stretch crosses a decode-step boundary. Its sequence of
	// main-stream compute kernels is not the layer period's (the most
	// frequent sequence between two openers): it holds the end of one
	// step's model (final norm, lm_head, sampler) and the start of the
	// next's (input copy, embedding).
	Boundary bool
	// period is the hash of the stretch's kernel sequence.
	period uint64
}

// LayersResult is the per-MoE-layer structure of the decode steps.
type LayersResult struct {
	Gaps []LayerGap
	// Pattern is the most frequent gap signature: the collectives of one
	// MoE layer. Gaps with a different signature cross a step boundary
	// (they also hold the per-step logits all-gather).
	Pattern      string
	PatternGaps  int
	PerLayer     map[string]int   // type -> collectives per MoE layer
	PerLayerTime map[string]int64 // type -> mean ns per MoE layer
	Steps        int              // decode steps (0 when unknown)
	StepsSource  string
	// PeriodGaps is how many stretches repeat the layer period (the most
	// frequent sequence of main-stream kernels between two openers).
	PeriodGaps int
}

// Sources of LayersResult.StepsSource.
const (
	StepsFromProfiler = "ProfilerStep#N"
	StepsFromPeriod   = "layer period"
)

// Metrics of the layers pass.
const (
	MetricHCCLPerLayerCount            = "hccl.per_layer.count"          // count: collectives of one MoE layer (the most frequent pattern between the kernels that open MoE layers; the per-step logits all-gather is not one of them)
	MetricHCCLPerLayerUs               = "hccl.per_layer.time_us"        // µs: mean time of one MoE layer's collectives
	FamilyHCCLPerLayerTypeCount Family = "hccl.per_layer.<type>.count"   // count, base MetricHCCLPerLayerCount: collectives of one type per MoE layer
	FamilyHCCLPerLayerTypeUs    Family = "hccl.per_layer.<type>.time_us" // µs, base MetricHCCLPerLayerCount: mean time per MoE layer of the collectives of one type
	MetricMoELayersCount               = "moe.layers.count"              // count: MoE layers per decode step (layers executed, on any dispatcher path, / decode.steps.count)
	MetricDecodeStepsCount             = "decode.steps.count"            // count: decode steps: ProfilerStep#N count, else one more than the step boundaries found from the layer period (the repeating sequence of kernels between MoE layer openers)

)

// LayersPass splits the timeline into MoE layers and finds the collectives
// each layer runs.
var LayersPass = &Pass{
	Name: "layers",
	Doc: `MoE layers per step and the collectives of one MoE layer

The stretches between consecutive kernels that open a MoE layer each hold
the collectives that close one MoE layer and open the next. The opener is
the dispatcher path's kernel (moe.dispatcher): MoeInitRouting* (allgather),
MoeDistributeDispatch* (mc2), DispatchFFNCombine or
DispatchGmmCombineDecode (fused_mc2), MoeTokenPermute on a rank that runs
hcom_alltoallv_ (alltoall). The most frequent
pattern of collectives (by type and group) is one layer's:
hccl.per_layer.count and hccl.per_layer.<type>.count count it,
hccl.per_layer.time_us and hccl.per_layer.<type>.time_us give its mean time
over the stretches that match it. The layer period is the most frequent
sequence of kernels on the main compute stream between two openers (one
layer's attention, MoE and collectives); a stretch whose sequence is not
the period crosses a decode-step boundary (it holds the model's tail and
the next step's head: the input copy, the embedding, and on a serving
engine the lm_head and sampler, which a data-parallel engine's dummy steps
and a graph replay's steps may lack). decode.steps.count is the number of
ProfilerStep#N, or else one more than the number of boundary stretches;
moe.layers.count is the MoE layers executed over decode.steps.count. Needs
at least two MoE layers per step.`,
	// kept: every pass states its inputs in this one shape (Requires, Metrics, the opening of Run)
	Requires: []*Pass{TimelinePass, MoEPass, HCCLPass, EventWaitPass},
	Metrics:  layersMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		moe := MoEOf(ctx)
		tl := TimelineOf(ctx)
		hc := HCCLOf(ctx)
		noComm := "no collective data"
		if !r.Have.HCCL && hc != nil {
			// totals from communication.json: placing collectives in
			// layers needs the big ops' device starts
			hc, noComm = nil, "collectives placed in MoE layers need the device timeline's HCCL ops; "+filepath.Base(r.Have.CommFile)+" gives only their totals"
		}
		layerNames := []string{MetricHCCLPerLayerCount, MetricHCCLPerLayerUs}
		stepNames := []string{MetricDecodeStepsCount, MetricMoELayersCount}
		if moe == nil || len(moe.Layers) == 0 {
			why := noMoELayer
			if moe == nil {
				why = noDeviceData(ctx)
			}
			ctx.UnavailableAll(why)
			return (*LayersResult)(nil), nil
		}
		res := &LayersResult{PerLayer: map[string]int{}, PerLayerTime: map[string]int64{}}
		// Layer openers in start order (Layers is in compute-task order).
		starts := make([]int64, len(moe.Layers))
		for i, l := range moe.Layers {
			starts[i] = r.Tasks[l.Routing].Start
		}
		sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
		if len(starts) > 1 {
			// sized: grown by append, the gaps left as much again behind
			res.Gaps = make([]LayerGap, 0, len(starts)-1)
		}
		for i := 1; i < len(starts); i++ {
			res.Gaps = append(res.Gaps, LayerGap{Start: starts[i-1], End: starts[i]})
		}
		if hc != nil {
			placeOps(r, res.Gaps)
		}
		markBoundaries(r, tl, EventWaitOf(ctx), res)
		freq := map[string]int{}
		labels := newTypeGroupLabels(r)
		// the layers repeat: a gap's labels, in op order, are nearly
		// always a list one of the last few gaps had, whose signature
		// (and count) is kept rather than sorted and joined again
		var memo [4]gapSig
		next := 0
		var keys []string
		for gi := range res.Gaps {
			g := &res.Gaps[gi]
			keys = keys[:0]
			for _, i := range g.Ops {
				keys = append(keys, labels.of(&r.HCCL[i]))
			}
			m := -1
			for k := range memo {
				if memo[k].n > 0 && slices.Equal(memo[k].keys, keys) {
					m = k
					break
				}
			}
			if m < 0 {
				m, next = next, (next+1)%len(memo)
				if memo[m].n > 0 {
					freq[memo[m].sig] += memo[m].n
				}
				sorted := slices.Clone(keys)
				sort.Strings(sorted)
				memo[m] = gapSig{keys: slices.Clone(keys), sig: strings.Join(sorted, ",")}
			}
			g.Signature = memo[m].sig
			memo[m].n++
		}
		for k := range memo {
			if memo[k].n > 0 {
				freq[memo[k].sig] += memo[k].n
			}
		}
		for sig, n := range freq {
			if n > res.PatternGaps || (n == res.PatternGaps && sig < res.Pattern) {
				res.Pattern, res.PatternGaps = sig, n
			}
		}
		// Steps.
		switch {
		case len(r.Steps) > 0:
			res.Steps, res.StepsSource = len(r.Steps), StepsFromProfiler
		case res.PeriodGaps > 0:
			res.Steps = 1
			for _, g := range res.Gaps {
				if g.Boundary {
					res.Steps++
				}
			}
			res.StepsSource = StepsFromPeriod
		}
		if res.Steps > 0 {
			ctx.SetCount(MetricDecodeStepsCount, res.Steps)
			ctx.Set(MetricMoELayersCount, float64(len(moe.Layers))/float64(res.Steps))
		} else {
			ctx.Unavailable("no ProfilerStep#N and no layer period (fewer than two MoE layer openers on the main compute stream) to find step boundaries", stepNames...)
		}
		// Per-layer collectives.
		switch {
		case hc == nil:
			ctx.Unavailable(noComm, layerNames...)
		case len(res.Gaps) == 0:
			ctx.Unavailable("fewer than two MoE layers in the capture", layerNames...)
		default:
			var total int64
			for _, g := range res.Gaps {
				if g.Signature != res.Pattern {
					continue
				}
				for _, i := range g.Ops {
					h := &r.HCCL[i]
					res.PerLayerTime[r.Str(h.Type)] += h.Dur
					total += h.Dur
				}
			}
			n := int64(res.PatternGaps)
			for _, i := range firstPatternGap(res).Ops {
				res.PerLayer[r.Str(r.HCCL[i].Type)]++
			}
			cnt := 0
			for t, c := range res.PerLayer {
				cnt += c
				res.PerLayerTime[t] /= n
				ctx.SetCount(FamilyHCCLPerLayerTypeCount.Of(t), c)
				ctx.SetUs(FamilyHCCLPerLayerTypeUs.Of(t), res.PerLayerTime[t])
			}
			ctx.SetCount(MetricHCCLPerLayerCount, cnt)
			ctx.SetUs(MetricHCCLPerLayerUs, total/n)
		}
		return res, nil
	},
}

// placeOps sets each gap's Ops to the HCCL ops that start in it, in the
// ops' order: counted first, then placed in one array shared by the gaps
// (4 bytes an op, none grown gap by gap).
func placeOps(r *model.Rank, gaps []LayerGap) {
	at := make([]int32, len(r.HCCL)) // the op's gap, -1 for none
	end := make([]int32, len(gaps))  // counts, then each gap's end in ops
	g := 0
	for i := range r.HCCL {
		s := r.HCCL[i].Start
		// from the last op's gap: the ops are in start order (SortTasks)
		g = searchFrom(len(gaps), g, func(k int) bool { return gaps[k].End > s })
		at[i] = -1
		if g < len(gaps) && s >= gaps[g].Start {
			at[i] = int32(g)
			end[g]++
		}
	}
	n := int32(0)
	for g := range end {
		n += end[g]
		end[g] = n
	}
	ops := make([]int32, n)
	for i := len(at) - 1; i >= 0; i-- {
		if g := at[i]; g >= 0 {
			end[g]--
			ops[end[g]] = int32(i)
		}
	}
	// end[g] is now the gap's start in ops
	for g := range gaps {
		hi := n
		if g+1 < len(gaps) {
			hi = end[g+1]
		}
		if end[g] < hi {
			gaps[g].Ops = ops[end[g]:hi:hi]
		}
	}
}

// markBoundaries finds the layer period: it hashes, per stretch between
// two openers, the sequence of compute kernels (op type, else name) of
// the main compute stream that start in it, takes the most frequent hash
// as one layer's and marks the other stretches as step boundaries. One
// walk over the compute tasks (in start order, as the stretches are).
func markBoundaries(r *model.Rank, tl *Timeline, ew *EventWaitResult, res *LayersResult) {
	if len(res.Gaps) == 0 || tl == nil {
		return
	}
	main, ok := ew.MainStream()
	if !ok {
		return
	}
	g := 0
	for _, i := range tl.ComputeTasks {
		t := &r.Tasks[i]
		if r.Stream(t) != main || t.Start < res.Gaps[0].Start {
			continue
		}
		for g < len(res.Gaps) && t.Start >= res.Gaps[g].End {
			g++
		}
		if g == len(res.Gaps) {
			break
		}
		k := r.OpType(t)
		if r.Str(k) == "" {
			k = r.Name(t)
		}
		h := res.Gaps[g].period
		res.Gaps[g].period = (h^uint64(k)+0x9e3779b97f4a7c15)*0xbf58476d1ce4e5b9 ^ h>>29
	}
	freq := make(map[uint64]int, 4)
	var best uint64
	for _, x := range res.Gaps {
		freq[x.period]++
		if n := freq[x.period]; n > freq[best] || (n == freq[best] && x.period < best) {
			best = x.period
		}
	}
	res.PeriodGaps = freq[best]
	for i := range res.Gaps {
		res.Gaps[i].Boundary = res.Gaps[i].period != best
	}
}

// LayersOf is the layers pass's result on a rank.
var LayersOf = RankResultOf[*LayersResult](LayersPass)

func firstPatternGap(res *LayersResult) LayerGap {
	for _, g := range res.Gaps {
		if g.Signature == res.Pattern {
			return g
		}
	}
	return LayerGap{}
}

// gapSig is a signature of the layers pass: the labels of a gap's ops in
// op order, their signature (sorted, joined), and how many gaps had them
// since it was kept.
type gapSig struct {
	keys []string
	sig  string
	n    int
}
