package replay

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// RemoveKernels removes every kernel whose op type is Op (case-insensitive)
// and, when After is set, whose closest preceding kernel's op type starts
// with After (the routing Cumsum follows MoeInitRouting*): its time and
// the launch gap before it leave the stream.
type RemoveKernels struct {
	Op, After string
}

// Name implements Transform.
func (t RemoveKernels) Name() string { return "remove_kernels" }

// Apply implements Transform.
func (t RemoveKernels) Apply(tl *Timeline) (string, bool, error) { return applySteps(tl, t) }

// removeEdit is RemoveKernels under way.
type removeEdit struct {
	t             RemoveKernels
	isOp, isAfter [][]bool // per rank, per op: Op; After's prefix
	n             int
	e             editor
}

func (t RemoveKernels) begin(tl *Timeline) (stepEdit, error) {
	r := &removeEdit{t: t}
	for _, l := range tl.Ranks {
		isOp, isAfter := make([]bool, len(l.Ops)), make([]bool, len(l.Ops))
		for i, op := range l.Ops {
			isOp[i] = strings.EqualFold(op, t.Op)
			isAfter[i] = t.After == "" || hasPrefixFold(op, t.After)
		}
		r.isOp, r.isAfter = append(r.isOp, isOp), append(r.isAfter, isAfter)
	}
	return r, nil
}

// step removes step k's matching kernels on every rank.
func (r *removeEdit) step(tl *Timeline, k int) {
	for ri, l := range tl.Ranks {
		isOp, isAfter := r.isOp[ri], r.isAfter[ri]
		step := &l.Steps[k]
		st := &r.e.o
		l.open(step, st)
		drop, _ := r.e.marks(st)
		prev, dropped := -1, 0 // the closest kept kernel's op before the item
		for i := range st.Items {
			it := &st.Items[i]
			if it.Kind != Kernel {
				continue
			}
			if isOp[it.Op] && (r.t.After == "" || (prev >= 0 && isAfter[prev])) {
				drop[i] = true
				dropped++
				continue
			}
			prev = int(it.Op)
		}
		if dropped > 0 {
			r.e.drop(st)
			l.store(step, st)
			r.n += dropped
		}
	}
}

func (r *removeEdit) end(tl *Timeline) (string, bool, error) {
	t, n := r.t, r.n
	if n == 0 {
		return "", false, fmt.Errorf("no %s kernel to remove", t.Op)
	}
	where := ""
	if t.After != "" {
		where = " after " + t.After + "*"
	}
	return fmt.Sprintf("removed %.1f %s kernels%s per rank and step with the launch gap before each",
		float64(n)/float64(len(tl.Ranks)*tl.Steps), t.Op, where), false, nil
}

// DefaultGraphGapNs is the gap between kernels of a graph replay when the
// profile has no replayed steps to measure it from.
const DefaultGraphGapNs = 500

// EagerToGraph replays the steps from a captured graph: the gaps between a
// step's kernels (from its first kernel on) shrink to graph-replay gaps,
// measured in the same profile when it has graph-replayed kernels, else
// DefaultGraphGapNs. The time between steps is unchanged.
type EagerToGraph struct{}

// Name implements Transform.
func (EagerToGraph) Name() string { return "eager_to_graph" }

// Apply implements Transform.
func (t EagerToGraph) Apply(tl *Timeline) (string, bool, error) { return applySteps(tl, t) }

// graphEdit is EagerToGraph under way.
type graphEdit struct {
	gap      int64
	measured bool
	items    []Item
}

func (EagerToGraph) begin(tl *Timeline) (stepEdit, error) {
	gap, measured := tl.graphGapMemo()
	return &graphEdit{gap: gap, measured: measured}, nil
}

// step shrinks step k's gaps on every rank.
func (g *graphEdit) step(tl *Timeline, k int) {
	for _, l := range tl.Ranks {
		st := &l.Steps[k]
		g.items = l.items(st, g.items)
		started := false
		for i := range g.items {
			it := &g.items[i]
			if started {
				it.Gap = min(it.Gap, g.gap)
			}
			if it.Kind == Kernel {
				started, it.Graph = true, true
			}
		}
		l.setItems(st, g.items)
	}
}

func (g *graphEdit) end(*Timeline) (string, bool, error) {
	src := "the documented default"
	if g.measured {
		src = "the median gap between this profile's graph-replayed kernels"
	}
	return fmt.Sprintf("gaps between a step's kernels set to %v (%s); the time between steps unchanged",
		time.Duration(g.gap), src), false, nil
}

// graphGap is the median gap before a graph-replayed kernel that follows
// another kernel, or the default.
func (tl *Timeline) graphGap() (int64, bool) {
	var g []int64
	var it Item
	for _, l := range tl.Ranks {
		for k := range l.Steps[:tl.Steps] {
			c := l.cursor(&l.Steps[k])
			prev := ItemKind(255)
			for range l.Steps[k].N {
				c.next(&it)
				if it.Kind == Kernel && it.Graph && prev == Kernel {
					g = append(g, it.Gap)
				}
				prev = it.Kind
			}
			c.close()
		}
	}
	if len(g) == 0 {
		return DefaultGraphGapNs, false
	}
	sort.Slice(g, func(a, b int) bool { return g[a] < g[b] })
	return g[len(g)/2], true
}

// Rebatch runs the kernels that processed From tokens at To tokens (the
// token-expert pairs of GroupedMatmul and SwiGlu scale alike). How a
// kernel's time changes with tokens comes from the profile when it holds
// several token counts of that op, else from the per-op model.
// Collectives are unchanged (latency-bound at decode sizes). From 0 means
// the decode batch the attention kernels show. WithinRanks fits an op's
// time per token within each rank (newTokenModelWithin), as the
// target-concurrency what-if does.
type Rebatch struct {
	From, To    int32
	WithinRanks bool
}

// Name implements Transform.
func (t Rebatch) Name() string { return "rebatch" }

// Apply implements Transform.
func (t Rebatch) Apply(tl *Timeline) (string, bool, error) { return applySteps(tl, t) }

// rebatchEdit is Rebatch under way.
type rebatchEdit struct {
	from, to int32
	m        *tokenModel
	n        int
	items    []Item
}

func (t Rebatch) begin(tl *Timeline) (stepEdit, error) {
	from := t.From
	if from == 0 {
		from = tl.batch()
	}
	if from <= 0 || t.To <= 0 {
		return nil, fmt.Errorf("the decode batch is unknown (no attention kernel with an input shape)")
	}
	return &rebatchEdit{from: from, to: t.To, m: tl.tokenModel(t.WithinRanks)}, nil
}

func (r *rebatchEdit) step(tl *Timeline, k int) {
	var n int
	n, r.items = tl.rebatchStep(k, r.m, r.from, r.to, true, r.items)
	r.n += n
}

func (r *rebatchEdit) end(tl *Timeline) (string, bool, error) {
	return fmt.Sprintf("%d kernels per rank and step rebatched from %d to %d tokens: %s; collectives unchanged",
		r.n/max(1, len(tl.Ranks)*tl.Steps), r.from, r.to, r.m.basis()), false, nil
}

// rebatchStep retimes step k's kernels at from tokens on every rank (and,
// with pairs, the expert ops in proportion) and returns how many it
// changed; buf is the buffer a step's items are decoded in.
func (tl *Timeline) rebatchStep(k int, m *tokenModel, from, to int32, pairs bool, buf []Item) (int, []Item) {
	n := 0
	for _, l := range tl.Ranks {
		st := &l.Steps[k]
		buf = l.items(st, buf)
		n0 := n
		for i := range buf {
			it := &buf[i]
			if it.Kind != Kernel || it.Tokens <= 0 {
				continue
			}
			nt := it.Tokens
			switch {
			case it.Tokens == from:
				nt = to
			case pairs && l.class(it.Op)&opExpert != 0:
				nt = int32(int64(it.Tokens)*int64(to)/int64(from) + 0)
			default:
				continue
			}
			it.Dur = m.dur(l, it, it.Dur, it.Tokens, nt)
			it.Tokens = nt
			n++
		}
		if n > n0 {
			l.setItems(st, buf)
		}
	}
	return n, buf
}
