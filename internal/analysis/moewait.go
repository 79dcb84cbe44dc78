package analysis

import (
	"fmt"
	"slices"
	"strings"
)

// Metrics of the moe_wait cluster pass.
const (
	MetricMoEDispatchWaitLayerUs = "moe.dispatch.wait.per_layer.time_us" // µs: per MoE layer, the dispatch kernel's time beyond the EP group's shortest for that layer (waiting for the slowest rank), mean over ranks
	MetricMoECombineWaitLayerUs  = "moe.combine.wait.per_layer.time_us"  // µs: the same for the combine kernels
	MetricMoEDispatchWaitShare   = "moe.dispatch_combine.wait.share"     // ratio: those waits over the dispatch + combine time of the ranks compared
)

var moeWaitNames = []string{MetricMoEDispatchWaitLayerUs, MetricMoECombineWaitLayerUs, MetricMoEDispatchWaitShare}

// MoEWaitResult is the part of the dispatch and combine kernels' time that
// is waiting for the slowest rank of the EP group, estimated per layer.
type MoEWaitResult struct {
	// Ranks are the ranks compared (every EP group with two or more
	// ranks that ran the same number of dispatch kernels), sorted.
	Ranks []int
	// RankLayers counts the (rank, MoE layer) pairs compared.
	RankLayers int
	// DispatchWait, CombineWait and Busy are sums over those ranks and
	// layers (ns): the estimated waits, and dispatch + combine time.
	DispatchWait, CombineWait, Busy int64
}

// MoEWaitPass estimates how long the dispatch and combine kernels wait.
var MoEWaitPass = &ClusterPass{
	Name: "moe_wait",
	Doc: `the wait inside MoE dispatch and combine, from their spread across EP ranks

On the MC2 (and fused MC2, All2All) dispatcher the token exchange runs
inside the dispatch and combine kernels, and a fast rank waits inside them
for the slowest rank of its EP group. The k-th MoE layer's dispatch on each
rank of an ep group (parallel_group_info) is the same exchange: its
duration beyond the group's shortest for that layer is waiting (the rank
that arrives last waits least). moe.dispatch.wait.per_layer.time_us and
moe.combine.wait.per_layer.time_us are those excesses per layer, mean
over the ranks compared; moe.dispatch_combine.wait.share is their sum over
the dispatch + combine time. An estimate: the shortest rank's own wait and
any transfer-time spread count as work.`,
	Metrics: moeWaitMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		res := &MoEWaitResult{}
		groups, why := moeWaitGroups(ctx)
		if len(groups) == 0 {
			ctx.unavailable(why, moeWaitNames...)
			return res, nil
		}
		for _, g := range groups {
			addGroupWaits(res, g)
		}
		slices.Sort(res.Ranks)
		n := float64(res.RankLayers)
		ctx.set(MetricMoEDispatchWaitLayerUs, float64(res.DispatchWait)/n/1000)
		ctx.set(MetricMoECombineWaitLayerUs, float64(res.CombineWait)/n/1000)
		if res.Busy > 0 {
			ctx.set(MetricMoEDispatchWaitShare, float64(res.DispatchWait+res.CombineWait)/float64(res.Busy))
		} else {
			ctx.unavailable("the dispatch and combine kernels took no time", MetricMoEDispatchWaitShare)
		}
		ctx.cluster.used(res.Ranks, moeWaitNames...)
		return res, nil
	},
}

// MoEWaitOf is the moe_wait cluster pass's result.
var MoEWaitOf = ClusterResultOf[*MoEWaitResult](MoEWaitPass)

// moeWaitMember is one rank's dispatch and combine series.
type moeWaitMember struct {
	rank int
	ep   *EPLoadResult
}

// moeWaitGroups are the ep groups whose ranks (two or more) ran the same
// number of dispatch kernels; else why there is none.
func moeWaitGroups(ctx *ClusterContext) ([][]moeWaitMember, string) {
	by := map[string][]moeWaitMember{}
	var keys []string
	for _, rr := range ctx.Ranks {
		ep := EPLoadOf(rr)
		if ep == nil || ep.GlobalRanks == nil || len(ep.Dispatch) == 0 {
			continue
		}
		k := fmt.Sprint(ep.GlobalRanks)
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], moeWaitMember{rr.Rank, ep})
	}
	if len(keys) == 0 {
		return nil, "no ep group whose ranks ran MoE dispatch kernels (MoeDistributeDispatch*, DispatchFFNCombine, MoeTokenPermute): the AllGather dispatcher has none, or parallel_group_info has no ep group"
	}
	slices.Sort(keys)
	var out [][]moeWaitMember
	var whys []string
	for _, k := range keys {
		ms := by[k]
		switch {
		case len(ms) < 2:
			whys = append(whys, fmt.Sprintf("ep group %s: only rank %d is in the profile", k, ms[0].rank))
		case !sameLen(ms):
			var parts []string
			for _, m := range ms {
				parts = append(parts, fmt.Sprintf("rank %d: %d", m.rank, len(m.ep.Dispatch)))
			}
			whys = append(whys, fmt.Sprintf("ep group %s: its ranks ran different numbers of MoE layers (%s): cannot align them", k, strings.Join(parts, ", ")))
		default:
			out = append(out, ms)
		}
	}
	return out, strings.Join(whys, "; ")
}

func sameLen(ms []moeWaitMember) bool {
	for _, m := range ms[1:] {
		if len(m.ep.Dispatch) != len(ms[0].ep.Dispatch) {
			return false
		}
	}
	return true
}

// addGroupWaits adds one ep group's waits: per layer, each rank's time
// beyond the group's shortest.
func addGroupWaits(res *MoEWaitResult, ms []moeWaitMember) {
	n := len(ms[0].ep.Dispatch)
	for k := 0; k < n; k++ {
		d, c := ms[0].ep.Dispatch[k], ms[0].ep.Combine[k]
		for _, m := range ms[1:] {
			d, c = min(d, m.ep.Dispatch[k]), min(c, m.ep.Combine[k])
		}
		for _, m := range ms {
			res.DispatchWait += m.ep.Dispatch[k] - d
			res.CombineWait += m.ep.Combine[k] - c
			res.Busy += m.ep.Dispatch[k] + m.ep.Combine[k]
		}
	}
	for _, m := range ms {
		res.Ranks = append(res.Ranks, m.rank)
	}
	res.RankLayers += n * len(ms)
}
