package replay

import (
	"fmt"
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
func (t ReplaceCollectives) Apply(tl *Timeline) (string, bool, error) {
	cost, src, err := tl.allReduceCost(t.Group)
	if err != nil {
		return "", false, err
	}
	removed, replaced := 0, 0
	for _, l := range tl.Ranks {
		g := l.group(t.Group)
		if g < 0 {
			return "", false, fmt.Errorf("rank %d has no %s group", l.Rank, t.Group)
		}
		ar := l.intern("allreduce")
		for k := range l.Steps[:tl.Steps] {
			r, x := replaceStep(l, &l.Steps[k], uint16(g), ar, cost)
			removed, replaced = removed+r, replaced+x
		}
	}
	if replaced == 0 {
		return "", false, fmt.Errorf("no reduce-scatter to replace")
	}
	batch, tp := tl.decodeBatch(), int32(0)
	if g := tl.Ranks[0].group(t.Group); g >= 0 {
		tp = int32(len(tl.Ranks[0].Groups[g].Members))
	}
	unshard := "no FLASHCOMM1-sharded kernel"
	if tp > 1 && batch%tp == 0 {
		m := newTokenModel(tl)
		if n := tl.rebatch(m, batch/tp, batch, false); n > 0 {
			unshard = fmt.Sprintf("kernels at %d tokens (one TP shard) back to %d: %s", batch/tp, batch, m.basis())
		}
	}
	eq := tl.equalizeExperts()
	per := func(n int) float64 { return float64(n) / float64(len(tl.Ranks)*tl.Steps) }
	return fmt.Sprintf("%.0f all-gathers/reduce-scatters per rank and step become %.0f %s all-reduces of %v each (%s); %s; %d GroupedMatmul/SwiGlu per step at the EP ranks' mean (no expert parallel: every rank computes every expert at 1/TP width)",
		per(removed+replaced), per(replaced), t.Group, time.Duration(cost).Round(100*time.Nanosecond), src, unshard, eq), false, nil
}

// replaceStep edits one step and returns the collectives removed and
// replaced.
func replaceStep(l *RankLine, st *Step, g, ar uint16, cost int64) (removed, replaced int) {
	lastRS := -1
	for ci, c := range st.Colls {
		if l.op(c.Type) == "reducescatter" {
			lastRS = ci
		}
	}
	for ci := len(st.Colls) - 1; ci >= 0; ci-- {
		c := &st.Colls[ci]
		switch l.op(c.Type) {
		case "reducescatter":
			c.Type, c.Group, c.Transfer = ar, g, cost
			replaced++
		case "allgather":
			if ci < lastRS {
				removeColl(st, ci)
				removed++
			}
		}
	}
	renumber(st)
	return removed, replaced
}

// allReduceCost is the transfer time of an all-reduce of group g: the mean
// of the profile's own, else a reduce-scatter's plus an all-gather's.
func (tl *Timeline) allReduceCost(g string) (int64, string, error) {
	// the all-gathers that go (issued before a reduce-scatter), not the
	// step's logits all-gather
	mean := func(typ string) (int64, int) {
		var s int64
		n := 0
		for _, l := range tl.Ranks {
			for _, st := range l.Steps[:tl.Steps] {
				lastRS := -1
				for ci, c := range st.Colls {
					if l.op(c.Type) == "reducescatter" {
						lastRS = ci
					}
				}
				for ci, c := range st.Colls {
					if typ == "allgather" && ci > lastRS {
						continue
					}
					if l.Groups[c.Group].Name == g && l.op(c.Type) == typ {
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
		return ar, fmt.Sprintf("the profile's own %s all-reduces", g), nil
	}
	rs, nr := mean("reducescatter")
	ag, na := mean("allgather")
	if nr == 0 || na == 0 {
		return 0, "", fmt.Errorf("no %s all-reduce, reduce-scatter and all-gather to cost an all-reduce from", g)
	}
	return rs + ag, fmt.Sprintf("a %s reduce-scatter plus a %s all-gather of the same bytes: the profile has no %s all-reduce", g, g, g), nil
}

// equalizeExperts sets, per step, the j-th expert op of every rank to the
// mean duration over the ranks and to every rank's token-expert pairs (each
// rank now processes all of them, at 1/TP width), and returns the expert
// ops per step.
func (tl *Timeline) equalizeExperts() int {
	return tl.eachExpertOp(func(_ []*RankLine, its []*Item) {
		var d, n int64
		for _, it := range its {
			d += it.Dur
			n += int64(it.Tokens)
		}
		for _, it := range its {
			it.Dur, it.Tokens = d/int64(len(its)), int32(n)
		}
	})
}

// eachExpertOp calls f, per step and occurrence, with the expert ops
// (GroupedMatmul, SwiGlu) of every rank that has that occurrence and their
// ranks' lines, and returns the occurrences in the first step.
func (tl *Timeline) eachExpertOp(f func(ls []*RankLine, its []*Item)) int {
	first := 0
	for k := 0; k < tl.Steps; k++ {
		var per [][]*Item
		var lines [][]*RankLine
		for _, l := range tl.Ranks {
			st := &l.Steps[k]
			j := 0
			for i := range st.Items {
				it := &st.Items[i]
				if it.Kind != Kernel || !isExpertOp(l.op(it.Op)) {
					continue
				}
				if j == len(per) {
					per, lines = append(per, nil), append(lines, nil)
				}
				per[j], lines[j] = append(per[j], it), append(lines[j], l)
				j++
			}
		}
		for j, its := range per {
			f(lines[j], its)
		}
		if k == 0 {
			first = len(per)
		}
	}
	return first
}

// RebalanceExperts models EPLB: in every MoE layer each EP rank's
// GroupedMatmul and SwiGlu process the EP group's mean token load, timed
// per token from the profile (least squares over the ranks' loads; the
// ranks' mean time when the profile holds one load). The peers' waits
// follow from the replay. It assumes an ideal placement, so the
// prediction is an upper bound of what an EPLB placement gains.
type RebalanceExperts struct{}

// Name implements Transform.
func (RebalanceExperts) Name() string { return "rebalance_experts" }

// Apply implements Transform.
func (RebalanceExperts) Apply(tl *Timeline) (string, bool, error) {
	m := newTokenModel(tl)
	n := tl.eachExpertOp(func(ls []*RankLine, its []*Item) {
		var d, tok int64
		for _, it := range its {
			d, tok = d+it.Dur, tok+int64(it.Tokens)
		}
		mt := int32(tok / int64(len(its)))
		for i, it := range its {
			if m.fitted[fitKey(ls[i], it)] {
				it.Dur = m.dur(ls[i], it, it.Dur, it.Tokens, mt)
			} else {
				it.Dur = d / int64(len(its))
			}
			it.Tokens = mt
		}
	})
	if n == 0 {
		return "", false, fmt.Errorf("no GroupedMatmul kernel to rebalance")
	}
	return fmt.Sprintf("%d GroupedMatmul/SwiGlu per step at the EP group's mean token load (an ideal placement: an upper bound), %s",
		n, m.basis()), true, nil
}
