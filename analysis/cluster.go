package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/npuprof/npuprof/parser/model"
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
		res.Ops = make([]CollOp, 0, len(r.HCCL))
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
				}
				keyOf[sk] = ki
			}
			o := ordOf[ki]
			res.Ops = append(res.Ops, CollOp{Key: ki, Index: next[o], Start: h.Start, Dur: h.Dur})
			next[o]++
		}
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

// CollOp is one collective big op of one rank (24 bytes: a rank's ops are
// kept for the cluster passes).
type CollOp struct {
	Start int64
	Dur   int64
	Key   int32 // index into CollectivesResult.Keys
	Index int32 // ordinal among this rank's ops of the same communicator, type and variant
}

// CollectivesResult lists a rank's collectives in start order.
type CollectivesResult struct {
	Ops    []CollOp
	Keys   []CollKey
	Groups []model.Group
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
	cluster *ClusterResult
}

// ClusterPasses is the registry of cluster passes, in dependency order.
var ClusterPasses = []*ClusterPass{ArrivalPass, SkewPass, ExpertsPass, MoEWaitPass, EnginesPass}

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
	rn := runner[*ClusterContext]{rank: -1, kind: ClusterMetric, workers: 1,
		newCtx: func(_ *ClusterPass, resultOf map[*ClusterPass]any, m *Metrics) *ClusterContext {
			own := &ClusterResult{Metrics: m.Values, Unavailable: m.Unavailable, RanksUsed: m.RanksUsed}
			return &ClusterContext{Ranks: ranks, ResultOf: resultOf, Experts: loads, cluster: own}
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

func safeCluster(p *ClusterPass, ctx *ClusterContext) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error: panic: %v", v)
		}
	}()
	return p.Run(ctx)
}

// ---------------------------------------------------------------- arrival

// ArrivalResult is who arrived last at each collective and who waited.
type ArrivalResult struct {
	// Groups are the communicator instances seen on at least two ranks.
	Groups []GroupArrival
	// ByRank sums over every matched collective.
	ByRank map[int]*RankArrival
	// Worst are the collectives with the longest total wait (up to 10).
	Worst []CollectiveWait
	// Matched is the number of collectives matched across ranks.
	Matched int
}

// RankArrival is one rank's side of the matched collectives.
type RankArrival struct {
	Collectives int   // matched collectives the rank took part in
	Last        int   // how often it arrived last
	Wait        int64 // ns it waited for the last arrival, summed
	// CausedWait is the wait of its peers at the collectives it arrived
	// last at (ns, summed over peers).
	CausedWait int64
}

// GroupArrival is one communicator instance.
type GroupArrival struct {
	Comm        string
	Group       string // tp, ep, ... ("" when unknown)
	Ranks       []int
	Collectives int
	ByRank      map[int]*RankArrival
	// LastRank arrived last most often (-1 when no collective matched).
	LastRank int
}

// CollectiveWait is one matched collective.
type CollectiveWait struct {
	Comm, Group, Type string
	Index             int
	LastRank          int
	MaxWait           int64 // ns: last arrival minus first arrival
	TotalWait         int64 // ns: sum of every member's wait
}

// Metrics of the arrival pass.
const (
	MetricCollectivesMatched = "collectives.matched"      // count: collectives matched across ranks (same communicator, type and ordinal)
	MetricCollectivesWaitUs  = "collectives.wait.time_us" // µs: time ranks spent waiting for the last arrival at matched collectives
)

// ArrivalPass matches collectives across ranks by (communicator, type,
// index) and measures arrival skew: arrival is the start of the big op on
// each rank, wait = last arrival - own arrival.
var ArrivalPass = &ClusterPass{
	Name: "arrival",
	Doc: `which rank arrives last at each collective, and how long the others wait

Collectives are matched across ranks by communicator instance, type and
ordinal; arrival is the start of the big op on each rank and a rank's wait
is the last arrival minus its own. Clocks are each host's wall clock, so the
numbers are as good as the hosts' time sync.`,
	Metrics: arrivalMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		res := &ArrivalResult{ByRank: map[int]*RankArrival{}}
		type opKey struct {
			comm, typ, variant string
			index              int
		}
		type arrival struct {
			rank  int
			start int64
		}
		members := map[string]map[int]bool{}
		groupName := map[string]string{}
		byOp := map[opKey][]arrival{}
		for _, rr := range ctx.Ranks {
			if CollectivesOf(rr) == nil {
				continue
			}
			for _, op := range CollectivesOf(rr).Ops {
				ck := &CollectivesOf(rr).Keys[op.Key]
				if ck.Comm == "unknown" {
					continue
				}
				if members[ck.Comm] == nil {
					members[ck.Comm] = map[int]bool{}
				}
				members[ck.Comm][rr.Rank] = true
				if ck.Group != "" {
					groupName[ck.Comm] = ck.Group
				}
				k := opKey{ck.Comm, ck.Type, ck.Variant, int(op.Index)}
				byOp[k] = append(byOp[k], arrival{rr.Rank, op.Start})
			}
		}
		comms := make([]string, 0, len(members))
		for c, m := range members {
			if len(m) >= 2 {
				comms = append(comms, c)
			}
		}
		if len(comms) == 0 {
			ctx.cluster.Unavailable[MetricCollectivesWaitUs] = "no collective seen on two or more ranks"
			return res, nil
		}
		slices.Sort(comms)
		gi := map[string]*GroupArrival{}
		for _, c := range comms {
			g := &GroupArrival{Comm: c, Group: groupName[c], ByRank: map[int]*RankArrival{}, LastRank: -1}
			for r := range members[c] {
				g.Ranks = append(g.Ranks, r)
				g.ByRank[r] = &RankArrival{}
			}
			slices.Sort(g.Ranks)
			gi[c] = g
		}
		get := func(m map[int]*RankArrival, r int) *RankArrival {
			a := m[r]
			if a == nil {
				a = &RankArrival{}
				m[r] = a
			}
			return a
		}
		keys := make([]opKey, 0, len(byOp))
		for k := range byOp {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b opKey) int {
			return cmp.Or(cmp.Compare(a.comm, b.comm), cmp.Compare(a.typ, b.typ), cmp.Compare(a.variant, b.variant), cmp.Compare(a.index, b.index))
		})
		var total int64
		for _, k := range keys {
			arr := byOp[k]
			g := gi[k.comm]
			if g == nil || len(arr) < 2 {
				continue
			}
			last := arr[0]
			first := arr[0].start
			for _, a := range arr[1:] {
				if a.start > last.start || (a.start == last.start && a.rank < last.rank) {
					last = a
				}
				first = min(first, a.start)
			}
			cw := CollectiveWait{Comm: k.comm, Group: g.Group, Type: k.typ, Index: k.index, LastRank: last.rank, MaxWait: last.start - first}
			for _, a := range arr {
				w := last.start - a.start
				cw.TotalWait += w
				for _, m := range []map[int]*RankArrival{g.ByRank, res.ByRank} {
					ra := get(m, a.rank)
					ra.Collectives++
					ra.Wait += w
				}
			}
			for _, m := range []map[int]*RankArrival{g.ByRank, res.ByRank} {
				ra := get(m, last.rank)
				ra.Last++
				ra.CausedWait += cw.TotalWait
			}
			g.Collectives++
			res.Matched++
			total += cw.TotalWait
			res.Worst = append(res.Worst, cw)
			slices.SortStableFunc(res.Worst, func(a, b CollectiveWait) int { return cmp.Compare(b.TotalWait, a.TotalWait) })
			if len(res.Worst) > 10 {
				res.Worst = res.Worst[:10]
			}
		}
		for _, c := range comms {
			g := gi[c]
			best := -1
			for _, r := range g.Ranks {
				if a := g.ByRank[r]; a.Last > 0 && (best < 0 || a.Last > g.ByRank[best].Last) {
					best = r
				}
			}
			g.LastRank = best
			res.Groups = append(res.Groups, *g)
		}
		ctx.cluster.Metrics[MetricCollectivesMatched] = float64(res.Matched)
		ctx.cluster.Metrics[MetricCollectivesWaitUs] = nsToUs(total)
		usedRanks := map[int]bool{}
		for _, c := range comms {
			for r := range members[c] {
				usedRanks[r] = true
			}
		}
		ctx.cluster.used(slices.Collect(maps.Keys(usedRanks)), MetricCollectivesMatched, MetricCollectivesWaitUs)
		return res, nil
	},
}

// ArrivalOf is the arrival pass's result.
var ArrivalOf = ClusterResultOf[*ArrivalResult](ArrivalPass)

// ---------------------------------------------------------------- skew

// Metrics of the skew pass.
const (
	FamilySkewMaxOverMedian Family = "skew.<q>.max_over_median" // ratio: max over ranks / median over ranks of computing (overlap.computing.time_us), communication or free
	FamilySkewMaxRank       Family = "skew.<q>.max_rank"        // rank: the rank holding that maximum
	FamilySkewMedianUs      Family = "skew.<q>.median_us"       // µs: median over ranks
	FamilySkewMaxUs         Family = "skew.<q>.max_us"          // µs: maximum over ranks
	FamilySkewMADUs         Family = "skew.<q>.mad_us"          // µs: median absolute deviation over ranks
	MetricSlowRanksCount           = "slow_ranks.count"         // count: ranks named slow (robust outliers of computing or free, or late arrivals)
)

// SkewQuantities are the <q> of the skew pass's skew.<q>.* metrics (the
// slow-rank analysis), in report order; the EP-rank GroupedMatmul skew is
// skew.moe.gmm.*.
var SkewQuantities = []string{"computing", "communication", "free"}

// Quantities compared across ranks, in report order.
var skewQuantities = []struct{ name, metric string }{
	{"computing", MetricComputingUs},
	{"communication", MetricCommunicationUs},
	{"free", MetricFreeUs},
}

// SlowZ is the robust z-score above which a rank is an outlier: (x −
// median) / (1.4826 · MAD), the modified z-score of Iglewicz and Hoaglin,
// who recommend 3.5.
const SlowZ = 3.5

// minExcess is the smallest relative excess over the median that is
// reported, so that a perfectly uniform cluster (MAD near 0) does not name
// a rank for a 0.1% difference.
const minExcess = 0.02

// minCost is the effect-size floor of a slow rank: its excess over the
// median must be at least this share of the median window (of the step, or
// of the whole capture), so a 50 µs wobble of a small quantity is not named.
const minCost = 0.05

// SkewStat is one quantity over the ranks.
type SkewStat struct {
	Quantity string
	Ranks    int
	Median   float64 // µs
	MAD      float64 // µs, median absolute deviation
	Max      float64 // µs
	MaxRank  int
	Min      float64
	MinRank  int
}

// SlowRank is a rank named as an outlier, with why.
type SlowRank struct {
	Rank     int
	Step     int    // -1: over the whole window
	Quantity string // computing, free, arrival
	Value    float64
	Median   float64
	Z        float64
	Reason   string
}

// SkewResult is the rank-skew analysis.
type SkewResult struct {
	Window []SkewStat
	// Steps holds per-step stats, keyed by step id, for steps present on
	// at least three ranks.
	Steps map[int][]SkewStat
	Slow  []SlowRank
}

// robust returns the median and MAD of xs (gonum stat.Quantile, Empirical).
func robust(xs []float64) (median, mad float64) {
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	median = stat.Quantile(0.5, stat.Empirical, s, nil)
	dev := make([]float64, len(s))
	for i, x := range s {
		dev[i] = math.Abs(x - median)
	}
	slices.Sort(dev)
	mad = stat.Quantile(0.5, stat.Empirical, dev, nil)
	return median, mad
}

// medianOf is the median of xs (0 for none).
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m, _ := robust(xs)
	return m
}

// zscore is the modified z-score of x; +Inf when MAD is 0 and x differs.
func zscore(x, median, mad float64) float64 {
	if mad == 0 {
		switch {
		case x > median:
			return math.Inf(1)
		case x < median:
			return math.Inf(-1)
		}
		return 0
	}
	return (x - median) / (1.4826 * mad)
}

type rankValue struct {
	rank int
	v    float64
}

func skewStat(q string, vals []rankValue) SkewStat {
	xs := make([]float64, len(vals))
	st := SkewStat{Quantity: q, Ranks: len(vals), MaxRank: vals[0].rank, MinRank: vals[0].rank, Max: vals[0].v, Min: vals[0].v}
	for i, v := range vals {
		xs[i] = v.v
		if v.v > st.Max {
			st.Max, st.MaxRank = v.v, v.rank
		}
		if v.v < st.Min {
			st.Min, st.MinRank = v.v, v.rank
		}
	}
	st.Median, st.MAD = robust(xs)
	return st
}

// outliers returns the ranks whose value is a high-side robust outlier and
// exceeds the median by at least floor µs (see minCost).
func outliers(st SkewStat, vals []rankValue, step int, floor float64) []SlowRank {
	var out []SlowRank
	for _, v := range vals {
		z := zscore(v.v, st.Median, st.MAD)
		if z <= SlowZ || st.Median <= 0 || v.v < st.Median*(1+minExcess) || v.v-st.Median < floor {
			continue
		}
		out = append(out, SlowRank{Rank: v.rank, Step: step, Quantity: st.Quantity, Value: v.v, Median: st.Median, Z: z})
	}
	return out
}

// SkewPass finds slow ranks with robust statistics: per quantity
// (computing, communication, free) over the window and per step, the
// median and MAD over ranks; a rank is slow when its computing or free time
// is a high-side outlier (modified z-score > 3.5, at least 2% above the
// median, and costing at least 5% of the median window). A slow rank computes longer (or idles longer) and its peers then
// wait for it inside the collectives, so communication is reported as skew
// but high communication names the waiting ranks, not the slow one.
var SkewPass = &ClusterPass{
	Name: "skew",
	Doc: `rank skew and slow-rank detection with median and MAD

skew.<q>.max_over_median, .median_us, .mad_us, .max_us, .max_rank for q in
computing, communication, free; slow ranks are high-side outliers of
computing or free (modified z-score > 3.5), per step and over the window,
or ranks that arrive last at half a group's collectives while waiting far
less than their peers (a low-side outlier of the group's waits).`,
	Requires: []*ClusterPass{ArrivalPass},
	Metrics:  skewMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		res := &SkewResult{Steps: map[int][]SkewStat{}}
		cm := ctx.cluster
		if len(ctx.Ranks) < 3 {
			why := fmt.Sprintf("needs at least 3 ranks to tell a slow rank from the others (have %d)", len(ctx.Ranks))
			for _, q := range skewQuantities {
				cm.Unavailable[FamilySkewMaxOverMedian.Of(q.name)] = why
			}
			cm.Unavailable["slow_ranks"] = why
			return res, nil
		}
		arr := ArrivalOf(ctx)
		var windows []float64
		for _, rr := range ctx.Ranks {
			if v, ok := rr.Metrics[MetricDeviceWindowUs]; ok {
				windows = append(windows, v)
			}
		}
		for _, q := range skewQuantities {
			var vals []rankValue
			for _, rr := range ctx.Ranks {
				if v, ok := rr.Metrics[q.metric]; ok {
					vals = append(vals, rankValue{rr.Rank, v})
				}
			}
			if len(vals) < 3 {
				cm.Unavailable[FamilySkewMaxOverMedian.Of(q.name)] = fmt.Sprintf("%s is measured on %d rank(s); needs 3", q.metric, len(vals))
				continue
			}
			st := skewStat(q.name, vals)
			res.Window = append(res.Window, st)
			if st.Median > 0 {
				cm.Metrics[FamilySkewMaxOverMedian.Of(q.name)] = st.Max / st.Median
			} else {
				cm.Unavailable[FamilySkewMaxOverMedian.Of(q.name)] = "median is 0"
			}
			cm.Metrics[FamilySkewMedianUs.Of(q.name)] = st.Median
			cm.Metrics[FamilySkewMADUs.Of(q.name)] = st.MAD
			cm.Metrics[FamilySkewMaxUs.Of(q.name)] = st.Max
			cm.Metrics[FamilySkewMaxRank.Of(q.name)] = float64(st.MaxRank)
			ranks := make([]int, len(vals))
			for i, v := range vals {
				ranks[i] = v.rank
			}
			cm.used(ranks, FamilySkewMaxOverMedian.Of(q.name), FamilySkewMedianUs.Of(q.name), FamilySkewMADUs.Of(q.name),
				FamilySkewMaxUs.Of(q.name), FamilySkewMaxRank.Of(q.name))
			if q.name != "communication" {
				res.Slow = append(res.Slow, outliers(st, vals, -1, minCost*medianOf(windows))...)
			}
		}
		// per step
		byStep := map[int]map[string][]rankValue{}
		for _, rr := range ctx.Ranks {
			for _, s := range StepsOf(rr) {
				if byStep[s.Step] == nil {
					byStep[s.Step] = map[string][]rankValue{}
				}
				m := byStep[s.Step]
				m["computing"] = append(m["computing"], rankValue{rr.Rank, nsToUs(s.Computing)})
				if s.HaveComm() {
					// without collective data a step's communication and
					// free are not measured: never compare them as 0
					m["communication"] = append(m["communication"], rankValue{rr.Rank, nsToUs(s.Communication)})
					m["free"] = append(m["free"], rankValue{rr.Rank, nsToUs(s.Free)})
				}
				m["window"] = append(m["window"], rankValue{rr.Rank, nsToUs(s.Window)})
			}
		}
		steps := make([]int, 0, len(byStep))
		for s := range byStep {
			steps = append(steps, s)
		}
		slices.Sort(steps)
		for _, s := range steps {
			for _, q := range skewQuantities {
				vals := byStep[s][q.name]
				if len(vals) < 3 {
					continue
				}
				st := skewStat(q.name, vals)
				res.Steps[s] = append(res.Steps[s], st)
				if q.name != "communication" {
					var w []float64
					for _, x := range byStep[s]["window"] {
						w = append(w, x.v)
					}
					res.Slow = append(res.Slow, outliers(st, vals, s, minCost*medianOf(w))...)
				}
			}
		}
		// corroborate with arrivals; a rank that arrives last at most
		// collectives of a group of 3+, while its peers wait for it far
		// longer than it waits, is slow even when its own times look normal
		// (e.g. a slow host launching late)
		lastShare := func(r int) (int, int, int64) {
			if arr == nil || arr.ByRank[r] == nil {
				return 0, 0, 0
			}
			a := arr.ByRank[r]
			return a.Last, a.Collectives, a.CausedWait
		}
		flagged := map[int]bool{}
		for _, s := range res.Slow {
			if s.Step < 0 {
				flagged[s.Rank] = true
			}
		}
		if arr != nil {
			for _, g := range arr.Groups {
				if len(g.Ranks) < 3 || g.LastRank < 0 || flagged[g.LastRank] {
					continue
				}
				a := g.ByRank[g.LastRank]
				// it must be last at half the collectives or more, wait far
				// less than its peers (a low-side robust outlier of the
				// group's waits) and cost them at least minCost of the window
				waits := make([]float64, 0, len(g.Ranks))
				for _, r := range g.Ranks {
					waits = append(waits, nsToUs(g.ByRank[r].Wait))
				}
				wm, wmad := robust(waits)
				own := nsToUs(a.Wait)
				if g.Collectives > 0 && float64(a.Last) >= 0.5*float64(g.Collectives) &&
					zscore(own, wm, wmad) < -SlowZ && wm-own >= minCost*medianOf(windows) {
					flagged[g.LastRank] = true
					res.Slow = append(res.Slow, SlowRank{Rank: g.LastRank, Step: -1, Quantity: "arrival",
						Value: float64(a.Last), Median: float64(g.Collectives) / float64(len(g.Ranks))})
				}
			}
		}
		for i := range res.Slow {
			s := &res.Slow[i]
			var b strings.Builder
			where := "over the window"
			if s.Step >= 0 {
				where = "in step " + strconv.Itoa(s.Step)
			}
			switch s.Quantity {
			case "arrival":
				fmt.Fprintf(&b, "arrived last at %d collectives of a group, %.1f times its fair share", int(s.Value), s.Value/math.Max(s.Median, 1e-9))
			default:
				what := "computing (kernel time)"
				if s.Quantity == "free" {
					what = "free (idle, host-bound) time"
				}
				fmt.Fprintf(&b, "%s %s is %.1f µs vs the median %.1f µs over ranks (+%.1f%%, robust z %s)", what, where, s.Value, s.Median,
					100*(s.Value/s.Median-1), zText(s.Z))
			}
			if s.Step < 0 && s.Quantity != "arrival" {
				if last, n, caused := lastShare(s.Rank); n > 0 {
					fmt.Fprintf(&b, "; arrived last at %d of %d collectives, peers waited %.1f µs for it", last, n, nsToUs(caused))
				}
			}
			s.Reason = b.String()
		}
		// the window's (Step < 0) first, then by step, rank, quantity
		slices.SortStableFunc(res.Slow, func(a, b SlowRank) int {
			if aw, bw := a.Step < 0, b.Step < 0; aw != bw {
				if aw {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(a.Step, b.Step), cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Quantity, b.Quantity))
		})
		cm.Metrics[MetricSlowRanksCount] = float64(len(flagged))
		return res, nil
	},
}

// SkewOf is the skew pass's result.
var SkewOf = ClusterResultOf[*SkewResult](SkewPass)

func zText(z float64) string {
	if math.IsInf(z, 1) {
		return "inf (all other ranks equal)"
	}
	return strconv.FormatFloat(z, 'f', 1, 64)
}

// nsToUs converts ns to µs.
func nsToUs(ns int64) float64 { return float64(ns) / 1000 }
