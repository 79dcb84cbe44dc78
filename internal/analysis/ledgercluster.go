package analysis

import (
	"fmt"
	"slices"
	"strings"
)

// LedgerClusterResult is the step-time ledger across ranks: each rank's
// ledger with the waits for the slowest peer split off, and per step the
// critical rank's.
type LedgerClusterResult struct {
	// Ranks are the ranks' ledgers (those with one), in rank order,
	// CausePeerWait split off CauseCollective and CauseDispatchCombine.
	Ranks []RankLedger
	// Steps are, per step ordinal, the critical rank's ledger step.
	Steps []CriticalStep
	// Matched counts the (rank, op) pairs matched with the other members
	// of their group; Unmatched the exchanges left whole (a member not in
	// the profile, or members that ran different steps or ops).
	Matched, Unmatched int
	// Notes say why exchanges were left unmatched.
	Notes []string
}

// RankLedger is one rank's ledger.
type RankLedger struct {
	Rank  int
	Steps []LedgerStep
}

// CriticalStep is the ledger of one step on its critical rank: the rank
// that waited least for its peers (the one the others waited for; ties:
// the longer step, then the lower rank).
type CriticalStep struct {
	Step int
	Rank int
	LedgerStep
}

// Metrics of the ledger_cluster pass.
const (
	MetricLedgerStepsCount           = "ledger.steps.count"                      // count: steps of the cluster's step-time ledger (as many as the rank with the most; each step's critical rank among the ranks that ran it)
	MetricLedgerStepUs               = "ledger.step.time_us"                     // µs: the critical rank's step time (step start to the next step's start), mean over the steps; the ledger's causes sum to it
	MetricLedgerAttentionUs          = "ledger.compute.attention.time_us"        // µs: per step, the critical rank's main stream running attention kernels
	MetricLedgerAttentionShare       = "ledger.compute.attention.share"          // ratio: ledger.compute.attention.time_us over ledger.step.time_us
	MetricLedgerExpertsUs            = "ledger.compute.moe_experts.time_us"      // µs: per step, the critical rank's main stream running MoE expert kernels (GroupedMatmul*)
	MetricLedgerExpertsShare         = "ledger.compute.moe_experts.share"        // ratio: ledger.compute.moe_experts.time_us over ledger.step.time_us
	MetricLedgerRoutingUs            = "ledger.compute.routing.time_us"          // µs: per step, the critical rank's main stream running gating, routing, permute and Cumsum kernels
	MetricLedgerRoutingShare         = "ledger.compute.routing.share"            // ratio: ledger.compute.routing.time_us over ledger.step.time_us
	MetricLedgerDispatchCombineUs    = "ledger.compute.dispatch_combine.time_us" // µs: per step, the critical rank's MC2 dispatch/combine kernels, their wait for the slowest EP rank left out
	MetricLedgerDispatchCombineShare = "ledger.compute.dispatch_combine.share"   // ratio: ledger.compute.dispatch_combine.time_us over ledger.step.time_us
	MetricLedgerAICPUUs              = "ledger.compute.aicpu.time_us"            // µs: per step, the critical rank's main stream running AI_CPU kernels
	MetricLedgerAICPUShare           = "ledger.compute.aicpu.share"              // ratio: ledger.compute.aicpu.time_us over ledger.step.time_us
	MetricLedgerComputeOtherUs       = "ledger.compute.other.time_us"            // µs: per step, the critical rank's main stream running any other kernel, copy or event task
	MetricLedgerComputeOtherShare    = "ledger.compute.other.share"              // ratio: ledger.compute.other.time_us over ledger.step.time_us
	MetricLedgerCollectiveUs         = "ledger.collective.time_us"               // µs: per step, the critical rank's main stream waiting for a collective (EVENT_WAIT, or idle while one ran), its wait for the slowest member left out
	MetricLedgerCollectiveShare      = "ledger.collective.share"                 // ratio: ledger.collective.time_us over ledger.step.time_us
	MetricLedgerPeerWaitUs           = "ledger.peer_wait.time_us"                // µs: per step, the critical rank waiting inside a collective or MC2 exchange for its group's slowest member
	MetricLedgerPeerWaitShare        = "ledger.peer_wait.share"                  // ratio: ledger.peer_wait.time_us over ledger.step.time_us
	MetricLedgerStreamWaitUs         = "ledger.stream_wait.time_us"              // µs: per step, the critical rank's main stream waiting (EVENT_WAIT) for a kernel or copy on another stream of the device
	MetricLedgerStreamWaitShare      = "ledger.stream_wait.share"                // ratio: ledger.stream_wait.time_us over ledger.step.time_us
	MetricLedgerHostGapUs            = "ledger.host_gap.time_us"                 // µs: per step, the critical rank's main stream idle before an eager kernel whose host launch ended after the idle began
	MetricLedgerHostGapShare         = "ledger.host_gap.share"                   // ratio: ledger.host_gap.time_us over ledger.step.time_us
	MetricLedgerIdleUs               = "ledger.idle.time_us"                     // µs: per step, the critical rank's main stream idle inside the step with no collective running and the host not seen late
	MetricLedgerIdleShare            = "ledger.idle.share"                       // ratio: ledger.idle.time_us over ledger.step.time_us
	MetricLedgerBetweenStepsUs       = "ledger.between_steps.time_us"            // µs: per step, the critical rank's main stream idle before the step's first task and after its last (scheduler and host)
	MetricLedgerBetweenStepsShare    = "ledger.between_steps.share"              // ratio: ledger.between_steps.time_us over ledger.step.time_us
)

// LedgerCauseMetrics are, per cause, its time_us and share metrics.
var LedgerCauseMetrics = [NumCauses][2]string{
	{MetricLedgerAttentionUs, MetricLedgerAttentionShare},
	{MetricLedgerExpertsUs, MetricLedgerExpertsShare},
	{MetricLedgerRoutingUs, MetricLedgerRoutingShare},
	{MetricLedgerDispatchCombineUs, MetricLedgerDispatchCombineShare},
	{MetricLedgerAICPUUs, MetricLedgerAICPUShare},
	{MetricLedgerComputeOtherUs, MetricLedgerComputeOtherShare},
	{MetricLedgerCollectiveUs, MetricLedgerCollectiveShare},
	{MetricLedgerPeerWaitUs, MetricLedgerPeerWaitShare},
	{MetricLedgerStreamWaitUs, MetricLedgerStreamWaitShare},
	{MetricLedgerHostGapUs, MetricLedgerHostGapShare},
	{MetricLedgerIdleUs, MetricLedgerIdleShare},
	{MetricLedgerBetweenStepsUs, MetricLedgerBetweenStepsShare},
}

// LedgerClusterPass splits the waits for the slowest peer off each rank's
// ledger and takes the critical rank's ledger per step.
var LedgerClusterPass = &ClusterPass{
	Name: "ledger_cluster",
	Doc: `the step-time ledger of the critical rank, per step

Each rank's ledger (the ledger pass) gives the time its main stream spent
in or waiting for each collective and MC2 dispatch/combine. The same
exchange on the members of its group (parallel_group_info; an MC2 kernel's
is the ep group) is the op of the same type, group, step and ordinal. It
ends together on every member, so a member's duration beyond the group's
shortest is its wait for the member that arrived last: that part of its
exposed time moves to peer_wait, naming the last member and the cause
that took most of that member's time since its previous exchange. Per step
the critical rank is the one that waited least for its peers; its ledger
gives ledger.<cause>.time_us (mean per step) and ledger.<cause>.share,
which sum to ledger.step.time_us and 1.`,
	Metrics: ledgerClusterMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		res := &LedgerClusterResult{}
		var used []int
		for _, rr := range ctx.Ranks {
			l := LedgerOf(rr)
			if l == nil || len(l.Steps) == 0 {
				continue
			}
			used = append(used, rr.Rank)
			res.Ranks = append(res.Ranks, RankLedger{Rank: rr.Rank, Steps: copyLedgerSteps(l.Steps)})
		}
		if len(res.Ranks) == 0 {
			ctx.unavailable("no rank has a step-time ledger (needs the device timeline and steps: ProfilerStep#N or a layer period with step boundaries)", ledgerclusterNames()...)
			return res, nil
		}
		splitPeerWaits(ctx, res)
		criticalSteps(res)
		var sum [NumCauses]int64
		var step int64
		for i := range res.Steps {
			s := &res.Steps[i]
			for c := range NumCauses {
				sum[c] += s.Causes[c]
			}
			step += s.Ns()
		}
		n := float64(len(res.Steps))
		ctx.setCount(MetricLedgerStepsCount, len(res.Steps))
		ctx.set(MetricLedgerStepUs, float64(step)/n/1000)
		for c := range NumCauses {
			ctx.set(LedgerCauseMetrics[c][0], float64(sum[c])/n/1000)
			if step > 0 {
				ctx.set(LedgerCauseMetrics[c][1], float64(sum[c])/float64(step))
			} else {
				ctx.unavailable("the steps took no time", LedgerCauseMetrics[c][1])
			}
		}
		ctx.cluster.used(used, ledgerclusterNames()...)
		return res, nil
	},
}

// LedgerClusterOf is the ledger_cluster pass's result.
var LedgerClusterOf = ClusterResultOf[*LedgerClusterResult](LedgerClusterPass)

func ledgerclusterNames() []string {
	out := []string{MetricLedgerStepsCount, MetricLedgerStepUs}
	for _, m := range LedgerCauseMetrics {
		out = append(out, m[0], m[1])
	}
	return out
}

// copyLedgerSteps copies what splitPeerWaits changes.
func copyLedgerSteps(in []LedgerStep) []LedgerStep {
	out := slices.Clone(in)
	for i := range out {
		out[i].Collectives = slices.Clone(out[i].Collectives)
		out[i].Peers = nil
	}
	return out
}

// ledgerMember is one rank of a group instance.
type ledgerMember struct {
	rl     *RankLedger
	labels []string
	ops    []int    // the step's ops of the group (scratch)
	sync   []SyncOp // the step's SyncOps, decoded (scratch)
}

// splitPeerWaits matches each group's exchanges across its members, step
// by step and op by op, and moves each member's wait for the last one to
// peer_wait.
func splitPeerWaits(ctx *ClusterContext, res *LedgerClusterResult) {
	byRank := map[int]*RankLedger{}
	for i := range res.Ranks {
		byRank[res.Ranks[i].Rank] = &res.Ranks[i]
	}
	type groupKey struct{ name, members string }
	groups := map[groupKey][]int{}
	var keys []groupKey
	labels := map[int][]string{}
	for _, rr := range ctx.Ranks {
		if byRank[rr.Rank] == nil {
			continue
		}
		labels[rr.Rank] = LedgerOf(rr).Labels
		for _, g := range rr.Groups {
			if len(g.GlobalRanks) < 2 || g.Name == "" {
				continue
			}
			k := groupKey{g.Name, fmt.Sprint(g.GlobalRanks)}
			if groups[k] == nil {
				keys = append(keys, k)
				var present []int
				for _, m := range g.GlobalRanks {
					if byRank[m] != nil {
						present = append(present, m)
					}
				}
				groups[k] = present
			}
		}
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.members, b.members)
	})
	notes := map[string]bool{}
	note := func(s string) {
		if !notes[s] {
			notes[s] = true
			res.Notes = append(res.Notes, s)
		}
	}
	for _, k := range keys {
		present := groups[k]
		if len(present) < 2 {
			continue
		}
		ms := make([]ledgerMember, len(present))
		steps := -1
		for i, rank := range present {
			ms[i] = ledgerMember{rl: byRank[rank], labels: labels[rank]}
			if steps < 0 || len(ms[i].rl.Steps) < steps {
				steps = len(ms[i].rl.Steps)
			}
		}
		ep := isEPGroup(k.name)
		for s := 0; s < steps; s++ {
			n := -1
			same := true
			for i := range ms {
				m := &ms[i]
				m.ops = m.ops[:0]
				m.sync = m.rl.Steps[s].SyncOps(m.sync)
				for j, op := range m.sync {
					if inGroup(m.labels[op.Label], op.Kernel, k.name, ep) {
						m.ops = append(m.ops, j)
					}
				}
				if n >= 0 && !sameLabels(m, &ms[0], s) {
					same = false
				}
				n = len(m.ops)
			}
			if !same {
				for i := range ms {
					res.Unmatched += len(ms[i].ops)
				}
				note(fmt.Sprintf("group %s %s: its members ran different exchanges in step %d: their waits for each other stay in collective and dispatch_combine", k.name, k.members, s))
				continue
			}
			for j := 0; j < n; j++ {
				matchOp(ms, s, j, res)
			}
		}
	}
}

// sameLabels reports whether m ran the exchanges of ref in step s: the
// same labels in the same order (each a collective of the group in start
// order, then the MC2 kernels in start order).
func sameLabels(m, ref *ledgerMember, s int) bool {
	if len(m.ops) != len(ref.ops) {
		return false
	}
	a, b := m.sync, ref.sync
	for j := range m.ops {
		if x, y := &a[m.ops[j]], &b[ref.ops[j]]; x.Kernel != y.Kernel || m.labels[x.Label] != ref.labels[y.Label] {
			return false
		}
	}
	return true
}

// inGroup reports whether an op with label belongs to group name: a
// collective of that group, or an MC2 kernel of the ep group.
func inGroup(label string, kernel bool, name string, ep bool) bool {
	if kernel {
		return ep
	}
	i := strings.LastIndexByte(label, '@')
	return i >= 0 && label[i+1:] == name
}

// matchOp splits the j-th op of the group in step s on every member.
func matchOp(ms []ledgerMember, s, j int, res *LedgerClusterResult) {
	first := &ms[0].sync[ms[0].ops[j]]
	label := ms[0].labels[first.Label]
	last, dmin := -1, int64(0)
	for i := range ms {
		op := &ms[i].sync[ms[i].ops[j]]
		if last < 0 || op.Dur < dmin {
			last, dmin = i, op.Dur
		}
	}
	lateOp := &ms[last].sync[ms[last].ops[j]]
	for i := range ms {
		res.Matched++
		st := &ms[i].rl.Steps[s]
		op := &ms[i].sync[ms[i].ops[j]]
		w := op.Dur - dmin
		if i == last || w <= 0 || op.Exposed <= 0 {
			continue
		}
		// the exposure within the op's first w ns (offsets from its start)
		ov := min(int64(op.ExpTo), w) - max(int64(op.ExpFrom), 0)
		ov = min(ov, int64(op.Exposed))
		if ov <= 0 {
			continue
		}
		from := CauseCollective
		if op.Kernel {
			from = CauseDispatchCombine
		} else {
			for e := range st.Collectives {
				if st.Collectives[e].Name == label {
					st.Collectives[e].Ns -= ov
					break
				}
			}
		}
		st.Causes[from] -= ov
		st.Causes[CausePeerWait] += ov
		addPeer(st, label, ms[last].rl.Rank, lateOp.Late, ov)
	}
}

func addPeer(st *LedgerStep, op string, rank int, late Cause, ns int64) {
	for i := range st.Peers {
		if p := &st.Peers[i]; p.Op == op && p.Rank == rank && p.Late == late {
			p.Ns += ns
			return
		}
	}
	st.Peers = append(st.Peers, PeerWaitEntry{Op: op, Rank: rank, Late: late, Ns: ns})
}

// criticalSteps takes, per step ordinal, the critical rank's step.
func criticalSteps(res *LedgerClusterResult) {
	n := 0
	for _, rl := range res.Ranks {
		n = max(n, len(rl.Steps))
	}
	for k := 0; k < n; k++ {
		best := -1
		for i := range res.Ranks {
			rl := &res.Ranks[i]
			if k >= len(rl.Steps) {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			a, b := &rl.Steps[k], &res.Ranks[best].Steps[k]
			pa, pb := a.Causes[CausePeerWait], b.Causes[CausePeerWait]
			if pa < pb || pa == pb && a.Ns() > b.Ns() {
				best = i
			}
		}
		res.Steps = append(res.Steps, CriticalStep{Step: k, Rank: res.Ranks[best].Rank, LedgerStep: res.Ranks[best].Steps[k]})
	}
}
