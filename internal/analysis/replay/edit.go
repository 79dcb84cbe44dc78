package replay

import "strings"

// editor holds the buffers one transform reuses across steps.
type editor struct {
	dropItem []bool
	dropColl []bool
	shift    []int32 // items dropped before each position
	newColl  []int16 // each collective's index after the drop, -1 dropped
	o        open    // the step being edited, decoded
}

// drop removes the items and collectives marked in e.dropItem and
// e.dropColl (sized to the step) in one pass: the time of a dropped item
// and the gap before it leave the stream, collectives issued after dropped
// items move up, and each group's collectives are numbered again.
func (e *editor) drop(st *open) {
	e.shift = resize(e.shift, len(st.Items)+1)
	e.newColl = resize(e.newColl, len(st.Colls))
	n := int32(0)
	for i := range st.Items {
		e.shift[i] = n
		if e.dropItem[i] {
			n++
		}
	}
	e.shift[len(st.Items)] = n
	kept := 0
	for ci := range st.Colls {
		if e.dropColl[ci] {
			e.newColl[ci] = -1
			continue
		}
		c := st.Colls[ci]
		c.Pos -= e.shift[c.Pos]
		e.newColl[ci] = int16(kept)
		st.Colls[kept] = c
		kept++
	}
	st.Colls = st.Colls[:kept]
	w := 0
	for i, it := range st.Items {
		if e.dropItem[i] {
			continue
		}
		if it.Coll >= 0 {
			it.Coll = e.newColl[it.Coll]
		}
		st.Items[w] = it
		w++
	}
	st.Items = st.Items[:w]
	renumber(st.Colls)
}

// marks returns e's drop masks sized to st, cleared.
func (e *editor) marks(st *open) (items, colls []bool) {
	e.dropItem, e.dropColl = resize(e.dropItem, len(st.Items)), resize(e.dropColl, len(st.Colls))
	clear(e.dropItem)
	clear(e.dropColl)
	return e.dropItem, e.dropColl
}

// markColl marks collective ci of st for dropping with the waits on it
// and the EVENT_RECORD that issued it: the last item issued before it
// that is still there once the collectives after ci marked before it are
// gone (the collectives of a step are marked from the last to the first).
func (e *editor) markColl(st *open, ci int) {
	e.dropColl[ci] = true
	gone := func(j int) bool {
		it := &st.Items[j]
		return e.dropItem[j] || (it.Kind == Wait && int(it.Coll) >= ci && e.dropColl[it.Coll])
	}
	j := int(st.Colls[ci].Pos) - 1
	for j >= 0 && gone(j) {
		j--
	}
	if j >= 0 && st.Items[j].Kind == Record {
		e.dropItem[j] = true
	}
}

// markWaits marks the waits on the collectives marked for dropping.
func (e *editor) markWaits(st *open) {
	for j := range st.Items {
		if it := &st.Items[j]; it.Kind == Wait && it.Coll >= 0 && e.dropColl[it.Coll] {
			e.dropItem[j] = true
		}
	}
}

// renumber sets each collective's Seq to its index among the step's
// collectives of its group.
func renumber(colls []Coll) {
	var buf [16]int32
	seq := buf[:0]
	for ci := range colls {
		c := &colls[ci]
		for int(c.Group) >= len(seq) {
			seq = append(seq, 0)
		}
		c.Seq = seq[c.Group]
		seq[c.Group]++
	}
}

// hasPrefixFold reports whether s starts with prefix, ignoring case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// containsFold reports whether s contains sub, ignoring case, as
// strings.Contains of both lowered; an ASCII s is searched without
// lowering it.
func containsFold(s, sub string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
		}
	}
	for i := 0; i < len(sub); i++ {
		if sub[i] >= 0x80 {
			return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
		}
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// Op classes: what the transforms ask of an op's name.
const (
	opExpert    uint8 = 1 << iota // GroupedMatmul, SwiGlu: token-expert pairs
	opAttention                   // a decode attention kernel
	opMatmul                      // a weight-bound matmul
)

// classOf returns the classes of an op's name.
func classOf(op string) uint8 {
	var c uint8
	if isExpertOp(op) {
		c |= opExpert
	}
	if isAttention(op) {
		c |= opAttention
	}
	if containsFold(op, "matmul") {
		c |= opMatmul
	}
	return c
}

// class returns the classes of op index i, from the line's table when it
// holds them (set by NewTimeline and intern).
func (l *RankLine) class(i uint16) uint8 {
	if int(i) < len(l.classes) {
		return l.classes[i]
	}
	return classOf(l.Ops[i])
}

// classify fills the line's op classes.
func (l *RankLine) classify() {
	if len(l.classes) == len(l.Ops) {
		return
	}
	l.classes = make([]uint8, len(l.Ops))
	for i, op := range l.Ops {
		l.classes[i] = classOf(op)
	}
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
	var it Item
	for _, l := range tl.Ranks {
		for k := range l.Steps[:tl.Steps] {
			c := l.cursor(&l.Steps[k])
			for range l.Steps[k].N {
				c.next(&it)
				if it.Kind == Kernel && it.Tokens > 0 && l.class(it.Op)&opAttention != 0 {
					n[it.Tokens]++
					if c := n[it.Tokens]; c > n[best] || (c == n[best] && it.Tokens > best) {
						best = it.Tokens
					}
				}
			}
			c.close()
		}
	}
	return best
}
