package replay

import "fmt"

// Fixed costs of the per-op token model, in tokens: a kernel's time is
// proportional to (fixed + tokens). Decode-sized vector kernels are
// latency-bound (a fixed cost worth 200 tokens); weight-bound matmuls,
// whose time is loading the weights, stay nearly flat at small batches (a
// fixed cost worth 1000 tokens, or token-expert pairs for GroupedMatmul).
const (
	vectorFixedTokens = 200
	matmulFixedTokens = 1000
)

// fitMinSamples and fitMinSpread are what a profile must hold to time an
// op from its own batch sizes: this many kernels of the op, with token
// counts whose largest is at least this many times the smallest.
const (
	fitMinSamples = 8
	fitMinSpread  = 1.1
)

// tokenModel times kernels at another token count.
type tokenModel struct {
	slope  map[fitID]float64 // ns per token, from the profile
	fitted map[fitID]bool
	used   map[fitID]string // op -> "profile" or "model", for the basis
	within bool             // slopes fitted within each rank (newTokenModelWithin)
}

// newTokenModel fits, per op, duration against tokens over the timeline by
// least squares where the op ran at several token counts.
func newTokenModel(tl *Timeline) *tokenModel {
	type acc struct {
		n                int
		sx, sy, sxx, sxy float64
		lo, hi           int32
	}
	a := map[fitID]*acc{}
	for _, l := range tl.Ranks {
		l.tokenKernels(tl.Steps, func(op fitID, it *Item) {
			s := a[op]
			if s == nil {
				s = &acc{lo: it.Tokens, hi: it.Tokens}
				a[op] = s
			}
			x, y := float64(it.Tokens), float64(it.Dur)
			s.n++
			s.sx, s.sy, s.sxx, s.sxy = s.sx+x, s.sy+y, s.sxx+x*x, s.sxy+x*y
			s.lo, s.hi = min(s.lo, it.Tokens), max(s.hi, it.Tokens)
		})
	}
	m := &tokenModel{slope: map[fitID]float64{}, fitted: map[fitID]bool{}, used: map[fitID]string{}}
	for op, s := range a {
		if s.n < fitMinSamples || float64(s.hi) < fitMinSpread*float64(s.lo) {
			continue
		}
		n := float64(s.n)
		den := n*s.sxx - s.sx*s.sx
		if den <= 0 {
			continue
		}
		if b := (n*s.sxy - s.sx*s.sy) / den; b >= 0 {
			m.slope[op], m.fitted[op] = b, true
		}
	}
	return m
}

// fitID is what a fit is per: the op and its input shapes' other
// dimensions.
type fitID struct{ op, shape string }

// fitKey is the fit kernel it of l belongs to.
func fitKey(l *RankLine, it *Item) fitID { return fitID{l.op(it.Op), l.op(it.Shape)} }

// dur returns the duration of kernel it of l at tokens to given d at
// tokens from.
func (m *tokenModel) dur(l *RankLine, it *Item, d int64, from, to int32) int64 {
	if from == to || from <= 0 || to <= 0 {
		return d
	}
	key := fitKey(l, it)
	if m.fitted[key] {
		m.used[key] = "profile"
		return max(d+int64(m.slope[key]*float64(to-from)), d/10)
	}
	m.used[key] = "model"
	fixed := float64(vectorFixedTokens)
	if l.class(it.Op)&opMatmul != 0 {
		fixed = matmulFixedTokens
	}
	return int64(float64(d) * (fixed + float64(to)) / (fixed + float64(from)))
}

// basis says how many ops were timed from the profile and how many from
// the per-op model.
func (m *tokenModel) basis() string {
	p, d := 0, 0
	for _, how := range m.used {
		if how == "profile" {
			p++
		} else {
			d++
		}
	}
	fit := "least squares"
	if m.within {
		fit = "least squares within each rank"
	}
	return fmt.Sprintf("%d op(s) timed from the profile's own token counts (%s), %d from the per-op model (time ∝ %d + tokens; matmuls ∝ %d + tokens)",
		p, fit, d, vectorFixedTokens, matmulFixedTokens)
}
