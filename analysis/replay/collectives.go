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
	var e editor
	for _, l := range tl.Ranks {
		g := l.group(t.Group)
		if g < 0 {
			return "", false, fmt.Errorf("rank %d has no %s group", l.Rank, t.Group)
		}
		ar := l.intern("allreduce")
		rs, ag := l.opIndex("reducescatter"), l.opIndex("allgather")
		for k := range l.Steps[:tl.Steps] {
			r, x := e.replaceStep(&l.Steps[k], rs, ag, uint16(g), ar, cost)
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
// replaced: each reduce-scatter (type rs) becomes an all-reduce of group g,
// each all-gather (type ag) before the last reduce-scatter goes with its
// wait and EVENT_RECORD.
func (e *editor) replaceStep(st *Step, rs, ag int, g, ar uint16, cost int64) (removed, replaced int) {
	lastRS := -1
	for ci, c := range st.Colls {
		if int(c.Type) == rs {
			lastRS = ci
		}
	}
	if lastRS < 0 {
		return 0, 0
	}
	st.edit()
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
			rs, want := l.opIndex("reducescatter"), l.opIndex(typ)
			if want < 0 {
				continue
			}
			for _, st := range l.Steps[:tl.Steps] {
				lastRS := -1
				for ci, c := range st.Colls {
					if int(c.Type) == rs {
						lastRS = ci
					}
				}
				for ci, c := range st.Colls {
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
	idx := make([][]int32, len(tl.Ranks)) // per rank: its expert ops' items
	var its []*Item
	var ls []*RankLine
	for k := 0; k < tl.Steps; k++ {
		occ := 0
		for r, l := range tl.Ranks {
			st := &l.Steps[k]
			idx[r] = idx[r][:0]
			for i := range st.Items {
				if it := &st.Items[i]; it.Kind == Kernel && l.class(it.Op)&opExpert != 0 {
					idx[r] = append(idx[r], int32(i))
				}
			}
			if len(idx[r]) > 0 {
				st.edit()
			}
			occ = max(occ, len(idx[r]))
		}
		for j := 0; j < occ; j++ {
			its, ls = its[:0], ls[:0]
			for r, l := range tl.Ranks {
				if j < len(idx[r]) {
					its, ls = append(its, &l.Steps[k].Items[idx[r][j]]), append(ls, l)
				}
			}
			f(ls, its)
		}
		if k == 0 {
			first = occ
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
