package analysis

import (
	"cmp"
	"maps"
	"slices"
)

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
