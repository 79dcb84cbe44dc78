package replay

// What the target-concurrency what-if reads of a timeline (plan.WhatIf):
// the decode batch the capture ran, and each rank's GroupedMatmul time and
// tokens, before and after the timeline is rebatched to the target batch.

// DecodeBatch is the most frequent token count of the attention kernels:
// the decode batch the capture ran (padded when a graph or FLASHCOMM1
// padded it), 0 when unknown.
func (tl *Timeline) DecodeBatch() int32 { return tl.decodeBatch() }

// ExpertLoad is one rank's GroupedMatmul kernels over the timeline's
// steps: their time (ns) and tokens (token-expert pairs, 0 when no
// kernel recorded its input shape).
type ExpertLoad struct {
	Ns, Tokens int64
	Kernels    int
}

// ExpertLoads returns every rank's GroupedMatmul load over the first
// Steps steps, in the order of tl.Ranks.
func (tl *Timeline) ExpertLoads() []ExpertLoad {
	out := make([]ExpertLoad, len(tl.Ranks))
	for r, l := range tl.Ranks {
		gmm := make([]bool, len(l.Ops))
		for i, op := range l.Ops {
			gmm[i] = containsFold(op, "GroupedMatmul")
		}
		var it Item
		for k := range l.Steps[:tl.Steps] {
			c := l.cursor(&l.Steps[k])
			for range l.Steps[k].N {
				if c.next(&it); it.Kind == Kernel && gmm[it.Op] {
					out[r].Ns += it.Dur
					out[r].Tokens += int64(it.Tokens)
					out[r].Kernels++
				}
			}
			c.close()
		}
	}
	return out
}

// newTokenModelWithin is newTokenModel with each op's slope fitted within
// each rank (least squares on the rank's own deviations from its means,
// pooled over the ranks): a rank that is faster or slower as a whole, or
// that hosts the hot experts, does not bend the slope. The what-if's
// rebatch (Rebatch.WithinRanks) extrapolates far beyond the token counts
// of the capture, where that bias would be multiplied.
func newTokenModelWithin(tl *Timeline) *tokenModel {
	type acc struct {
		n, sx, sy, sxx, sxy float64
	}
	type pooled struct {
		n        int
		cxx, cxy float64
		lo, hi   int32
	}
	p := map[fitID]*pooled{}
	for _, l := range tl.Ranks {
		a := map[fitID]*acc{}
		l.tokenKernels(tl.Steps, func(op fitID, it *Item) {
			s, q := a[op], p[op]
			if s == nil {
				s = &acc{}
				a[op] = s
			}
			if q == nil {
				q = &pooled{lo: it.Tokens, hi: it.Tokens}
				p[op] = q
			}
			q.lo, q.hi = min(q.lo, it.Tokens), max(q.hi, it.Tokens)
			x, y := float64(it.Tokens), float64(it.Dur)
			s.n++
			s.sx, s.sy, s.sxx, s.sxy = s.sx+x, s.sy+y, s.sxx+x*x, s.sxy+x*y
		})
		for op, s := range a {
			q := p[op]
			q.n += int(s.n)
			q.cxx += s.sxx - s.sx*s.sx/s.n
			q.cxy += s.sxy - s.sx*s.sy/s.n
		}
	}
	m := &tokenModel{slope: map[fitID]float64{}, fitted: map[fitID]bool{}, used: map[fitID]string{}, within: true}
	for op, q := range p {
		if q.n < fitMinSamples || float64(q.hi) < fitMinSpread*float64(q.lo) || !(q.cxx > 0) {
			continue
		}
		if b := q.cxy / q.cxx; b >= 0 {
			m.slope[op], m.fitted[op] = b, true
		}
	}
	return m
}

// tokenKernels calls f with each kernel of l's first steps steps that
// recorded its tokens, and the fit it belongs to.
func (l *RankLine) tokenKernels(steps int, f func(fitID, *Item)) {
	var it Item
	for k := range l.Steps[:steps] {
		c := l.cursor(&l.Steps[k])
		for range l.Steps[k].N {
			if c.next(&it); it.Kind == Kernel && it.Tokens > 0 {
				f(fitKey(l, &it), &it)
			}
		}
		c.close()
	}
}
