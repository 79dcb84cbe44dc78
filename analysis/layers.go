package analysis

import (
	"path/filepath"
	"sort"
	"strings"
)

// LayerGap is the stretch between two consecutive MoE layer openers: the
// end of one MoE layer and the start of the next, with the collectives
// that started in it.
type LayerGap struct {
	Start, End int64
	// Ops indexes Rank.HCCL.
	Ops []int
	// Signature is the sorted multiset of "type@group" of Ops.
	Signature string
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
}

// Metrics of the layers pass.
const (
	MetricHCCLPerLayerCount            = "hccl.per_layer.count"          // count: collectives of one MoE layer (the most frequent pattern between the kernels that open MoE layers; the per-step logits all-gather is not one of them)
	MetricHCCLPerLayerUs               = "hccl.per_layer.time_us"        // µs: mean time of one MoE layer's collectives
	FamilyHCCLPerLayerTypeCount Family = "hccl.per_layer.<type>.count"   // count, base MetricHCCLPerLayerCount: collectives of one type per MoE layer
	FamilyHCCLPerLayerTypeUs    Family = "hccl.per_layer.<type>.time_us" // µs, base MetricHCCLPerLayerCount: mean time per MoE layer of the collectives of one type
	MetricMoELayersCount               = "moe.layers.count"              // count: MoE layers per decode step (layers executed, on any dispatcher path, / decode.steps.count)
	MetricDecodeStepsCount             = "decode.steps.count"            // count: decode steps: ProfilerStep#N count, else step boundaries found from the collective pattern

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
over the stretches that match it. A stretch that holds more collectives
than the pattern crosses a decode-step boundary (the extra one is the
per-step logits all-gather, never counted as a layer's). decode.steps.count
is the number of ProfilerStep#N, or else one more than the number of such
boundary stretches; moe.layers.count is the MoE layers executed over
decode.steps.count. Needs at least two MoE layers per step.`,
	// kept: every pass states its inputs in this one shape (Requires, Metrics, the opening of Run)
	Requires: []*Pass{MoEPass, HCCLPass},
	Metrics:  layersMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		moe := MoEOf(ctx)
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
		for i := 1; i < len(starts); i++ {
			res.Gaps = append(res.Gaps, LayerGap{Start: starts[i-1], End: starts[i]})
		}
		if hc != nil {
			for i := range r.HCCL {
				s := r.HCCL[i].Start
				g := sort.Search(len(res.Gaps), func(k int) bool { return res.Gaps[k].End > s })
				if g < len(res.Gaps) && s >= res.Gaps[g].Start {
					res.Gaps[g].Ops = append(res.Gaps[g].Ops, i)
				}
			}
		}
		freq := map[string]int{}
		size := map[string]int{}
		labels := newTypeGroupLabels(r)
		for gi := range res.Gaps {
			g := &res.Gaps[gi]
			keys := make([]string, 0, len(g.Ops))
			for _, i := range g.Ops {
				keys = append(keys, labels.of(&r.HCCL[i]))
			}
			sort.Strings(keys)
			g.Signature = strings.Join(keys, ",")
			freq[g.Signature]++
			size[g.Signature] = len(keys)
		}
		for sig, n := range freq {
			if n > res.PatternGaps || (n == res.PatternGaps && sig < res.Pattern) {
				res.Pattern, res.PatternGaps = sig, n
			}
		}
		// Steps.
		switch {
		case len(r.Steps) > 0:
			res.Steps, res.StepsSource = len(r.Steps), "ProfilerStep#N"
		case hc != nil && hc.Total.Count > 0 && len(res.Gaps) > 0:
			res.Steps = 1
			for _, g := range res.Gaps {
				if g.Signature != res.Pattern && size[g.Signature] > size[res.Pattern] {
					res.Steps++
				}
			}
			res.StepsSource = "collective pattern"
		}
		if res.Steps > 0 {
			ctx.SetCount(MetricDecodeStepsCount, res.Steps)
			ctx.Set(MetricMoELayersCount, float64(len(moe.Layers))/float64(res.Steps))
		} else {
			ctx.Unavailable("no ProfilerStep#N and no collectives between MoE layers to find step boundaries", stepNames...)
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
