package replay

import "strings"

// removeItem drops item i of st: its time and the gap before it leave the
// stream; collectives issued after it move up.
func removeItem(st *Step, i int) {
	st.Items = append(st.Items[:i], st.Items[i+1:]...)
	for ci := range st.Colls {
		if int(st.Colls[ci].Pos) > i {
			st.Colls[ci].Pos--
		}
	}
}

// removeColl drops collective ci of st with the wait on it and the
// EVENT_RECORD that issued it, and renumbers the group's sequence.
func removeColl(st *Step, ci int) {
	pos := int(st.Colls[ci].Pos)
	for j := len(st.Items) - 1; j >= 0; j-- {
		if st.Items[j].Kind == Wait && int(st.Items[j].Coll) == ci {
			removeItem(st, j)
		}
	}
	if pos > 0 && pos-1 < len(st.Items) && st.Items[pos-1].Kind == Record {
		removeItem(st, pos-1)
	}
	st.Colls = append(st.Colls[:ci], st.Colls[ci+1:]...)
	for j := range st.Items {
		if c := int(st.Items[j].Coll); c > ci {
			st.Items[j].Coll--
		}
	}
	renumber(st)
}

// renumber sets each collective's Seq to its index among the step's
// collectives of its group.
func renumber(st *Step) {
	seq := map[uint16]int32{}
	for ci := range st.Colls {
		c := &st.Colls[ci]
		c.Seq = seq[c.Group]
		seq[c.Group]++
	}
}

// hasPrefixFold reports whether s starts with prefix, ignoring case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// isExpertOp reports whether an op's tokens are token-expert pairs (the
// GroupedMatmul and SwiGlu of a MoE layer).
func isExpertOp(op string) bool {
	return containsFold(op, "GroupedMatmul") || containsFold(op, "SwiGlu")
}

// isAttention reports whether an op is a decode attention kernel (its
// first input is [tokens, ...]).
func isAttention(op string) bool {
	return containsFold(op, "FusedInferAttentionScore") || containsFold(op, "IncreFlashAttention") ||
		containsFold(op, "PagedAttention")
}

// decodeBatch is the most frequent token count of the attention kernels
// (the decode batch, padded when a graph or FLASHCOMM1 padded it), 0 when
// unknown.
func (tl *Timeline) decodeBatch() int32 {
	n := map[int32]int{}
	var best int32
	for _, l := range tl.Ranks {
		for _, st := range l.Steps[:tl.Steps] {
			for _, it := range st.Items {
				if it.Kind == Kernel && it.Tokens > 0 && isAttention(l.op(it.Op)) {
					n[it.Tokens]++
					if c := n[it.Tokens]; c > n[best] || (c == n[best] && it.Tokens > best) {
						best = it.Tokens
					}
				}
			}
		}
	}
	return best
}
