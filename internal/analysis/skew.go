package analysis

// kept: its standard-library imports resemble internal/rules/facts/facts.go's; an import block cannot be shared
import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Metrics of the skew pass.
const (
	FamilySkewMaxOverMedian      Family = "skew.<q>.max_over_median"          // ratio: max over ranks / median over ranks of computing (overlap.computing.time_us), communication or free
	FamilySkewMaxRank            Family = "skew.<q>.max_rank"                 // rank: the rank holding that maximum
	FamilySkewMedianUs           Family = "skew.<q>.median_us"                // µs: median over ranks
	FamilySkewMaxUs              Family = "skew.<q>.max_us"                   // µs: maximum over ranks
	FamilySkewMADUs              Family = "skew.<q>.mad_us"                   // µs: median absolute deviation over ranks
	MetricSlowRanksCount                = "slow_ranks.count"                  // count: ranks named slow (robust outliers of computing or free, or late arrivals), each against the peers of its own pipeline stage
	MetricPipelineStagesCount           = "pipeline.stages.count"             // count: pipeline stages (the size of parallel_group_info's pp groups) when more than one
	MetricStageImbalanceRatio           = "pipeline.stage_imbalance.ratio"    // ratio: the heaviest stage's median computing over the lightest's (1: balanced)
	MetricStageImbalanceHeaviest        = "pipeline.stage_imbalance.heaviest" // stage: the stage with the most computing (0 is the first)
	FamilyStageComputingUs       Family = "pipeline.stage.<id>.computing_us"  // µs: median over the stage's ranks of overlap.computing.time_us
	FamilyStageP2PUs             Family = "pipeline.stage.<id>.p2p_us"        // µs: median over the stage's ranks of the p2p collectives (send, receive, batchsendrecv): the waits between stages
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
	// Stages are the pipeline stages (parallel_group_info's pp groups),
	// nil without pipeline parallelism: ranks are then compared with the
	// peers of their own stage, and a difference between stages is
	// pipeline-stage imbalance (Imbalance), never a slow rank.
	Stages    []StageStat
	Imbalance string
}

// StageStat is one pipeline stage.
type StageStat struct {
	Stage int
	Ranks []int
	// ComputingUs and P2PUs are medians over the stage's ranks (µs); HaveP2P
	// says whether any of them measured its p2p collectives.
	ComputingUs, P2PUs float64
	HaveP2P            bool
}

// robust returns the median and MAD of xs, each the midpoint of the two
// middle values for an even count.
func robust(xs []float64) (median, mad float64) {
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	median = midMedian(s)
	dev := make([]float64, len(s))
	for i, x := range s {
		dev[i] = math.Abs(x - median)
	}
	slices.Sort(dev)
	return median, midMedian(dev)
}

// midMedian is the median of sorted s: the middle value, or the midpoint
// of the two middle ones (0 for none).
func midMedian(s []float64) float64 {
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
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
less than their peers (a low-side outlier of the group's waits). Medians
of an even count are the midpoint of the two middle values.

With pipeline parallelism (parallel_group_info pp groups of more than one
rank) each rank is compared only with the peers of its own stage, a group
across stages names no late arrival, and a difference between the stages
is pipeline-stage imbalance: pipeline.stages.count,
pipeline.stage_imbalance.ratio and .heaviest, and per stage
pipeline.stage.<id>.computing_us and .p2p_us.`,
	Requires: []*ClusterPass{ArrivalPass},
	Metrics:  skewMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		res := &SkewResult{Steps: map[int][]SkewStat{}}
		cm := ctx.cluster
		arr := ArrivalOf(ctx)
		var windows []float64
		windowOf := map[int]float64{}
		for _, rr := range ctx.Ranks {
			if v, ok := rr.Metrics[MetricDeviceWindowUs]; ok {
				windows = append(windows, v)
				windowOf[rr.Rank] = v
			}
		}
		// with pipeline parallelism each rank is compared with the peers
		// of its own stage (stageOf nil: one stage)
		stageOf, stages := pipelineStages(ctx.Ranks)
		stageImbalance(ctx, res, stageOf, stages, medianOf(windows))
		if len(ctx.Ranks) < 3 {
			why := fmt.Sprintf("needs at least 3 ranks to tell a slow rank from the others (have %d)", len(ctx.Ranks))
			for _, q := range skewQuantities {
				cm.Unavailable[FamilySkewMaxOverMedian.Of(q.name)] = why
			}
			cm.Unavailable["slow_ranks"] = why
			return res, nil
		}
		if stages != nil && !slices.ContainsFunc(stages, func(st StageStat) bool { return len(st.Ranks) >= 3 }) {
			cm.Unavailable["slow_ranks"] = fmt.Sprintf("each rank is compared with the peers of its own pipeline stage, and none of the %d stages has 3 ranks", len(stages))
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
				res.Slow = append(res.Slow, stageOutliers(q.name, vals, -1, stageOf, windowOf)...)
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
					w := map[int]float64{}
					for _, x := range byStep[s]["window"] {
						w[x.rank] = x.v
					}
					res.Slow = append(res.Slow, stageOutliers(q.name, vals, s, stageOf, w)...)
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
				if len(g.Ranks) < 3 || g.LastRank < 0 || flagged[g.LastRank] || spansStages(g.Ranks, stageOf) {
					// (a group across stages: its last arrival is the
					// pipeline's dependency, not a slow rank)
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

// stageOutliers are the high-side outliers of quantity q among vals, each
// rank against the peers of its own pipeline stage (all ranks when stageOf
// is nil), a stage needing 3 ranks; window gives each rank's window (µs),
// whose stage median sets the effect-size floor (minCost).
func stageOutliers(q string, vals []rankValue, step int, stageOf map[int]int, window map[int]float64) []SlowRank {
	groups := map[int][]rankValue{}
	for _, v := range vals {
		st := 0
		if stageOf != nil {
			st = stageOf[v.rank]
		}
		groups[st] = append(groups[st], v)
	}
	var out []SlowRank
	for _, st := range slices.Sorted(maps.Keys(groups)) {
		sub := groups[st]
		if len(sub) < 3 {
			continue
		}
		var w []float64
		for _, v := range sub {
			if x, ok := window[v.rank]; ok {
				w = append(w, x)
			}
		}
		out = append(out, outliers(skewStat(q, sub), sub, step, minCost*medianOf(w))...)
	}
	return out
}

// pipelineStages is each rank's pipeline stage, its place in the
// parallel_group_info pp group that holds it (global ranks in order), and
// the stages with their ranks; nil, nil when no rank's pp group has more
// than one rank, or the ranks do not agree on the stage count.
func pipelineStages(ranks []*RankResult) (map[int]int, []StageStat) {
	stageOf := map[int]int{}
	n := 0
	for _, rr := range ranks {
		for _, g := range rr.Groups {
			if g.Name != "pp" || len(g.GlobalRanks) < 2 {
				continue
			}
			members := slices.Sorted(slices.Values(g.GlobalRanks))
			if i := slices.Index(members, rr.Rank); i >= 0 {
				if n != 0 && n != len(members) {
					return nil, nil
				}
				n = len(members)
				stageOf[rr.Rank] = i
			}
		}
	}
	if n < 2 || len(stageOf) != len(ranks) {
		return nil, nil
	}
	stages := make([]StageStat, n)
	for i := range stages {
		stages[i].Stage = i
	}
	for _, rr := range ranks {
		st := &stages[stageOf[rr.Rank]]
		st.Ranks = append(st.Ranks, rr.Rank)
	}
	return stageOf, stages
}

// spansStages reports whether ranks lie in more than one pipeline stage.
func spansStages(ranks []int, stageOf map[int]int) bool {
	if stageOf == nil || len(ranks) == 0 {
		return false
	}
	first := stageOf[ranks[0]]
	for _, r := range ranks[1:] {
		if stageOf[r] != first {
			return true
		}
	}
	return false
}

// stageImbalance measures each pipeline stage's computing and p2p time
// (medians over its ranks) and, when the heaviest stage computes longer
// than the lightest by more than minExcess and minCost of the window,
// says so (res.Imbalance): the pipeline-stage imbalance, which the lighter
// stages pay waiting in their p2p collectives.
func stageImbalance(ctx *ClusterContext, res *SkewResult, stageOf map[int]int, stages []StageStat, window float64) {
	cm := ctx.cluster
	names := []string{MetricPipelineStagesCount, MetricStageImbalanceRatio, MetricStageImbalanceHeaviest}
	if stages == nil {
		for _, m := range names {
			cm.Unavailable[m] = "no pipeline parallelism: no parallel_group_info pp group of more than one rank (or the ranks' pp groups disagree)"
		}
		return
	}
	comp := map[int][]float64{}
	p2p := map[int][]float64{}
	var used []int
	for _, rr := range ctx.Ranks {
		st := stageOf[rr.Rank]
		if v, ok := rr.Metrics[MetricComputingUs]; ok {
			comp[st] = append(comp[st], v)
			used = append(used, rr.Rank)
		}
		if _, ok := rr.Metrics[MetricHCCLTotalUs]; ok {
			var sum float64
			for _, t := range []string{"send", "receive", "batchsendrecv"} {
				sum += rr.Metrics[FamilyHCCLTypeUs.Of(t)]
			}
			p2p[st] = append(p2p[st], sum)
		}
	}
	cm.Metrics[MetricPipelineStagesCount] = float64(len(stages))
	heavy, light := -1, -1
	for i := range stages {
		st := &stages[i]
		if len(comp[i]) == 0 {
			continue
		}
		st.ComputingUs = medianOf(comp[i])
		cm.Metrics[FamilyStageComputingUs.Of(strconv.Itoa(i))] = st.ComputingUs
		if len(p2p[i]) > 0 {
			st.P2PUs, st.HaveP2P = medianOf(p2p[i]), true
			cm.Metrics[FamilyStageP2PUs.Of(strconv.Itoa(i))] = st.P2PUs
		}
		if heavy < 0 || st.ComputingUs > stages[heavy].ComputingUs {
			heavy = i
		}
		if light < 0 || st.ComputingUs < stages[light].ComputingUs {
			light = i
		}
	}
	res.Stages = stages
	if heavy < 0 || stages[light].ComputingUs <= 0 {
		why := "no stage has a measured overlap.computing.time_us"
		if heavy >= 0 {
			why = "the lightest stage computes nothing"
		}
		cm.Unavailable[MetricStageImbalanceRatio] = why
		cm.Unavailable[MetricStageImbalanceHeaviest] = why
		return
	}
	slices.Sort(used)
	cm.used(used, MetricStageImbalanceRatio, MetricStageImbalanceHeaviest)
	h, l := &stages[heavy], &stages[light]
	ratio := h.ComputingUs / l.ComputingUs
	cm.Metrics[MetricStageImbalanceRatio] = ratio
	cm.Metrics[MetricStageImbalanceHeaviest] = float64(heavy)
	if ratio < 1+minExcess || h.ComputingUs-l.ComputingUs < minCost*window {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline-stage imbalance: stage %d (ranks %s) computes %.1f µs per rank, %.2fx stage %d (ranks %s, %.1f µs)",
		heavy, rankList(h.Ranks), h.ComputingUs, ratio, light, rankList(l.Ranks), l.ComputingUs)
	var waits []string
	for i := range stages {
		if st := &stages[i]; st.HaveP2P && i != heavy {
			waits = append(waits, fmt.Sprintf("stage %d %.1f µs", i, st.P2PUs))
		}
	}
	if len(waits) > 0 {
		fmt.Fprintf(&b, "; the other stages wait for it in their p2p collectives (send/receive, median per rank: %s)", strings.Join(waits, ", "))
	}
	b.WriteString("; balance the layers between the stages (each rank is compared only with its own stage's peers)")
	res.Imbalance = b.String()
}

// rankList prints ranks as 0-3,5.
func rankList(ranks []int) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ranks[i], ranks[j]))
		} else {
			parts = append(parts, strconv.Itoa(ranks[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
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
