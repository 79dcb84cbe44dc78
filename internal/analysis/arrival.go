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
		// an op is matched by its communicator, type and variant (a
		// triple, numbered in first-seen order) and its ordinal
		members := map[string]map[int]bool{}
		groupName := map[string]string{}
		for _, rr := range ctx.Ranks {
			c := CollectivesOf(rr)
			if c == nil {
				continue
			}
			// a rank's ops name a handful of keys: who is a member of
			// which communicator is read from its keys, not its ops
			lastOp := make([]int, len(c.Keys)) // 1 + the key's last op, 0: none
			c.Each(func(i int, op CollOp) { lastOp[op.Key] = i + 1 })
			named := make([]int, 0, len(c.Keys))
			for ki := range c.Keys {
				ck := &c.Keys[ki]
				if lastOp[ki] == 0 || ck.Comm == "unknown" {
					continue
				}
				if members[ck.Comm] == nil {
					members[ck.Comm] = map[int]bool{}
				}
				members[ck.Comm][rr.Rank] = true
				if ck.Group != "" {
					named = append(named, ki)
				}
			}
			// a communicator's group name is its last op's (over the
			// ranks in order, each rank's ops in order)
			slices.SortFunc(named, func(a, b int) int { return cmp.Compare(lastOp[a], lastOp[b]) })
			for _, ki := range named {
				groupName[c.Keys[ki].Comm] = c.Keys[ki].Group
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
		// only the ops of communicators seen on two or more ranks are
		// matched: a single rank's (or a lone communicator's) are not
		// gathered at all. An instance (a triple's op of one ordinal) is
		// 32 bytes: the first pass over the ranks finds its first and last
		// arrival, the second each member's wait, so no arrival is kept.
		type instance struct {
			first, last int64 // earliest and latest start
			total       int64 // the members' waits, summed (second pass)
			lastRank    int32 // who arrived last (the lowest rank on a tie)
			n           int32 // members
		}
		var triples [][3]string
		tripleOf := map[[3]string]int32{}
		var inst [][]instance // per triple, per ordinal
		var groupOf []*GroupArrival
		keyTriples := make([][]int32, len(ctx.Ranks))
		for ri, rr := range ctx.Ranks {
			c := CollectivesOf(rr)
			if c == nil {
				continue
			}
			keyTriple := make([]int32, len(c.Keys))
			for ki := range c.Keys {
				ck := &c.Keys[ki]
				keyTriple[ki] = -1
				if ck.Comm == "unknown" || gi[ck.Comm] == nil {
					continue
				}
				t := [3]string{ck.Comm, ck.Type, ck.Variant}
				id, ok := tripleOf[t]
				if !ok {
					id = int32(len(triples))
					tripleOf[t] = id
					triples = append(triples, t)
					groupOf = append(groupOf, gi[ck.Comm])
					inst = append(inst, nil)
				}
				keyTriple[ki] = id
			}
			keyTriples[ri] = keyTriple
			rank := int32(rr.Rank)
			c.Each(func(_ int, op CollOp) {
				t := keyTriple[op.Key]
				if t < 0 {
					return
				}
				s := inst[t]
				for int(op.Index) >= len(s) {
					s = append(s, instance{})
				}
				inst[t] = s
				in := &s[op.Index]
				switch {
				case in.n == 0:
					in.first, in.last, in.lastRank = op.Start, op.Start, rank
				case op.Start > in.last || (op.Start == in.last && rank < in.lastRank):
					in.last, in.lastRank = op.Start, rank
				}
				in.first = min(in.first, op.Start)
				in.n++
			})
		}
		get := func(m map[int]*RankArrival, r int) *RankArrival {
			a := m[r]
			if a == nil {
				a = &RankArrival{}
				m[r] = a
			}
			return a
		}
		for ri, rr := range ctx.Ranks {
			keyTriple := keyTriples[ri]
			if keyTriple == nil {
				continue
			}
			CollectivesOf(rr).Each(func(_ int, op CollOp) {
				t := keyTriple[op.Key]
				if t < 0 {
					return
				}
				in := &inst[t][op.Index]
				if in.n < 2 {
					return
				}
				w := in.last - op.Start
				in.total += w
				for _, m := range [2]map[int]*RankArrival{groupOf[t].ByRank, res.ByRank} {
					ra := get(m, rr.Rank)
					ra.Collectives++
					ra.Wait += w
				}
			})
			keyTriples[ri] = nil
		}
		order := make([]int32, len(triples))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(a, b int32) int {
			ta, tb := &triples[a], &triples[b]
			return cmp.Or(cmp.Compare(ta[0], tb[0]), cmp.Compare(ta[1], tb[1]), cmp.Compare(ta[2], tb[2]))
		})
		var total int64
		for _, ti := range order {
			t := &triples[ti]
			g := groupOf[ti]
			for index := range inst[ti] {
				in := &inst[ti][index]
				if in.n < 2 {
					continue
				}
				last := int(in.lastRank)
				cw := CollectiveWait{Comm: t[0], Group: g.Group, Type: t[1], Index: index, LastRank: last, MaxWait: in.last - in.first, TotalWait: in.total}
				for _, m := range [2]map[int]*RankArrival{g.ByRank, res.ByRank} {
					ra := get(m, last)
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
