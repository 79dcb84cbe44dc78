package analysis

import (
	"encoding/binary"
	"slices"

	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// CollectivesPass is the per-rank infrastructure of the cross-rank
// analysis: each collective big op with the identity of its communicator
// instance, so that cluster passes can match it across ranks without the
// rank's model (which is released after the per-rank passes).
var CollectivesPass = &Pass{
	Name: "collectives",
	Doc: `collective arrivals for cross-rank matching

Each HCCL big op with its communicator instance (the parallel_group_info
communicator of its group, else the group hash token of its name), its type
and its ordinal among the rank's ops of that communicator and type.`,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		if !r.Have.HCCL {
			return (*CollectivesResult)(nil), nil
		}
		res := &CollectivesResult{Groups: r.Groups}
		commOf := map[string]string{}
		for _, g := range r.Groups {
			commOf[g.Name] = g.Comm
		}
		// one key per (communicator, group, type, variant): a rank holds
		// tens of thousands of ops and only a handful of distinct keys, and
		// its ops are kept until the cluster passes have run
		type symKey struct{ group, typ, variant, hash model.Sym }
		keyOf := map[symKey]int32{}
		// ordinals count per (communicator, type, variant), whatever the
		// group name says
		ordOf := []int{}
		ords := map[[3]string]int{}
		var next []int32
		b := make([]byte, 0, 4*len(r.HCCL))
		prev := int64(0)
		for i := range r.HCCL {
			h := &r.HCCL[i]
			sk := symKey{h.Group, h.Type, h.Variant, h.HashSuffix}
			ki, ok := keyOf[sk]
			if !ok {
				group, typ, variant := r.Str(h.Group), r.Str(h.Type), r.Str(h.Variant)
				comm := ""
				switch {
				case group != "" && commOf[group] != "":
					comm = commOf[group]
				case h.HashSuffix != 0:
					comm = "hash:" + r.Str(h.HashSuffix)
				default:
					comm = "unknown"
				}
				k := CollKey{Comm: comm, Group: group, Type: typ, Variant: variant}
				// distinct symbol tuples can name the same key (a group
				// known by name and by hash): count ordinals per key
				ki = -1
				for j, x := range res.Keys {
					if x == k {
						ki = int32(j)
						break
					}
				}
				if ki < 0 {
					ki = int32(len(res.Keys))
					res.Keys = append(res.Keys, k)
					o, ok := ords[[3]string{comm, typ, variant}]
					if !ok {
						o = len(next)
						ords[[3]string{comm, typ, variant}] = o
						next = append(next, 0)
					}
					ordOf = append(ordOf, o)
					res.Ord = append(res.Ord, int32(o))
				}
				keyOf[sk] = ki
			}
			b = binary.AppendUvarint(b, uint64(ki))
			b = binary.AppendVarint(b, h.Start-prev)
			prev = h.Start
			res.N++
		}
		res.Ops = slices.Clone(b)
		return res, nil
	},
}

// CollectivesOf is the collectives pass's result on a rank.
var CollectivesOf = RankResultOf[*CollectivesResult](CollectivesPass)

// CollKey is what identifies a collective across ranks, but its ordinal.
type CollKey struct {
	Comm    string // communicator instance (parallel_group_info key) or "hash:NNN"
	Group   string // group name (tp, ep, ...), "" when unknown
	Type    string
	Variant string
}

// CollOp is one collective big op of one rank.
type CollOp struct {
	Start int64
	Key   int32 // index into CollectivesResult.Keys
	Index int32 // ordinal among this rank's ops of the same communicator, type and variant
}

// CollectivesResult lists a rank's collectives in start order.
type CollectivesResult struct {
	// Ops are the N ops, encoded (a rank's ops are kept for the cluster
	// passes; Each reads them): per op uvarint(Key) and varint(Start - the
	// previous op's Start), ~4 bytes an op.
	Ops []byte
	N   int
	// opsAt holds Ops when they were moved to a spill file
	// (RankResult.Spill; Ops is nil then).
	opsAt replay.Ref
	// Ord is, per key, the ordinal counter its ops' Index counts in (keys
	// of one communicator, type and variant count together).
	Ord    []int32
	Keys   []CollKey
	Groups []model.Group
}

// Each calls f with each op in start order.
func (c *CollectivesResult) Each(f func(i int, op CollOp)) {
	var next []int32
	for _, o := range c.Ord {
		for int(o) >= len(next) {
			next = append(next, 0)
		}
	}
	b, start := c.Ops, int64(0)
	if c.opsAt.Spilled() {
		b = c.opsAt.Read(nil)
	}
	for i := 0; i < c.N; i++ {
		k, n := binary.Uvarint(b)
		d, m := binary.Varint(b[n:])
		b = b[n+m:]
		start += d
		o := c.Ord[k]
		f(i, CollOp{Start: start, Key: int32(k), Index: next[o]})
		next[o]++
	}
}

// ClusterPass is one analysis over every rank's results (the way facts
// flow across packages in go/analysis): it reads RankResults, never models.
// Its Requires are cluster passes.
type ClusterPass = PassOf[*ClusterContext]

// ClusterContext is what a cluster pass sees.
type ClusterContext struct {
	Ranks    []*RankResult
	ResultOf map[*ClusterPass]any
	// Experts is the profile's per-expert load input, nil when none.
	Experts *model.ExpertLoads
	// Service is the profile's service-level input (MS Service
	// Profiler's parse output), nil when none.
	Service *model.ServiceProfile
	cluster *ClusterResult
}

// ClusterPasses is the registry of cluster passes, in dependency order.
var ClusterPasses = []*ClusterPass{ArrivalPass, SkewPass, ExpertsPass, MoEWaitPass, EnginesPass, LedgerClusterPass, ServicePass}

// ClusterResult is the cross-rank analysis.
type ClusterResult struct {
	Ranks int
	// Metrics are cluster-level numbers: skew.<quantity>.max_over_median,
	// .median_us, .mad_us, .max_us, .max_rank, collectives.matched,
	// collectives.wait.time_us.
	Metrics     map[string]float64
	Unavailable map[string]string
	// RanksUsed names, for each metric of the arrival and skew passes,
	// the ranks it was computed from (sorted); a rank whose input lacks
	// what the metric needs (a timeline's collectives, an overlap
	// breakdown) is left out.
	RanksUsed map[string][]int
	// results are the cluster passes' results, keyed by pass (ArrivalOf,
	// SkewOf, ExpertsOf).
	results resultList[*ClusterPass]
	Errors  []PassError
	// Timings are the cluster passes' durations (Rank -1, for --debug).
	Timings []PassTiming `json:"-"`
}

// RunCluster runs the cluster passes over the per-rank results; loads is
// the profile's per-expert load input (nil when none). They run one at a
// time, each recording its metrics into a ClusterResult of its own that
// the runner merges.
func RunCluster(ranks []*RankResult, loads *model.ExpertLoads) *ClusterResult {
	return RunClusterWith(ranks, ClusterInputs{Experts: loads})
}

// ClusterInputs are the profile-level inputs beside the ranks' results.
type ClusterInputs struct {
	// Experts is the per-expert load input, nil when none.
	Experts *model.ExpertLoads
	// Service is the service profile, nil when none.
	Service *model.ServiceProfile
}

// RunClusterWith is RunCluster with every profile-level input.
func RunClusterWith(ranks []*RankResult, in ClusterInputs) *ClusterResult {
	for _, rr := range ranks {
		if ep := EPLoadOf(rr); ep != nil {
			ep.readSeries()
		}
	}
	loads := in.Experts
	rn := runner[*ClusterContext]{rank: -1, kind: ClusterMetric, workers: 1,
		newCtx: func(_ *ClusterPass, resultOf map[*ClusterPass]any, m *Metrics) *ClusterContext {
			own := &ClusterResult{Metrics: m.Values, Unavailable: m.Unavailable, RanksUsed: m.RanksUsed}
			return &ClusterContext{Ranks: ranks, ResultOf: resultOf, Experts: loads, Service: in.Service, cluster: own}
		}}
	results, m, errs, timings := rn.run(ClusterPasses)
	cr := &ClusterResult{Ranks: len(ranks), Metrics: m.Values, Unavailable: m.Unavailable, RanksUsed: m.RanksUsed, Errors: errs, Timings: timings}
	for _, e := range errs {
		// a failed pass leaves its metrics unmeasured, never 0
		cr.Unavailable["pass."+e.Pass] = e.Message
	}
	cr.results = results
	return cr
}

// used records the ranks a cluster metric was computed from.
func (c *ClusterResult) used(ranks []int, metrics ...string) {
	rs := append([]int(nil), ranks...)
	slices.Sort(rs)
	for _, m := range metrics {
		c.RanksUsed[m] = rs
	}
}

// NotUsed returns the ranks of all that no cluster metric used, sorted
// (nil when every rank was used or no metric was computed).
func (c *ClusterResult) NotUsed(all []int) []int {
	if len(c.RanksUsed) == 0 {
		return nil
	}
	seen := map[int]bool{}
	for _, rs := range c.RanksUsed {
		for _, r := range rs {
			seen[r] = true
		}
	}
	var out []int
	for _, r := range all {
		if !seen[r] {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}
