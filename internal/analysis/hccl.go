package analysis

import (
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Stat is a count and a total duration (ns).
type Stat struct {
	Count int
	Total int64
}

func (s *Stat) add(d int64) { s.Count++; s.Total += d }

// HCCLResult aggregates collective big ops.
type HCCLResult struct {
	Total   Stat
	ByType  map[string]*Stat
	ByGroup map[string]*Stat
	// ByTypeGroup is keyed "type@group" ("allgather@ep"); group "?" when unknown.
	ByTypeGroup map[string]*Stat
	// Variants counts AICPU/AIV-unfolded collectives.
	ByVariant map[string]*Stat
	// UnknownGroup counts ops whose group could not be resolved.
	UnknownGroup Stat
	// Types and Groups in a stable order.
	Types, Groups []string
}

// Metrics of the hccl pass.
const (
	MetricHCCLTotalUs           = "hccl.total.time_us"         // µs: sum of HCCL big ops
	MetricHCCLTotalCount        = "hccl.total.count"           // count: number of HCCL big ops
	FamilyHCCLTypeUs     Family = "hccl.<type>.time_us"        // µs, base MetricHCCLTotalCount: HCCL big ops of one type: batchsendrecv, reducescatterv, reducescatter, allgatherv, allgather, allreduce, alltoallvc, alltoallv, alltoall, broadcast, receive, send, reduce, scatter, unknown
	FamilyHCCLTypeCount  Family = "hccl.<type>.count"          // count, base MetricHCCLTotalCount: number of HCCL big ops of one type
	FamilyHCCLGroupUs    Family = "hccl.group.<group>.time_us" // µs, base MetricHCCLTotalCount: HCCL big ops of one group (tp, ep, dp, ... from parallel_group_info)
	FamilyHCCLGroupCount Family = "hccl.group.<group>.count"   // count, base MetricHCCLTotalCount: number of HCCL big ops of one group
	// FamilyHCCLGroupTypeUs and ...Count have two variable parts: build
	// members with HCCLGroupTypeMetric.
	FamilyHCCLGroupTypeUs    Family = "hccl.group.<group>.<type>.time_us" // µs, base MetricHCCLTotalCount: HCCL big ops of one type in one group (hccl.group.tp.allgather.time_us: the tp group's all-gathers)
	FamilyHCCLGroupTypeCount Family = "hccl.group.<group>.<type>.count"   // count, base MetricHCCLTotalCount: number of HCCL big ops of one type in one group

	MetricHCCLPlaneSDMACount = "hccl.plane.sdma.count" // count: HCCL plane tasks (the Plane k threads of a Level1 trace_view.json) whose transport type is SDMA: collectives expanded on the AI CPU or host moving data with the on-chip DMA engines (none in AIV mode, HCCL_OP_EXPANSION_MODE=AIV)
	MetricHCCLPlaneRDMACount = "hccl.plane.rdma.count" // count: HCCL plane tasks whose transport type is RDMA: data sent to another node

	// UnavailableHCCLGroups is the unavailable key of the whole
	// hccl.group.<group>.* family.
	UnavailableHCCLGroups = "hccl.group.*"
)

// HCCLPass sums collective big ops by type and by group.
var HCCLPass = &Pass{
	Name: "hccl",
	Doc: `collectives by type and group

hccl.total.time_us/.count sum HCCL big ops (never plane tasks or hardware
subtasks); hccl.<type>.time_us/.count split them by lower-case type
(allreduce, allgather, reducescatter, alltoall, alltoallv, broadcast, send,
receive, batchsendrecv); hccl.group.<group>.time_us/.count by the group name
resolved from parallel_group_info through the hash token in the op name;
hccl.group.<group>.<type>.time_us/.count by both (e.g. the tp group's
all-gathers); hccl.plane.sdma.count and hccl.plane.rdma.count count the
plane tasks of a Level1 timeline by their args' transport type.`,
	Metrics: hcclMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		var res *HCCLResult
		switch {
		case r.Have.HCCL:
			res = hcclFromModel(r)
			ctx.From(r.Have.HCCLFile)
			checkAgainstCommunication(ctx, res)
		case len(r.Communication) > 0:
			res = hcclFromCommunication(ctx)
			ctx.From(r.Have.CommFile)
		default:
			ctx.UnavailableAll(noCollectives(ctx))
			return (*HCCLResult)(nil), nil
		}
		if p := r.HCCLPlane; p.Tasks > 0 {
			ctx.SetCount(MetricHCCLPlaneSDMACount, p.SDMA)
			ctx.SetCount(MetricHCCLPlaneRDMACount, p.RDMA)
		} else {
			ctx.Unavailable("no HCCL plane tasks in the profile (a Level1 trace_view.json records them on the HCCL process's Plane threads)", MetricHCCLPlaneSDMACount, MetricHCCLPlaneRDMACount)
		}
		ctx.SetUs(MetricHCCLTotalUs, res.Total.Total)
		ctx.SetCount(MetricHCCLTotalCount, res.Total.Count)
		for t, s := range res.ByType {
			ctx.SetUs(FamilyHCCLTypeUs.Of(t), s.Total)
			ctx.SetCount(FamilyHCCLTypeCount.Of(t), s.Count)
			res.Types = append(res.Types, t)
		}
		for g, s := range res.ByGroup {
			ctx.SetUs(FamilyHCCLGroupUs.Of(g), s.Total)
			ctx.SetCount(FamilyHCCLGroupCount.Of(g), s.Count)
			res.Groups = append(res.Groups, g)
		}
		for tg, s := range res.ByTypeGroup {
			t, g, _ := strings.Cut(tg, "@")
			if g != "?" {
				ctx.SetUs(HCCLGroupTypeMetric(FamilyHCCLGroupTypeUs, g, t), s.Total)
				ctx.SetCount(HCCLGroupTypeMetric(FamilyHCCLGroupTypeCount, g, t), s.Count)
			}
		}
		sort.Strings(res.Types)
		sort.Strings(res.Groups)
		if res.UnknownGroup.Count > 0 && len(r.Groups) == 0 {
			why := "profiler_metadata.json has no parallel_group_info"
			if r.Have.GroupsNote != "" {
				why = r.Have.GroupsNote
			}
			ctx.Unavailable("collectives cannot be attributed to tp/ep/dp groups: "+why, UnavailableHCCLGroups)
		}
		return res, nil
	},
}

// HCCLOf is the hccl pass's result on a rank.
var HCCLOf = RankResultOf[*HCCLResult](HCCLPass)

func newHCCLResult() *HCCLResult {
	return &HCCLResult{ByType: map[string]*Stat{}, ByGroup: map[string]*Stat{}, ByTypeGroup: map[string]*Stat{}, ByVariant: map[string]*Stat{}}
}

func getStat(m map[string]*Stat, k string) *Stat {
	s := m[k]
	if s == nil {
		s = &Stat{}
		m[k] = s
	}
	return s
}

// add counts one collective of type typ in group ("" unknown).
func (res *HCCLResult) add(typ, group, variant string, dur int64) {
	res.Total.add(dur)
	getStat(res.ByType, typ).add(dur)
	label := group
	if group == "" {
		res.UnknownGroup.add(dur)
		label = "?"
	} else {
		getStat(res.ByGroup, group).add(dur)
	}
	getStat(res.ByTypeGroup, typ+"@"+label).add(dur)
	if variant != "" {
		getStat(res.ByVariant, variant).add(dur)
	}
}

// hcclFromModel sums the rank's HCCL big ops (symbols: one label per
// distinct type and group, not per op).
func hcclFromModel(r *model.Rank) *HCCLResult {
	res := newHCCLResult()
	labels := newTypeGroupLabels(r)
	for i := range r.HCCL {
		h := &r.HCCL[i]
		res.Total.add(h.Dur)
		getStat(res.ByType, r.Str(h.Type)).add(h.Dur)
		if h.Group == 0 {
			res.UnknownGroup.add(h.Dur)
		} else {
			getStat(res.ByGroup, r.Str(h.Group)).add(h.Dur)
		}
		getStat(res.ByTypeGroup, labels.of(h)).add(h.Dur)
		if h.Variant != 0 {
			getStat(res.ByVariant, r.Str(h.Variant)).add(h.Dur)
		}
	}
	return res
}

// typeGroupLabels makes the "<type>@<group>" label of HCCL ops ("?" for
// an unknown group) once per distinct (type, group) pair of a rank.
type typeGroupLabels struct {
	r *model.Rank
	m map[[2]model.Sym]string
}

func newTypeGroupLabels(r *model.Rank) *typeGroupLabels {
	return &typeGroupLabels{r: r, m: map[[2]model.Sym]string{}}
}

func (l *typeGroupLabels) of(h *model.HCCLOp) string {
	k := [2]model.Sym{h.Type, h.Group}
	s, ok := l.m[k]
	if !ok {
		g := l.r.Str(h.Group)
		if g == "" {
			g = "?"
		}
		s = l.r.Str(h.Type) + "@" + g
		l.m[k] = s
	}
	return s
}

// HCCLGroupTypeMetric is the member of a hccl.group.<group>.<type>.* family
// for one group and type.
func HCCLGroupTypeMetric(f Family, group, typ string) string {
	return Family(f.Of(group)).Of(typ)
}
