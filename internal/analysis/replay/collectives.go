package replay

import (
	"fmt"
	"math"
	"time"
)

// ReplaceCollectives turns FLASHCOMM1 and expert parallel off: in every
// step each reduce-scatter becomes an all-reduce of Group (one after
// attention, one after the MoE) and each all-gather issued before a
// reduce-scatter disappears (the step's last all-gather, the logits one,
// stays). The all-reduce costs what the profile's own all-reduces of Group
// cost, else a reduce-scatter plus an all-gather of the same group. The
// kernels FLASHCOMM1 ran on one TP shard go back to the decode batch, and
// every rank's GroupedMatmul/SwiGlu takes the EP ranks' mean (without
// expert parallel each rank computes every expert at 1/TP width).
type ReplaceCollectives struct {
	Group string // "tp"
}

// Name implements Transform.
func (t ReplaceCollectives) Name() string { return "replace_collectives" }

// Apply implements Transform.
func (t ReplaceCollectives) Apply(tl *Timeline) (string, bool, error) { return applySteps(tl, t) }

// replaceEdit is ReplaceCollectives under way.
type replaceEdit struct {
	t                 ReplaceCollectives
	cost              int64
	src               string
	g, ar             []uint16 // per rank: the group's index, allreduce's op index
	rs, ag            []int    // per rank: reducescatter's and allgather's op index, -1 none
	removed, replaced int
	batch, tp         int32
	m                 *tokenModel // nil: no FLASHCOMM1-sharded kernel to rebatch
	rebatched, eq     int
	e                 editor
	x                 experts
	items             []Item
}

// begin checks every rank and reads what the edits of every step share,
// from tl as it is: replacing collectives drops waits and EVENT_RECORDs,
// never a kernel, so the decode batch and the token model are those of
// the replaced timeline too.
func (t ReplaceCollectives) begin(tl *Timeline) (stepEdit, error) {
	cost, src, err := tl.allReduceCostMemo(t.Group)
	if err != nil {
		return nil, err
	}
	r := &replaceEdit{t: t, cost: cost, src: src}
	for _, l := range tl.Ranks {
		g := l.group(t.Group)
		if g < 0 {
			return nil, fmt.Errorf("rank %d has no %s group", l.Rank, t.Group)
		}
		r.g, r.ar = append(r.g, uint16(g)), append(r.ar, l.intern("allreduce"))
		r.rs, r.ag = append(r.rs, l.opIndex("reducescatter")), append(r.ag, l.opIndex("allgather"))
	}
	r.batch = tl.batch()
	if g := tl.Ranks[0].group(t.Group); g >= 0 {
		r.tp = int32(len(tl.Ranks[0].Groups[g].Members))
	}
	if r.tp > 1 && r.batch%r.tp == 0 {
		r.m = tl.tokenModel(false)
	}
	return r, nil
}

// step replaces step k's collectives on every rank, rebatches its
// FLASHCOMM1-sharded kernels and equalizes its expert ops.
func (r *replaceEdit) step(tl *Timeline, k int) {
	for i, l := range tl.Ranks {
		rm, x := r.e.replaceStep(l, &l.Steps[k], r.rs[i], r.ag[i], r.g[i], r.ar[i], r.cost)
		r.removed, r.replaced = r.removed+rm, r.replaced+x
	}
	if r.m != nil {
		var n int
		n, r.items = tl.rebatchStep(k, r.m, r.batch/r.tp, r.batch, false, r.items)
		r.rebatched += n
	}
	if occ := r.x.sum(tl, k); k == 0 {
		r.eq = occ
	}
	r.x.edit(tl, k, equalize)
}

func (r *replaceEdit) end(tl *Timeline) (string, bool, error) {
	if r.replaced == 0 {
		return "", false, fmt.Errorf("no reduce-scatter to replace")
	}
	unshard := "no FLASHCOMM1-sharded kernel"
	if r.m != nil && r.rebatched > 0 {
		unshard = fmt.Sprintf("kernels at %d tokens (one TP shard) back to %d: %s", r.batch/r.tp, r.batch, r.m.basis())
	}
	per := func(n int) float64 { return float64(n) / float64(len(tl.Ranks)*tl.Steps) }
	return fmt.Sprintf("%.0f all-gathers/reduce-scatters per rank and step become %.0f %s all-reduces of %v each (%s); %s; %d GroupedMatmul/SwiGlu per step at the EP ranks' mean (no expert parallel: every rank computes every expert at 1/TP width)",
		per(r.removed+r.replaced), per(r.replaced), r.t.Group, time.Duration(r.cost).Round(100*time.Nanosecond), r.src, unshard, r.eq), false, nil
}

// replaceStep edits one step and returns the collectives removed and
// replaced: each reduce-scatter (type rs) becomes an all-reduce of group g,
// each all-gather (type ag) before the last reduce-scatter goes with its
// wait and EVENT_RECORD.
func (e *editor) replaceStep(l *RankLine, step *Step, rs, ag int, g, ar uint16, cost int64) (removed, replaced int) {
	st := &e.o
	st.Colls = colls(step, st.Colls)
	lastRS := -1
	for ci, c := range st.Colls {
		if int(c.Type) == rs {
			lastRS = ci
		}
	}
	if lastRS < 0 {
		return 0, 0
	}
	st.Items = l.items(step, st.Items)
	e.marks(st)
	for ci := len(st.Colls) - 1; ci >= 0; ci-- {
		c := &st.Colls[ci]
		switch int(c.Type) {
		case rs:
			c.Type, c.Group, c.Transfer = ar, g, cost
			replaced++
		case ag:
			if ci < lastRS {
				e.markColl(st, ci)
				removed++
			}
		}
	}
	e.markWaits(st)
	e.drop(st)
	l.store(step, st)
	return removed, replaced
}

// allReduceCost is the transfer time of an all-reduce of group g, from
// the profile's own collectives of that group: the mean of its
// all-reduces, else a reduce-scatter's plus an all-gather's (a ring
// all-reduce of the same bytes is one of each). Each op counts its own
// time (Transfer: the shortest member's, its wait for the last member left
// out). The profile records no collective sizes, so the ops are of every
// size the group ran; the basis says which ops and how many.
func (tl *Timeline) allReduceCost(g string) (int64, string, error) {
	// the all-gathers that go (issued before a reduce-scatter), not the
	// step's logits all-gather
	var cs []Coll
	mean := func(typ string) (int64, int) {
		var s int64
		n := 0
		for _, l := range tl.Ranks {
			rs, want := l.opIndex("reducescatter"), l.opIndex(typ)
			if want < 0 {
				continue
			}
			for k := range l.Steps[:tl.Steps] {
				cs = colls(&l.Steps[k], cs)
				lastRS := -1
				for ci, c := range cs {
					if int(c.Type) == rs {
						lastRS = ci
					}
				}
				for ci, c := range cs {
					if typ == "allgather" && ci > lastRS {
						continue
					}
					if int(c.Type) == want && l.Groups[c.Group].Name == g {
						s += c.Transfer
						n++
					}
				}
			}
		}
		if n == 0 {
			return 0, 0
		}
		return s / int64(n), n
	}
	if ar, n := mean("allreduce"); n > 0 {
		return ar, fmt.Sprintf("the mean of the profile's own %d %s all-reduces, each its own time without the wait for the last member; the profile records no collective sizes", n, g), nil
	}
	rs, nr := mean("reducescatter")
	ag, na := mean("allgather")
	if nr == 0 || na == 0 {
		return 0, "", fmt.Errorf("no %s all-reduce, reduce-scatter and all-gather to cost an all-reduce from", g)
	}
	return rs + ag, fmt.Sprintf("a %s reduce-scatter plus a %s all-gather, the means of the profile's own %d and %d, each its own time without the wait for the last member: a ring all-reduce of the same bytes is one of each (the profile has no %s all-reduce and records no collective sizes)", g, g, nr, na, g), nil
}

// equalize sets the j-th expert op of every rank (it, of a rank with that
// occurrence) to the mean duration over the ranks and to every rank's
// token-expert pairs (each rank now processes all of them, at 1/TP width).
func equalize(_ *RankLine, _, _ int, sum *expertSum, it *Item) {
	it.Dur, it.Tokens = sum.dur/sum.n, int32(sum.tok)
}

// expertSum is one occurrence of an expert op in a step over the ranks
// that have it.
type expertSum struct {
	dur, tok int64 // summed
	n        int64 // ranks
	// shares: the placement has shares for those ranks (rebalanceEdit),
	// share their sum
	shares bool
	share  float64
}

// experts edits the expert ops (GroupedMatmul, SwiGlu) of a step of every
// rank, each occurrence j against its sums over the ranks: a first pass
// over the ranks sums them, a second edits each rank's step, so what is
// held is a sum per occurrence, not the ops of every rank.
type experts struct {
	sums []expertSum
	n    []int32 // per rank: its expert ops in the step
	o    []Item
}

// isExpert reports whether it is an expert op of l.
func (l *RankLine) isExpert(it *Item) bool {
	return it.Kind == Kernel && l.class(it.Op)&opExpert != 0
}

// sum sums step k's expert ops per occurrence over the ranks and returns
// the occurrences (the most any rank has).
func (x *experts) sum(tl *Timeline, k int) int {
	x.sums, x.n = x.sums[:0], resize(x.n, len(tl.Ranks))
	var it Item
	for r, l := range tl.Ranks {
		st := &l.Steps[k]
		c := l.cursor(st)
		j := 0
		for range int(st.N) {
			if c.next(&it); l.isExpert(&it) {
				if j == len(x.sums) {
					x.sums = append(x.sums, expertSum{})
				}
				e := &x.sums[j]
				e.dur, e.tok, e.n = e.dur+it.Dur, e.tok+int64(it.Tokens), e.n+1
				j++
			}
		}
		c.close()
		x.n[r] = int32(j)
	}
	return len(x.sums)
}

// edit calls f with each expert op of step k on every rank, its rank's
// index, its occurrence and the occurrence's sums (f edits it), and writes
// the steps back.
func (x *experts) edit(tl *Timeline, k int, f func(l *RankLine, r, j int, sum *expertSum, it *Item)) {
	for r, l := range tl.Ranks {
		if x.n[r] == 0 {
			continue
		}
		st := &l.Steps[k]
		x.o = l.items(st, x.o)
		j := 0
		for i := range x.o {
			if it := &x.o[i]; l.isExpert(it) {
				f(l, r, j, &x.sums[j], it)
				j++
			}
		}
		l.setItems(st, x.o)
	}
}

// RebalanceExperts models EPLB: in every MoE layer each EP rank's
// GroupedMatmul and SwiGlu process the rank's token load under a
// placement, timed per token from the profile (least squares over the
// ranks' loads; the ranks' mean time per token when the profile holds one
// load). With Shares (per MoE layer of the expert loads, each EP rank's
// share of the layer's tokens under the planned placement, by its index
// in the ep group) the placement is the planned one and the prediction is
// one; without, every rank takes the EP group's mean load: an ideal
// placement, so the prediction is an upper bound of what a placement
// gains. The peers' waits follow from the replay.
type RebalanceExperts struct {
	Shares [][]float64
	// Basis says where Shares come from.
	Basis string
}

// Name implements Transform.
func (RebalanceExperts) Name() string { return "rebalance_experts" }

// Apply implements Transform.
func (t RebalanceExperts) Apply(tl *Timeline) (string, bool, error) { return applySteps(tl, t) }

// rebalanceEdit is RebalanceExperts under way.
type rebalanceEdit struct {
	t      RebalanceExperts
	m      *tokenModel
	first  int               // expert ops in the first step
	ep     map[*RankLine]int // a rank's index in its ep group
	placed int               // expert op occurrences set by the placement
	ideal  int               // those set to the group's mean (no share for them)
	x      experts
}

func (t RebalanceExperts) begin(tl *Timeline) (stepEdit, error) {
	r := &rebalanceEdit{t: t, m: tl.tokenModel(false), ep: map[*RankLine]int{}}
	for _, l := range tl.Ranks {
		if g := l.group("ep"); g >= 0 {
			for j, m := range l.Groups[g].Members {
				if m == l.Rank {
					r.ep[l] = j
				}
			}
		}
	}
	return r, nil
}

// shares sets, per occurrence of the step's expert ops (r.x.sums), the
// placement's shares of the ranks that have it: their sum, or none when
// the placement does not map onto the occurrences, a rank of them has no
// share or they sum to nothing.
func (r *rebalanceEdit) shares(tl *Timeline) {
	occ, layers := len(r.x.sums), len(r.t.Shares)
	if layers == 0 || occ%layers != 0 {
		return
	}
	for j := range r.x.sums {
		sh := r.t.Shares[j/(occ/layers)]
		var sum float64
		ok := true
		for ri, l := range tl.Ranks {
			if int(r.x.n[ri]) <= j {
				continue
			}
			e, has := r.ep[l]
			if !has || e >= len(sh) {
				ok = false
				break
			}
			sum += sh[e]
		}
		r.x.sums[j].shares, r.x.sums[j].share = ok && sum > 0, sum
	}
}

// step sets step k's expert ops to their ranks' loads under the placement.
func (r *rebalanceEdit) step(tl *Timeline, k int) {
	m := r.m
	n := r.x.sum(tl, k)
	r.shares(tl)
	for j := range r.x.sums {
		if r.x.sums[j].shares {
			r.placed++
		} else {
			r.ideal++
		}
	}
	layers := len(r.t.Shares)
	r.x.edit(tl, k, func(l *RankLine, _, j int, s *expertSum, it *Item) {
		mean := float64(s.tok) / float64(s.n)
		nt := int32(mean)
		if s.shares {
			share := r.t.Shares[j/(n/layers)][r.ep[l]] / s.share
			nt = int32(math.Round(share * float64(s.tok)))
		}
		switch {
		case m.fitted[fitKey(l, it)]:
			it.Dur = m.dur(l, it, it.Dur, it.Tokens, nt)
		case s.shares && mean > 0:
			it.Dur = int64(float64(s.dur) / float64(s.n) * float64(nt) / mean)
		default:
			it.Dur = s.dur / s.n
		}
		it.Tokens = nt
	})
	if k == 0 {
		r.first = n
	}
}

func (r *rebalanceEdit) end(*Timeline) (string, bool, error) {
	if r.first == 0 {
		return "", false, fmt.Errorf("no GroupedMatmul kernel to rebalance")
	}
	if r.placed > 0 && r.ideal == 0 {
		return fmt.Sprintf("%d GroupedMatmul/SwiGlu per step at each EP rank's token load under %s, %s",
			r.first, r.t.Basis, r.m.basis()), false, nil
	}
	why := ""
	if len(r.t.Shares) > 0 {
		why = fmt.Sprintf(" (the planned placement's %d layers do not map onto the step's %d expert ops, or a rank is not in its ep group)", len(r.t.Shares), r.first)
	}
	return fmt.Sprintf("%d GroupedMatmul/SwiGlu per step at the EP group's mean token load (an ideal placement: an upper bound)%s, %s",
		r.first, why, r.m.basis()), true, nil
}
