package analysis

// kept: its standard-library imports resemble internal/render/htmlsections.go's; an import block cannot be shared
import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis/eplb"
	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Metrics of the experts cluster pass (a public contract,
// documented in docs/experts.md and the README). The expert-imbalance rule
// reads these from Result.Cluster.Metrics (JSON: cluster.metrics).
const (
	MetricSkewGMMMaxOverMean       = "skew.moe.gmm.max_over_mean"              // ratio: per ep group: max over its ranks of GroupedMatmul time / mean (the worst group)
	MetricSkewGMMMaxRank           = "skew.moe.gmm.max_rank"                   // rank: the rank with the most GroupedMatmul time in that group (the hot rank)
	MetricSkewGMMTokensMaxOverMean = "skew.moe.gmm.tokens.max_over_mean"       // ratio: the same over GroupedMatmul tokens (moe.gmm.tokens)
	MetricSkewGMMLostUs            = "skew.moe.gmm.lost.time_us"               // µs: MoE time lost to imbalance: per MoE layer, the slowest EP rank's GroupedMatmul time minus the mean, summed over the capture
	MetricSkewGMMRanksCount        = "skew.moe.gmm.ranks.count"                // count: ranks compared in that group
	MetricExpertsImbalanceMax      = "experts.imbalance.max"                   // ratio: max over MoE layers of the most loaded expert's tokens / mean tokens per expert (needs --experts or dumps)
	MetricExpertsImbalanceMean     = "experts.imbalance.mean"                  // ratio: mean over layers of that ratio
	MetricExpertsImbalanceMaxLayer = "experts.imbalance.max_layer"             // count: the layer where the max is reached
	MetricExpertsHotShareMax       = "experts.hot.share.max"                   // ratio: largest share of one expert in its layer's tokens
	MetricExpertsLayersCount       = "experts.layers.count"                    // count: layers of the expert-load input
	MetricExpertsCount             = "experts.count"                           // count: experts of the expert-load input
	MetricExpertsTokensCount       = "experts.tokens.count"                    // tokens: tokens of the expert-load input
	MetricExpertsRankImbalanceMax  = "experts.rank_imbalance.max"              // ratio: per layer, max/mean over EP ranks of each rank's tokens; max over layers
	MetricExpertsRankImbalanceMean = "experts.rank_imbalance.mean"             // ratio: the same, mean over layers
	MetricEPLBRanks                = "experts.eplb.ranks"                      // count: EP size of the predicted EPLB plan
	MetricEPLBRedundant            = "experts.eplb.redundant"                  // count: redundant slots of the predicted plan
	MetricEPLBBeforeMax            = "experts.eplb.before.max"                 // ratio: predicted max/mean rank load of the current placement, max over layers
	MetricEPLBBeforeMean           = "experts.eplb.before.mean"                // ratio: the same, mean over layers
	MetricEPLBAfterMax             = "experts.eplb.after.max"                  // ratio: the same for the plan `npuprof eplb plan` would write
	MetricEPLBAfterMean            = "experts.eplb.after.mean"                 // ratio: the same, mean over layers
	MetricEPLBMaxLoadReduction     = "experts.eplb.max_load.reduction"         // ratio: 1 - (slowest rank's tokens after / before) of that plan
	MetricLogRankImbalanceMean     = "experts.log.rank_imbalance.mean"         // ratio: last logged peak-to-average ratio (vLLM-Ascend), mean
	MetricLogRankImbalanceMax      = "experts.log.rank_imbalance.max"          // ratio: the same, max
	MetricLogRankImbalanceMin      = "experts.log.rank_imbalance.min"          // ratio: the same, min
	MetricLogUpdatedMean           = "experts.log.rank_imbalance.updated.mean" // ratio: last logged ratio after vLLM-Ascend's own EPLB placement, mean
	MetricLogUpdatedMax            = "experts.log.rank_imbalance.updated.max"  // ratio: the same, max
	MetricLogBalancedness          = "experts.log.balancedness"                // ratio: last upstream vLLM `EPLB step:` balancedness (avg/max)
	MetricLogAvgTokens             = "experts.log.avg_tokens"                  // tokens: its avg_tokens
	MetricLogMaxTokens             = "experts.log.max_tokens"                  // tokens: its max_tokens
	MetricLogLinesCount            = "experts.log.lines.count"                 // count: imbalance log lines read
)

// HotExpertsTop is how many hot experts ExpertsResult.Hot keeps; each
// layer keeps HotExpertsPerLayer.
const (
	HotExpertsTop      = 10
	HotExpertsPerLayer = 3
)

// EPGroupNames are the parallel_group_info group names read as the
// expert-parallel group ("ep" in vLLM / vLLM-Ascend, "exp" in
// msprof-analyze's ep_load_balance recipe).
var EPGroupNames = []string{"ep", "exp"}

// ExpertsResult is the experts pass's typed result: per-expert loads
// (from the expert input), per-EP-rank load (from the trace) and the
// predicted effect of an EPLB plan. Renderers read it for the layer x
// expert heatmap (Loads.Layers[l].Tokens) and the per-rank bar chart
// (EP.Ranks, DumpRanks).
type ExpertsResult struct {
	// Loads is the expert input, nil when there is none.
	Loads *model.ExpertLoads
	// Layers has one entry per layer of Loads.
	Layers []ExpertLayerStat
	// Hot are the HotExpertsTop largest (layer, expert) loads by share of
	// their layer's tokens.
	Hot []HotExpert
	// DumpRanks are the per-rank tokens of the dumps, summed over layers.
	DumpRanks []RankTokens
	// EPLB is the predicted effect of `npuprof eplb plan` with default
	// settings, nil when it cannot be computed.
	EPLB *EPLBPrediction
	// EP is the per-EP-rank GroupedMatmul load from the trace, nil without
	// an `ep` group.
	EP *EPSkew
	// PlanCommand is the `npuprof eplb plan` command line that writes the
	// plan EPLB predicts, "" when there is no prediction.
	PlanCommand string
	// LogLayers are the latest per-layer PAR values from
	// [MOE_load_stats][Layer N] log lines, by layer.
	LogLayers map[int]float64
}

// ExpertLayerStat is one MoE layer's expert load.
type ExpertLayerStat struct {
	Layer  int
	Tokens int64
	// Mean is the mean load of the observed experts.
	Mean float64
	// MaxExpert / MaxTokens is the most loaded expert.
	MaxExpert int
	MaxTokens int64
	// MaxOverMean is MaxTokens/Mean; valid when HasLoad.
	MaxOverMean float64
	HasLoad     bool
	// RankMaxOverMean is max/mean of the measured per-rank load (dumps of
	// two ranks or more); valid when HasRank.
	RankMaxOverMean float64
	HasRank         bool
	// Top are the layer's HotExpertsPerLayer most loaded experts.
	Top []HotExpert
}

// HotExpert is one expert's load in one layer.
type HotExpert struct {
	Layer  int
	Expert int
	Tokens int64
	// Share is Tokens / the layer's tokens.
	Share float64
	// MaxOverMean is Tokens / the layer's mean expert load.
	MaxOverMean float64
}

// RankTokens is one EP rank's measured tokens.
type RankTokens struct {
	Rank   int
	Tokens int64
}

// EPLBPrediction is the predicted per-rank imbalance of the current and a
// planned placement (internal/analysis/eplb, docs/eplb.md).
type EPLBPrediction struct {
	Ranks, Redundant, Slots int
	// BeforeFrom says which placement Before describes: "expert map"
	// (the deployment read with the dumps) or "default layout" (vLLM's
	// contiguous split, no redundancy).
	BeforeFrom    string
	Before, After eplb.Prediction
	// Planned is the placement the plan would write; Tokens[l][e] the
	// loads it was planned for (PlannedShares reads them).
	Planned *model.Deployment
	Tokens  [][]int64
}

// PlannedShares is, per layer of the expert input, each EP rank's share
// of the layer's tokens under the planned placement (nil when a layer
// has no tokens).
func (p *EPLBPrediction) PlannedShares() [][]float64 {
	if p == nil || p.Planned == nil || len(p.Planned.Layers) != len(p.Tokens) {
		return nil
	}
	out := make([][]float64, len(p.Tokens))
	for l, tok := range p.Tokens {
		rl := eplb.RankLoads(p.Planned.Layers[l].Devices, tok)
		var sum float64
		for _, x := range rl {
			sum += x
		}
		if !(sum > 0) {
			continue
		}
		for i := range rl {
			rl[i] /= sum
		}
		out[l] = rl
	}
	return out
}

// EPSkew is the per-EP-rank GroupedMatmul load measured in the trace.
type EPSkew struct {
	Ranks  []EPRankLoad
	Groups []EPGroupSkew
	// Worst indexes Groups: the group with the largest MaxOverMean.
	Worst int
}

// EPRankLoad is one EP rank's GroupedMatmul work.
type EPRankLoad struct {
	Rank  int
	Group int // index into EPSkew.Groups
	// GMM is the total GroupedMatmul time (ns) and kernel count.
	GMM Stat
	// Tokens sums the first input's first dimension of every GroupedMatmul
	// (moe.gmm.tokens); valid when HaveTokens.
	Tokens     int64
	HaveTokens bool
	// Hot marks the rank with the most GroupedMatmul time in its group.
	Hot bool
}

// EPGroupSkew is one EP group's skew.
type EPGroupSkew struct {
	GlobalRanks []int // every member, from parallel_group_info
	Ranks       []int // members present in the profile with GroupedMatmul kernels
	// MaxOverMean is max/mean over Ranks of GroupedMatmul time.
	MaxOverMean float64
	MaxRank     int
	// TokensMaxOverMean is the same over tokens; valid when HaveTokens.
	TokensMaxOverMean float64
	HaveTokens        bool
	// LostNs is the estimated MoE time lost to imbalance: per MoE layer
	// (LostBy "layer") or per GroupedMatmul kernel (LostBy "kernel"), the
	// slowest rank's GroupedMatmul time minus the mean, summed. LostBy is
	// "" when the ranks' layers cannot be aligned (LostWhy says why).
	LostNs  float64
	LostBy  string
	LostWhy string
}

// ExpertsPass measures expert load imbalance from the expert input and
// per-EP-rank GroupedMatmul skew from every rank's EPLoadPass result.
var ExpertsPass = &ClusterPass{
	Name: "experts",
	Doc: `expert hotness, EP-rank skew and the predicted effect of an EPLB plan

experts.imbalance.* compare each MoE layer's most loaded expert with the
layer's mean expert load (needs an expert input: MindIE dumps or a
layer,expert,tokens CSV). experts.rank_imbalance.* compare EP ranks'
measured token loads (dumps of two ranks or more). experts.eplb.* predict
max/mean rank load before and after ` + "`npuprof eplb plan`" + `.
skew.moe.gmm.* compare the GroupedMatmul time and tokens of the ranks of
each ep group in parallel_group_info; skew.moe.gmm.lost.time_us sums, per
MoE layer, the slowest EP rank's GroupedMatmul time minus the mean.

A partial dump (PartialDump: the dumps of some EP ranks only, whose
deployment JSON or model_gen_config.json shows experts, or copies of them,
without a dump; or a layer,expert,tokens CSV without a row for some expert
in some layer, a missing row being an unknown load, not 0 tokens) keeps what was dumped (experts.layers.count, experts.count,
experts.tokens.count, experts.rank_imbalance.*, the per-slot loads) but
leaves experts.imbalance.*, experts.hot.share.max and experts.eplb.*
unavailable with the reason, which says what is missing: a ratio to a
layer's load and a plan need every expert's load. No hot experts are
listed and no plan is predicted.`,
	Metrics: expertsMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		res := &ExpertsResult{Loads: ctx.Experts}
		res.EP = epSkew(ctx)
		expertMetrics(ctx, res, ctx.Experts)
		logMetrics(ctx, res, ctx.Experts)
		return res, nil
	},
}

// ExpertsOf is the expert-load and EP-rank skew analysis (experts.*,
// skew.moe.gmm.*).
var ExpertsOf = ClusterResultOf[*ExpertsResult](ExpertsPass)

// Metric helpers of cluster passes (profile-level metrics).
func (c *ClusterContext) set(name string, v float64) { c.cluster.Metrics[name] = v }

func (c *ClusterContext) setCount(name string, n int) { c.cluster.Metrics[name] = float64(n) }

func (c *ClusterContext) unavailable(why string, names ...string) {
	for _, n := range names {
		c.cluster.Unavailable[n] = why
	}
}

// noLoads is why per-expert metrics are unavailable without an input.
const noLoads = "no per-expert loads: profiling data has no per-expert counts; give --experts PATH " +
	"(MindIE {decode|prefill}_{rank}.csv dumps or a layer,expert,tokens CSV) or put the dumps in the profile folder"

var loadMetricNames = []string{MetricExpertsImbalanceMax, MetricExpertsImbalanceMean, MetricExpertsImbalanceMaxLayer,
	MetricExpertsHotShareMax, MetricExpertsLayersCount, MetricExpertsCount, MetricExpertsTokensCount}

var eplbMetricNames = []string{MetricEPLBRanks, MetricEPLBRedundant, MetricEPLBBeforeMax, MetricEPLBBeforeMean,
	MetricEPLBAfterMax, MetricEPLBAfterMean, MetricEPLBMaxLoadReduction}

func expertMetrics(ctx *ClusterContext, res *ExpertsResult, x *model.ExpertLoads) {
	if !x.HasLoads() {
		why := noLoads
		if x != nil {
			why = "the expert input (" + x.Source + ") has only log lines: per-rank imbalance, no per-expert counts"
		}
		ctx.unavailable(why, loadMetricNames...)
		ctx.unavailable(why, MetricExpertsRankImbalanceMax, MetricExpertsRankImbalanceMean)
		ctx.unavailable(why, eplbMetricNames...)
		return
	}
	observed := 0
	for e := 0; e < x.NumExperts; e++ {
		if x.IsObserved(e) {
			observed++
		}
	}
	partial := PartialDump(x)
	agg := expertLayerStats(res, x, observed, partial == "")
	for i, r := range x.RankIDs {
		rt := RankTokens{Rank: r}
		for _, l := range x.Layers {
			rt.Tokens += l.RankTokens[i]
		}
		res.DumpRanks = append(res.DumpRanks, rt)
	}

	ctx.setCount(MetricExpertsLayersCount, len(x.Layers))
	ctx.setCount(MetricExpertsCount, observed)
	ctx.set(MetricExpertsTokensCount, float64(agg.total))
	if partial != "" {
		// the dumped slots' loads stay; ratios to a layer's load and a plan need every expert's
		ctx.unavailable(partial, MetricExpertsImbalanceMax, MetricExpertsImbalanceMean,
			MetricExpertsImbalanceMaxLayer, MetricExpertsHotShareMax)
		ctx.unavailable(partial, eplbMetricNames...)
		rankImbalanceMetrics(ctx, res, x)
		return
	}
	if agg.withLoad == 0 {
		ctx.unavailable("every layer of the expert input has 0 tokens", MetricExpertsImbalanceMax, MetricExpertsImbalanceMean,
			MetricExpertsImbalanceMaxLayer, MetricExpertsHotShareMax)
	} else {
		ctx.set(MetricExpertsImbalanceMax, agg.maxRatio)
		ctx.set(MetricExpertsImbalanceMean, agg.sumRatio/float64(agg.withLoad))
		ctx.setCount(MetricExpertsImbalanceMaxLayer, agg.maxLayer)
		ctx.set(MetricExpertsHotShareMax, agg.maxShare)
	}
	rankImbalanceMetrics(ctx, res, x)
	eplbMetrics(ctx, res, x)
}

// layerAgg sums the per-layer expert statistics over the layers.
type layerAgg struct {
	sumRatio, maxRatio, maxShare float64
	maxLayer, withLoad           int
	total                        int64
}

// expertLayerStats fills res.Layers and res.Hot from the per-expert loads
// of x (observed experts only) and returns the sums over layers; without
// whole (PartialDump) no ratio to a layer's load is taken.
func expertLayerStats(res *ExpertsResult, x *model.ExpertLoads, observed int, whole bool) layerAgg {
	agg := layerAgg{maxLayer: -1}
	var all []HotExpert
	for _, l := range x.Layers {
		st := ExpertLayerStat{Layer: l.ID, MaxExpert: -1}
		for e, v := range l.Tokens {
			if !x.IsObserved(e) {
				continue
			}
			st.Tokens += v
			if st.MaxExpert < 0 || v > st.MaxTokens {
				st.MaxExpert, st.MaxTokens = e, v
			}
		}
		agg.total += st.Tokens
		if st.Tokens > 0 && observed > 0 && whole {
			st.HasLoad = true
			st.Mean = float64(st.Tokens) / float64(observed)
			st.MaxOverMean = float64(st.MaxTokens) / st.Mean
			agg.withLoad++
			agg.sumRatio += st.MaxOverMean
			if st.MaxOverMean > agg.maxRatio {
				agg.maxRatio, agg.maxLayer = st.MaxOverMean, l.ID
			}
			layerHot := hotExperts(x, l, st)
			all = append(all, layerHot...)
			st.Top = append([]HotExpert(nil), layerHot[:min(HotExpertsPerLayer, len(layerHot))]...)
			agg.maxShare = max(agg.maxShare, layerHot[0].Share)
		}
		if len(l.RankTokens) >= 2 {
			rt := make([]float64, len(l.RankTokens))
			for i, v := range l.RankTokens {
				rt[i] = float64(v)
			}
			st.RankMaxOverMean, st.HasRank = eplb.MaxOverMean(rt)
		}
		res.Layers = append(res.Layers, st)
	}
	sortHot(all)
	res.Hot = all[:min(HotExpertsTop, len(all))]
	return agg
}

// hotExperts lists layer l's observed experts with tokens, hottest first.
func hotExperts(x *model.ExpertLoads, l model.ExpertLayer, st ExpertLayerStat) []HotExpert {
	var layerHot []HotExpert
	for e, v := range l.Tokens {
		if x.IsObserved(e) && v > 0 {
			h := HotExpert{Layer: l.ID, Expert: e, Tokens: v, Share: float64(v) / float64(st.Tokens), MaxOverMean: float64(v) / st.Mean}
			layerHot = append(layerHot, h)
		}
	}
	sortHot(layerHot)
	return layerHot
}

// rankImbalanceMetrics sets the per-rank imbalance over the layers that
// carry per-rank loads.
func rankImbalanceMetrics(ctx *ClusterContext, res *ExpertsResult, x *model.ExpertLoads) {
	var rSum, rMax float64
	rN := 0
	for _, st := range res.Layers {
		if st.HasRank {
			rSum += st.RankMaxOverMean
			rMax = max(rMax, st.RankMaxOverMean)
			rN++
		}
	}
	if rN > 0 {
		ctx.set(MetricExpertsRankImbalanceMax, rMax)
		ctx.set(MetricExpertsRankImbalanceMean, rSum/float64(rN))
		return
	}
	why := "needs per-rank loads of two EP ranks or more (MindIE dumps of several ranks)"
	if len(x.RankIDs) == 1 {
		why = fmt.Sprintf("the dumps cover one rank (%d); per-rank imbalance needs two or more", x.RankIDs[0])
	}
	ctx.unavailable(why, MetricExpertsRankImbalanceMax, MetricExpertsRankImbalanceMean)
}

// eplbMetrics predicts the EPLB placement's effect and the plan command.
func eplbMetrics(ctx *ClusterContext, res *ExpertsResult, x *model.ExpertLoads) {
	pred, why := predictEPLB(x, res.EP)
	if pred == nil {
		ctx.unavailable(why, eplbMetricNames...)
		return
	}
	res.EPLB = pred
	res.PlanCommand = fmt.Sprintf("npuprof eplb plan --experts %s --redundant %d", shellQuote(x.Source), pred.Redundant)
	if x.Placement.Ranks() != pred.Ranks {
		res.PlanCommand += fmt.Sprintf(" --ep-size %d", pred.Ranks)
	}
	if x.Stage == "prefill" {
		res.PlanCommand += " --stage prefill"
	}
	res.PlanCommand += " -o expert_map.json"
	ctx.setCount(MetricEPLBRanks, pred.Ranks)
	ctx.setCount(MetricEPLBRedundant, pred.Redundant)
	ctx.set(MetricEPLBBeforeMax, pred.Before.Max)
	ctx.set(MetricEPLBBeforeMean, pred.Before.Mean)
	ctx.set(MetricEPLBAfterMax, pred.After.Max)
	ctx.set(MetricEPLBAfterMean, pred.After.Mean)
	if pred.Before.MaxLoad > 0 {
		ctx.set(MetricEPLBMaxLoadReduction, 1-pred.After.MaxLoad/pred.Before.MaxLoad)
	}
}

// sortHot orders by share, then tokens, then layer and expert.
func sortHot(h []HotExpert) {
	slices.SortFunc(h, func(a, b HotExpert) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(b.Tokens, a.Tokens),
			cmp.Compare(a.Layer, b.Layer), cmp.Compare(a.Expert, b.Expert))
	})
}

// ExpertTokens returns loads[l][e] of x, for the planner.
func ExpertTokens(x *model.ExpertLoads) [][]int64 {
	out := make([][]int64, len(x.Layers))
	for i, l := range x.Layers {
		out[i] = l.Tokens
	}
	return out
}

// PlanRanks is the EP size a plan for x targets by default: the ranks of
// its placement, else the size of the trace's largest EP group (0 when
// unknown).
func PlanRanks(x *model.ExpertLoads, ep *EPSkew) int {
	if r := x.Placement.Ranks(); r > 0 {
		return r
	}
	n := 0
	if ep != nil {
		for _, g := range ep.Groups {
			n = max(n, len(g.GlobalRanks))
		}
	}
	return n
}

// BeforePlacement is the placement a plan is compared with: x's own when
// it has ranks ranks and a slot for every expert, else vLLM's default
// contiguous split without redundancy.
func BeforePlacement(x *model.ExpertLoads, ranks int) (*model.Deployment, string, error) {
	if p := x.Placement; p != nil && !x.PlacementFromSlots && p.Ranks() == ranks && len(p.Layers) == len(x.Layers) {
		return p, "expert map", nil
	}
	d, err := eplb.DefaultPlacement(x.NumExperts, ranks, 0, len(x.Layers))
	return d, "default layout", err
}

// PartialDump is why x holds the loads of only some of the model's
// experts, "" when it does not say so. A MindIE dump is partial when
//
//   - it has no deployment JSON that fits (slot positions are taken as
//     expert ids) and its slots are fewer than model_gen_config.json's
//     experts;
//   - its deployment JSON places experts on EP ranks that have no dump:
//     the experts there, and every copy of an expert there, have an
//     unknown load;
//   - without a deployment JSON, ranks below the highest dumped one have
//     no dump (their slots' experts are unknown);
//   - some expert is in no dumped slot in some layer (a deployment that
//     leaves out experts model_gen_config.json counts).
//
// A layer,expert,tokens CSV is partial when some expert below its highest
// id (or below the num_of_experts of a model_gen_config.json beside it)
// has no row in some layer: a missing row is an unknown load, not 0
// tokens (a row with 0 is a known 0).
//
// Taken as the whole model they would be other loads than the served
// model's: eplb plan refuses them and analyze takes no ratio to a layer's
// load or plan from them.
func PartialDump(x *model.ExpertLoads) string {
	const need = "a plan and an expert's ratio to its layer's load need every expert's load"
	if x != nil && x.Format == model.ExpertFormatCSV && x.HasLoads() && x.Observed != nil {
		return partialCSV(x)
	}
	if x == nil || x.Format != model.ExpertFormatMindIEDump || !x.HasLoads() {
		return ""
	}
	if x.PlacementFromSlots && x.Config != nil && x.Config.NumExperts > x.NumExperts && x.Placement.SlotsPerRank() > 0 {
		slots := x.Placement.SlotsPerRank()
		known := 0
		for e := 0; e < x.NumExperts; e++ {
			if x.IsObserved(e) {
				known++
			}
		}
		return fmt.Sprintf("the dumps hold the loads of %d of the model's %d experts (model_gen_config.json num_of_experts), from %d EP rank(s) of %d slots: "+need+" (dumps of every EP rank: %d or more at %d slots each)",
			known, x.Config.NumExperts, len(x.RankIDs), slots, (x.Config.NumExperts+slots-1)/slots, slots)
	}
	missing := undumpedRanks(x)
	if len(missing) > 0 && !x.PlacementFromSlots {
		// every expert with a slot on an undumped rank, in any layer
		there := make([]bool, x.NumExperts)
		n := 0
		for _, l := range x.Placement.Layers {
			for _, r := range missing {
				if r >= len(l.Devices) {
					continue
				}
				for _, e := range l.Devices[r] {
					if e >= 0 && e < len(there) && !there[e] {
						there[e] = true
						n++
					}
				}
			}
		}
		if n > 0 {
			return fmt.Sprintf("the dumps cover %d of the %d EP ranks of %s_global_deployment.json (no dump of rank(s) %s): %d of the model's %d experts have a slot on those ranks, whose load is unknown: "+need+" (dumps of every EP rank: %d)",
				len(x.RankIDs), x.Placement.Ranks(), x.Stage, rankList(missing), n, x.NumExperts, x.Placement.Ranks())
		}
	}
	if len(missing) > 0 && x.Observed != nil {
		return fmt.Sprintf("the dumps cover EP ranks %s but not %s (expert ids are slot positions: no deployment JSON fits the dumps): the loads of the %d experts in those ranks' slots are unknown: "+need+" (dumps of every EP rank: %d or more)",
			rankList(x.RankIDs), rankList(missing), len(missing)*x.Placement.SlotsPerRank(), x.Placement.Ranks())
	}
	if x.Observed != nil {
		var unknown []int
		for e := 0; e < x.NumExperts; e++ {
			if !x.IsObserved(e) {
				unknown = append(unknown, e)
			}
		}
		return fmt.Sprintf("the loads of %d of the model's %d experts are unknown (expert(s) %s: in no dumped slot of some layer): "+need,
			len(unknown), x.NumExperts, rankList(unknown))
	}
	return ""
}

// partialCSV is why a layer,expert,tokens CSV with unobserved experts is
// partial: which experts lack a row in some layer.
func partialCSV(x *model.ExpertLoads) string {
	var unknown []int
	for e := 0; e < x.NumExperts; e++ {
		if !x.IsObserved(e) {
			unknown = append(unknown, e)
		}
	}
	if x.Config != nil && x.Config.NumExperts == x.NumExperts {
		return fmt.Sprintf("the layer,expert,tokens CSV has no row for %d of the model's %d experts (model_gen_config.json num_of_experts) in some layer (expert(s) %s): "+
			"a missing row is an unknown load, not 0 tokens: a plan and an expert's ratio to its layer's load need every expert's load (a row for every expert in every layer, tokens 0 for one that got none)",
			len(unknown), x.NumExperts, rankList(unknown))
	}
	return fmt.Sprintf("the layer,expert,tokens CSV has no row for %d of its %d experts (ids 0..%d) in some layer (expert(s) %s): "+
		"a missing row is an unknown load, not 0 tokens: a plan and an expert's ratio to its layer's load need every expert's load (a row for every expert in every layer, tokens 0 for one that got none)",
		len(unknown), x.NumExperts, x.NumExperts-1, rankList(unknown))
}

// undumpedRanks are the EP ranks of x's placement that have no dump.
func undumpedRanks(x *model.ExpertLoads) []int {
	var missing []int
	for r := 0; r < x.Placement.Ranks(); r++ {
		if !slices.Contains(x.RankIDs, r) {
			missing = append(missing, r)
		}
	}
	return missing
}

func predictEPLB(x *model.ExpertLoads, ep *EPSkew) (*EPLBPrediction, string) {
	if x.Observed != nil {
		return nil, "the loads of some experts are unknown (dumps of some ranks only): a plan needs every expert's load"
	}
	ranks := PlanRanks(x, ep)
	if ranks < 2 {
		return nil, "EP size unknown or 1: no expert map with the dumps and no ep group of two ranks or more in the trace"
	}
	n := eplb.AutoRedundant(x.NumExperts, ranks)
	before, from, err := BeforePlacement(x, ranks)
	if err != nil {
		return nil, err.Error()
	}
	tok := ExpertTokens(x)
	cur := (*model.Deployment)(nil)
	if from == "expert map" {
		cur = before
	}
	plan, err := eplb.Plan(tok, ranks, n, cur)
	if err != nil {
		return nil, "no plan: " + err.Error()
	}
	b, err := eplb.Predict(before, tok)
	if err != nil {
		return nil, err.Error()
	}
	a, err := eplb.Predict(plan, tok)
	if err != nil {
		return nil, err.Error()
	}
	if a.Layers == 0 || b.Layers == 0 {
		return nil, "every layer of the expert input has 0 tokens"
	}
	return &EPLBPrediction{Ranks: ranks, Redundant: n, Slots: (x.NumExperts + n) / ranks, BeforeFrom: from, Before: b, After: a,
		Planned: plan, Tokens: tok}, ""
}

// logMetrics reads the latest imbalance figures out of the log lines.
func logMetrics(ctx *ClusterContext, res *ExpertsResult, x *model.ExpertLoads) {
	if x == nil || len(x.Logs) == 0 {
		return
	}
	ctx.setCount(MetricLogLinesCount, len(x.Logs))
	var summary, step *model.ExpertLog
	model1 := ""
	for i := range x.Logs {
		e := &x.Logs[i]
		switch e.Kind {
		case model.LogMoELoadStats, model.LogExpertHotness, model.LogHotnessImbalance:
			summary = e
		case model.LogMoELoadStatsLayer:
			if res.LogLayers == nil {
				res.LogLayers = map[int]float64{}
			}
			res.LogLayers[e.Layer] = e.Values["par"]
		case model.LogEPLBStep:
			if model1 == "" {
				model1 = e.Model
			}
			if e.Model == model1 {
				step = e // the main model's line, not a drafter's
			}
		}
	}
	if summary != nil {
		for k, name := range map[string]string{"mean": MetricLogRankImbalanceMean, "max": MetricLogRankImbalanceMax,
			"min": MetricLogRankImbalanceMin, "updated_mean": MetricLogUpdatedMean, "updated_max": MetricLogUpdatedMax} {
			if v, ok := summary.Values[k]; ok {
				ctx.set(name, v)
			}
		}
	}
	if step != nil {
		ctx.set(MetricLogBalancedness, step.Values["balancedness"])
		ctx.set(MetricLogAvgTokens, step.Values["avg_tokens"])
		ctx.set(MetricLogMaxTokens, step.Values["max_tokens"])
	}
}

// EPLoadResult is one rank's GroupedMatmul work and expert-parallel group,
// kept so the cluster experts pass can compare EP ranks without the model.
type EPLoadResult struct {
	// GlobalRanks are the members of the rank's ep group (sorted), nil when
	// parallel_group_info has no ep group.
	GlobalRanks []int
	// GMM is the GroupedMatmul total time (ns) and count, Tokens the sum of
	// their first input's first dimension (valid when HaveTokens).
	GMM        Stat
	Tokens     int64
	HaveTokens bool
	// Layers is the GroupedMatmul time (ns) of each MoE layer occurrence
	// (routing kernel to the next routing kernel on its stream), in order;
	// Kernels every GroupedMatmul duration in order, kept only when no MoE
	// layer was found (e.g. MC2 paths without MoeInitRouting). Both are
	// nil when there are more than maxEPLoadSeries (TooMany set).
	Layers, Kernels []int64
	TooMany         int
	// Dispatch and Combine are, per MoE layer occurrence in order, the
	// dispatch kernel's time (the MC2/All2All opener; fused MC2's one
	// kernel) and the layer's combine kernels' time (ns), for the moe_wait
	// cluster pass; nil on the AllGather path, which has no dispatch
	// kernel, and with TooMany.
	Dispatch, Combine []int64
	// seriesAt holds Layers, Kernels, Dispatch and Combine while they wait
	// in a spill file for the cluster passes (RankResult.Spill; they are
	// nil then, and read back by RunClusterWith).
	seriesAt replay.Ref
}

// spillSeries moves r's series to s (they stay when the write fails): a
// finished rank keeps them only for the cluster passes, ~4 KiB at 94
// layers x 4 steps.
func (r *EPLoadResult) spillSeries(s *replay.Spill) {
	all := [...][]int64{r.Layers, r.Kernels, r.Dispatch, r.Combine}
	var b []byte
	for _, xs := range all {
		b = binary.AppendUvarint(b, uint64(len(xs)))
		for _, x := range xs {
			b = binary.AppendVarint(b, x)
		}
	}
	if len(b) == len(all) {
		return // all empty
	}
	if at, ok := s.Put(b); ok {
		r.seriesAt, r.Layers, r.Kernels, r.Dispatch, r.Combine = at, nil, nil, nil, nil
	}
}

// readSeries reads r's series back from the spill file, if they are there.
func (r *EPLoadResult) readSeries() {
	if !r.seriesAt.Spilled() {
		return
	}
	b := r.seriesAt.Read(nil)
	for _, xs := range [...]*[]int64{&r.Layers, &r.Kernels, &r.Dispatch, &r.Combine} {
		n, k := binary.Uvarint(b)
		b = b[k:]
		*xs = nil
		if n > 0 {
			*xs = make([]int64, n)
		}
		for i := range *xs {
			v, k := binary.Varint(b)
			(*xs)[i], b = v, b[k:]
		}
	}
	r.seriesAt = replay.Ref{}
}

// maxEPLoadSeries bounds the per-rank series kept for cross-rank alignment
// (a capture of 1000 decode steps of 94 layers is 94 K).
const maxEPLoadSeries = 1 << 18

// EPLoadPass records, per rank, what the experts cluster pass compares
// across the ranks of an ep group.
var EPLoadPass = &Pass{
	Name: "ep_load",
	Doc: `GroupedMatmul work per MoE layer and the rank's ep group

Per rank: the ep group of parallel_group_info (names ep, exp), the total
GroupedMatmul time and tokens, and the GroupedMatmul time of each MoE layer
occurrence, for the experts cluster pass (skew.moe.gmm.*).`,
	Requires: []*Pass{TimelinePass, MoEPass},
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		moe := MoEOf(ctx)
		tl := TimelineOf(ctx)
		res := &EPLoadResult{}
		for i := range r.Groups {
			if isEPGroup(r.Groups[i].Name) {
				// the model's list, sorted, is the one kept copy every rank
				// of the group shares (a world group of 2048 ranks copied
				// per rank was 16 KiB a rank); nothing writes into it
				res.GlobalRanks = r.Groups[i].GlobalRanks
				if !slices.IsSorted(res.GlobalRanks) {
					res.GlobalRanks = slices.Sorted(slices.Values(res.GlobalRanks))
				}
				break
			}
		}
		if moe == nil {
			return res, nil
		}
		res.GMM, res.Tokens, res.HaveTokens = moe.GMM, moe.GMMTokens, moe.HaveShapes
		n := 0
		for li := range moe.Layers {
			if len(moe.LayerGMM(li)) > 0 {
				n++
			}
		}
		if n > maxEPLoadSeries || (n == 0 && moe.GMM.Count > maxEPLoadSeries) {
			res.TooMany = max(n, moe.GMM.Count)
			return res, nil
		}
		for li := range moe.Layers {
			gmm := moe.LayerGMM(li)
			if len(gmm) == 0 {
				continue
			}
			var ns int64
			for _, i := range gmm {
				ns += r.Dur(&r.Tasks[i])
			}
			res.Layers = append(res.Layers, ns)
		}
		epDispatchSeries(r, moe, res)
		if n == 0 && tl != nil {
			roles := newNameOpMemo(r, moeRole)
			for _, i := range tl.ComputeTasks {
				if roles.get(&r.Tasks[i]) == roleGMM {
					res.Kernels = append(res.Kernels, r.Dur(&r.Tasks[i]))
				}
			}
		}
		return res, nil
	},
}

// epDispatchSeries records each MoE layer's dispatch and combine time
// when the layers are opened by a dispatch kernel (not the AllGather path).
func epDispatchSeries(r *model.Rank, moe *MoEResult, res *EPLoadResult) {
	if moe.Dispatcher == "" || moe.Dispatcher == DispatcherAllGather || len(moe.Layers) > maxEPLoadSeries {
		return
	}
	res.Dispatch = make([]int64, 0, len(moe.Layers))
	res.Combine = make([]int64, 0, len(moe.Layers))
	for li, l := range moe.Layers {
		if l.Path != moe.Dispatcher {
			continue
		}
		var c int64
		for _, i := range moe.LayerCombine(li) {
			c += r.Dur(&r.Tasks[i])
		}
		res.Dispatch = append(res.Dispatch, r.Dur(&r.Tasks[l.Routing]))
		res.Combine = append(res.Combine, c)
	}
}

// EPLoadOf is the rank's GroupedMatmul work and ep group, for the
// cluster experts pass (which never reads models).
var EPLoadOf = RankResultOf[*EPLoadResult](EPLoadPass)

func isEPGroup(name string) bool {
	for _, n := range EPGroupNames {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// epSkewNames are the metrics epSkew sets.
var epSkewNames = []string{MetricSkewGMMMaxOverMean, MetricSkewGMMMaxRank, MetricSkewGMMTokensMaxOverMean, MetricSkewGMMLostUs, MetricSkewGMMRanksCount}

// epMember is one rank of an ep group with its GroupedMatmul work.
type epMember struct {
	rank int
	ep   *EPLoadResult
}

// epInstance is one ep communicator: its global ranks and the members
// that ran GroupedMatmul.
type epInstance struct {
	global  []int
	members []epMember
}

// epSkew groups ranks by their ep communicator and compares their
// GroupedMatmul work.
func epSkew(ctx *ClusterContext) *EPSkew {
	byKey, noMoE := epInstances(ctx)
	if len(byKey) == 0 {
		ctx.unavailable("no ep group in parallel_group_info (expert parallel off, or profiler_metadata.json missing)", epSkewNames...)
		return nil
	}
	res := &EPSkew{Worst: -1}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		in := byKey[k]
		if len(in.members) < 2 {
			continue
		}
		gi := len(res.Groups)
		g := epGroupSkew(res, in, gi)
		res.Groups = append(res.Groups, g)
		if res.Worst < 0 || g.MaxOverMean > res.Groups[res.Worst].MaxOverMean {
			res.Worst = gi
		}
	}
	if len(res.Groups) == 0 {
		why := "fewer than two ranks of any ep group have GroupedMatmul kernels in this profile"
		if len(noMoE) > 0 {
			slices.Sort(noMoE)
			why += " (no GroupedMatmul on ranks " + joinInts(noMoE) + ")"
		}
		ctx.unavailable(why, epSkewNames...)
		return nil
	}
	slices.SortFunc(res.Ranks, func(a, b EPRankLoad) int { return cmp.Compare(a.Rank, b.Rank) })
	epSkewMetrics(ctx, res)
	return res
}

// epInstances groups the ranks by ep communicator (keyed by its global
// ranks) and lists the ranks of a group that ran no GroupedMatmul.
func epInstances(ctx *ClusterContext) (map[string]*epInstance, []int) {
	byKey := map[string]*epInstance{}
	var noMoE []int
	for _, rr := range ctx.Ranks {
		ep := EPLoadOf(rr)
		if ep == nil || ep.GlobalRanks == nil {
			continue
		}
		key := fmt.Sprint(ep.GlobalRanks)
		in := byKey[key]
		if in == nil {
			in = &epInstance{global: ep.GlobalRanks}
			byKey[key] = in
		}
		if ep.GMM.Count == 0 {
			noMoE = append(noMoE, rr.Rank)
			continue
		}
		in.members = append(in.members, epMember{rr.Rank, ep})
	}
	return byKey, noMoE
}

// epGroupSkew compares the members of one ep group (group index gi) and
// appends their rows to res.Ranks.
func epGroupSkew(res *EPSkew, in *epInstance, gi int) EPGroupSkew {
	slices.SortFunc(in.members, func(a, b epMember) int { return cmp.Compare(a.rank, b.rank) })
	g := EPGroupSkew{GlobalRanks: in.global}
	times := make([]float64, len(in.members))
	toks := make([]float64, len(in.members))
	eps := make([]*EPLoadResult, len(in.members))
	rks := make([]int, len(in.members))
	g.HaveTokens = true
	best := 0
	for i, m := range in.members {
		g.Ranks = append(g.Ranks, m.rank)
		times[i] = float64(m.ep.GMM.Total)
		toks[i] = float64(m.ep.Tokens)
		eps[i], rks[i] = m.ep, m.rank
		g.HaveTokens = g.HaveTokens && m.ep.HaveTokens
		if m.ep.GMM.Total > in.members[best].ep.GMM.Total {
			best = i
		}
	}
	g.MaxRank = in.members[best].rank
	g.MaxOverMean, _ = eplb.MaxOverMean(times)
	if g.HaveTokens {
		var ok bool
		g.TokensMaxOverMean, ok = eplb.MaxOverMean(toks)
		g.HaveTokens = ok
	}
	g.LostNs, g.LostBy, g.LostWhy = lostTime(eps, rks)
	for i, m := range in.members {
		res.Ranks = append(res.Ranks, EPRankLoad{Rank: m.rank, Group: gi, GMM: m.ep.GMM,
			Tokens: m.ep.Tokens, HaveTokens: m.ep.HaveTokens, Hot: i == best})
	}
	return g
}

// epSkewMetrics sets the worst group's skew and the lost time.
func epSkewMetrics(ctx *ClusterContext, res *EPSkew) {
	w := res.Groups[res.Worst]
	ctx.set(MetricSkewGMMMaxOverMean, w.MaxOverMean)
	ctx.setCount(MetricSkewGMMMaxRank, w.MaxRank)
	ctx.setCount(MetricSkewGMMRanksCount, len(w.Ranks))
	if w.HaveTokens {
		ctx.set(MetricSkewGMMTokensMaxOverMean, w.TokensMaxOverMean)
	} else {
		ctx.unavailable("GroupedMatmul input shapes are not recorded on every EP rank (no kernel_details.csv Input Shapes)", MetricSkewGMMTokensMaxOverMean)
	}
	// Lost time: the worst group's, the groups run side by side.
	lost, have := 0.0, false
	var whys []string
	for _, g := range res.Groups {
		if g.LostBy != "" {
			lost, have = max(lost, g.LostNs), true
		} else {
			whys = append(whys, g.LostWhy)
		}
	}
	if have {
		ctx.set(MetricSkewGMMLostUs, lost/1000)
	} else {
		ctx.unavailable(strings.Join(whys, "; "), MetricSkewGMMLostUs)
	}
}

// lostTime sums, per aligned MoE layer (or, failing that, per aligned
// GroupedMatmul kernel), the slowest rank's time minus the mean.
func lostTime(ms []*EPLoadResult, ranks []int) (float64, string, string) {
	for i, m := range ms {
		if m.TooMany > 0 {
			return 0, "", fmt.Sprintf("rank %d ran %d MoE layers, more than npuprof aligns (%d)", ranks[i], m.TooMany, maxEPLoadSeries)
		}
	}
	same := func(n func(*EPLoadResult) int) bool {
		for _, m := range ms[1:] {
			if n(m) != n(ms[0]) {
				return false
			}
		}
		return n(ms[0]) > 0
	}
	var series func(*EPLoadResult) []int64
	by := ""
	switch {
	case same(func(m *EPLoadResult) int { return len(m.Layers) }):
		series, by = func(m *EPLoadResult) []int64 { return m.Layers }, "layer"
	case same(func(m *EPLoadResult) int { return len(m.Kernels) }):
		series, by = func(m *EPLoadResult) []int64 { return m.Kernels }, "kernel"
	default:
		var parts []string
		for i, m := range ms {
			parts = append(parts, fmt.Sprintf("rank %d: %d", ranks[i], len(m.Layers)))
		}
		return 0, "", "EP ranks ran different numbers of MoE layers (" + strings.Join(parts, ", ") + "): cannot align them"
	}
	n := len(series(ms[0]))
	r := int64(len(ms))
	var sum int64 // sum over k of (r*max - total): exact in integers
	for k := 0; k < n; k++ {
		var mx, tot int64
		for _, m := range ms {
			v := series(m)[k]
			mx = max(mx, v)
			tot += v
		}
		sum += r*mx - tot
	}
	return float64(sum) / float64(r), by, ""
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
