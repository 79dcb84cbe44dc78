package replay

import (
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// pairSlack is how long after a collective's end a wait may end and still
// be the wait on it: a blocking EVENT_WAIT ends within a few µs of the op.
const pairSlack = 5_000

// singleOp is the Model ID of a kernel launched in single-op (eager) mode.
const singleOp = 4294967295

// Build returns the compact timeline of rank r given its decode-step
// starts (ascending; ProfilerStep#N's or npuprof's decode steps) and where
// they came from. It keeps at most MaxSteps consecutive steps from the
// middle of the capture, each with a following step start; nil when fewer
// than two step starts are given.
func Build(r *model.Rank, starts []int64, source string) *RankLine {
	if len(starts) < 2 {
		return nil
	}
	l := &RankLine{Rank: r.Rank, StepSource: source, Intervals: len(starts) - 1}
	l.StepNs = float64(starts[len(starts)-1]-starts[0]) / float64(l.Intervals)
	for _, g := range r.Groups {
		if g.Name == "" || l.group(g.Name) >= 0 {
			continue
		}
		// the model's list, sorted, is the one kept copy every rank of
		// the group shares; nothing writes into a group's members
		m := g.GlobalRanks
		if !sort.IntsAreSorted(m) {
			m = append([]int(nil), m...)
			sort.Ints(m)
		}
		l.Groups = append(l.Groups, Group{Name: strings.Clone(g.Name), Members: m})
	}
	keep := min(MaxSteps, l.Intervals)
	first := (l.Intervals - keep) / 2
	b := &builder{r: r, l: l, stream: ComputeStream(r), ops: map[string]uint16{}}
	l.Steps = make([]Step, 0, keep)
	for k := first; k < first+keep; k++ {
		l.Steps = append(l.Steps, b.step(starts[k], starts[k+1]))
	}
	l.dictIx = nil
	shareTables(l)
	return l
}

// shared keeps one copy of the op names (with their classes) and of the
// dictionary that ranks build alike (the ranks of a job run the same ops),
// which their lines then share, bounded at maxSharedBytes of keys. Nothing
// writes into a line's tables: an append to one kept at its length
// reallocates.
var shared struct {
	sync.Mutex
	ops   map[string]sharedOps
	dict  map[string][]Entry
	bytes int
}

// sharedOps is a line's Ops and classes.
type sharedOps struct {
	ops     []string
	classes []uint8
}

const maxSharedBytes = 4 << 20

// shareTables replaces l's Ops, classes and Dict with the kept copies of
// equal ones, keeping them when there are none (at their length: they grew
// by appends).
func shareTables(l *RankLine) {
	var kb []byte
	for _, s := range l.Ops {
		kb = binary.AppendUvarint(kb, uint64(len(s)))
		kb = append(kb, s...)
	}
	kb = append(kb, l.classes...)
	kb = binary.AppendUvarint(kb, uint64(len(l.classes)))
	n := len(kb)
	for _, e := range l.Dict {
		kb = binary.LittleEndian.AppendUint32(kb, uint32(e.Tokens))
		kb = binary.LittleEndian.AppendUint16(kb, e.Op)
		kb = binary.LittleEndian.AppendUint16(kb, e.Shape)
		g := byte(0)
		if e.Graph {
			g = 1
		}
		kb = append(kb, byte(e.Kind), g)
	}
	shared.Lock()
	defer shared.Unlock()
	if o, ok := shared.ops[string(kb[:n])]; ok {
		l.Ops, l.classes = o.ops, o.classes
	} else {
		l.Ops, l.classes = slices.Clip(slices.Clone(l.Ops)), slices.Clip(slices.Clone(l.classes))
		if shared.bytes+n <= maxSharedBytes {
			if shared.ops == nil {
				shared.ops, shared.dict = map[string]sharedOps{}, map[string][]Entry{}
			}
			shared.ops[string(kb[:n])] = sharedOps{l.Ops, l.classes}
			shared.bytes += n
		}
	}
	if d, ok := shared.dict[string(kb[n:])]; ok {
		l.Dict = d
	} else {
		l.Dict = slices.Clip(slices.Clone(l.Dict))
		if shared.bytes+len(kb)-n <= maxSharedBytes && shared.dict != nil {
			shared.dict[string(kb[n:])] = l.Dict
			shared.bytes += len(kb) - n
		}
	}
}

// builder holds what building one rank's steps reuses.
type builder struct {
	r      *model.Rank
	l      *RankLine
	stream int32
	ops    map[string]uint16
	ends   []int64 // stream time after each item of the step being built
	o      open    // the step being built, decoded
}

// intern returns the index of name in l.Ops, adding it when missing.
func (b *builder) intern(name string) uint16 {
	if i, ok := b.ops[name]; ok {
		return i
	}
	// the line keeps its own copy: a name of the model's symbol table
	// would keep the table's whole block alive after the model is released
	i := b.l.intern(strings.Clone(name))
	b.ops[name] = i
	return i
}

// ComputeStream is the stream that ran the most compute kernels.
// Ties go to the lower stream id.
func ComputeStream(r *model.Rank) int32 {
	// counted by the tasks' extras (which hold the stream), then by stream
	byExtra := make([]int, r.Extras.Len())
	for i := range r.Tasks {
		if t := &r.Tasks[i]; r.Class(t) == model.ClassCompute {
			if x := t.Extra.Index(); x < len(byExtra) {
				byExtra[x]++
			}
		}
	}
	n := map[int32]int{}
	for x, c := range byExtra {
		if c > 0 {
			n[r.Extras.Get(model.Extra(x)).Stream] += c
		}
	}
	best, bn := int32(-1), 0
	for s, c := range n {
		if c > bn || (c == bn && s < best) {
			best, bn = s, c
		}
	}
	return best
}

// step collects the stream's tasks and the rank's collectives that start
// in [lo, hi).
func (b *builder) step(lo, hi int64) Step {
	r, l := b.r, b.l
	st := &b.o
	st.Items, st.Colls = st.Items[:0], st.Colls[:0]
	ends := b.ends[:0]
	prev := lo
	i0 := sort.Search(len(r.Tasks), func(i int) bool { return r.Tasks[i].Start >= lo })
	n := 0
	for i := i0; i < len(r.Tasks) && r.Tasks[i].Start < hi; i++ {
		if r.Stream(&r.Tasks[i]) == b.stream {
			n++
		}
	}
	st.Items = resize(st.Items, n)[:0]
	for i := i0; i < len(r.Tasks) && r.Tasks[i].Start < hi; i++ {
		t := &r.Tasks[i]
		if r.Stream(t) != b.stream {
			continue
		}
		it := Item{Dur: r.Dur(t), Gap: max(t.Start-prev, 0), Coll: -1, Kind: kindOf(r.Class(t))}
		name := r.Str(r.Name(t))
		if it.Kind == Kernel {
			ext := r.Extra(t)
			if op := r.Str(ext.OpType); op != "" {
				name = op
			}
			shapes := r.Str(ext.InputShapes)
			n, _ := model.FirstDim(shapes)
			it.Tokens = int32(n)
			it.Shape = b.intern(shapeClass(shapes))
			it.Graph = ext.ModelID != singleOp
		}
		it.Op = b.intern(name)
		st.Items = append(st.Items, it)
		prev = max(prev, r.End(t))
		ends = append(ends, prev)
	}
	b.ends = ends
	collEnds := addColls(r, l, st, ends, lo, hi)
	pairWaits(st, ends, collEnds)
	addSyncKernels(l, st, ends)
	out := Step{Anchor: lo, Tail: hi - prev}
	l.store(&out, st)
	return out
}

// syncGroup is the group of the MC2 exchanges: the ep group's members.
const syncGroup = "mc2"

// isSyncOp reports whether a kernel's op is an MC2 exchange: a kernel
// that sends and receives tokens across the EP group, so it ends on every
// member when the last one has arrived (the early ones wait inside it).
func isSyncOp(op string) bool {
	return strings.HasPrefix(op, "MoeDistributeDispatch") || strings.HasPrefix(op, "MoeDistributeCombine") ||
		strings.HasPrefix(op, "DispatchFFNCombine") || strings.HasPrefix(op, "DispatchGmmCombine")
}

// addSyncKernels makes each MC2 exchange kernel of the step a collective
// of the ep group's members, issued at the kernel itself: the rank
// arrives when its stream launches the kernel (after the kernel's gap),
// and the kernel ends its transfer time after the last member arrived.
// The kernel stays a Kernel item whose Coll names it; ends[i] is the
// stream time after item i. Nothing changes on a rank whose ep group lists
// no members (its peers are unknown).
func addSyncKernels(l *RankLine, st *open, ends []int64) {
	g := l.group(syncGroup)
	n := 0
	for i := range st.Items {
		if it := &st.Items[i]; it.Kind == Kernel && isSyncOp(l.Ops[it.Op]) {
			n++
		}
	}
	if n == 0 {
		return
	}
	if g < 0 {
		ep := l.group("ep")
		if ep < 0 || len(l.Groups[ep].Members) < 2 {
			return
		}
		l.Groups = append(l.Groups, Group{Name: syncGroup, Members: l.Groups[ep].Members})
		g = len(l.Groups) - 1
	}
	merged := make([]Coll, 0, len(st.Colls)+n)
	newIdx := make([]int16, len(st.Colls))
	ci := 0
	for i := range st.Items {
		for ci < len(st.Colls) && int(st.Colls[ci].Pos) <= i {
			newIdx[ci] = int16(len(merged))
			merged = append(merged, st.Colls[ci])
			ci++
		}
		it := &st.Items[i]
		if it.Kind != Kernel || !isSyncOp(l.Ops[it.Op]) {
			continue
		}
		it.Coll = int16(len(merged))
		merged = append(merged, Coll{Pos: int32(i), Group: uint16(g), Type: it.Op, Arrive: it.Gap, Dur: it.Dur, Transfer: it.Dur, Ready: -1, End: ends[i]})
	}
	for ; ci < len(st.Colls); ci++ {
		newIdx[ci] = int16(len(merged))
		merged = append(merged, st.Colls[ci])
	}
	for i := range st.Items {
		if it := &st.Items[i]; it.Kind == Wait && it.Coll >= 0 {
			it.Coll = newIdx[it.Coll]
		}
	}
	st.Colls = merged
	renumber(st.Colls)
}

func kindOf(c model.TaskClass) ItemKind {
	switch c {
	case model.ClassCompute:
		return Kernel
	case model.ClassEventWait:
		return Wait
	case model.ClassEventRecord:
		return Record
	}
	return Other
}

// addColls adds the HCCL ops starting in [lo, hi) (r.HCCL is in start
// order) and returns their ends; ends[i] is the stream time after item i.
func addColls(r *model.Rank, l *RankLine, st *open, ends []int64, lo, hi int64) []int64 {
	var out []int64
	seq := map[uint16]int32{}
	last := map[uint16]int64{}
	floor := int32(0) // the previous collective's Pos: its record is its own
	i0 := sort.Search(len(r.HCCL), func(i int) bool { return r.HCCL[i].Start >= lo })
	for i := i0; i < len(r.HCCL) && r.HCCL[i].Start < hi; i++ {
		h := &r.HCCL[i]
		g := l.group(r.Str(h.Group))
		if g < 0 {
			l.Groups = append(l.Groups, Group{Name: strings.Clone(r.Str(h.Group))})
			g = len(l.Groups) - 1
		}
		c := Coll{Group: uint16(g), Type: l.intern(r.Str(h.Type)), Dur: h.Dur, Transfer: h.Dur}
		c.Pos = int32(sort.Search(len(ends), func(k int) bool { return ends[k] > h.Start }))
		// the rank arrived when its compute stream recorded the event the
		// comm stream waits on: the EVENT_RECORD before the kernels that
		// ran while the op waited (an op that starts only when its peers
		// have arrived starts after them)
		for j := int(c.Pos) - 1; j >= int(floor); j-- {
			if k := st.Items[j].Kind; k == Record {
				c.Pos = int32(j + 1)
				break
			} else if k != Kernel {
				break
			}
		}
		floor = c.Pos
		at := lo
		if c.Pos > 0 {
			at = ends[c.Pos-1]
		}
		if e, ok := last[c.Group]; ok {
			at = max(at, e)
		}
		c.Arrive, c.Ready = h.Start-at, at
		c.Seq = seq[c.Group]
		seq[c.Group]++
		last[c.Group] = h.End()
		st.Colls = append(st.Colls, c)
		out = append(out, h.End())
	}
	return out
}

// pairWaits ties each wait to the collective it waited on: the one issued
// before it that ended last, at most pairSlack before the wait ended (the
// first such collective when several ended together).
func pairWaits(st *open, ends, collEnds []int64) {
	for ci := 1; ci < len(st.Colls); ci++ {
		if st.Colls[ci].Pos < st.Colls[ci-1].Pos {
			pairWaitsAny(st, ends, collEnds)
			return
		}
	}
	// The collectives are in issue order and the waits' ends ascend: a
	// collective that ended more than pairSlack before a wait's end is
	// no later wait's either, so the candidates are the collectives issued
	// so far, not paired, that ended within pairSlack of the wait or after.
	var buf [64]int32
	open := buf[:0]
	next := 0
	for j := range st.Items {
		it := &st.Items[j]
		if it.Kind != Wait {
			continue
		}
		for next < len(st.Colls) && int(st.Colls[next].Pos) <= j {
			open = append(open, int32(next))
			next++
		}
		end := ends[j]
		best, bestEnd := -1, int64(0)
		w := 0
		for _, ci := range open {
			ce := collEnds[ci]
			if end-ce > pairSlack {
				continue // too early for this wait and every later one
			}
			open[w] = ci
			w++
			if ce > end {
				continue
			}
			if best < 0 || ce > bestEnd {
				best, bestEnd = int(ci), ce
			}
		}
		open = open[:w]
		if best >= 0 {
			for k, ci := range open {
				if int(ci) == best {
					open = append(open[:k], open[k+1:]...)
					break
				}
			}
			it.Coll = int16(best)
			st.Colls[best].Tail = end - bestEnd
		}
	}
}

// pairWaitsAny is pairWaits for collectives not in issue order.
func pairWaitsAny(st *open, ends, collEnds []int64) {
	paired := make([]bool, len(st.Colls))
	for j := range st.Items {
		it := &st.Items[j]
		if it.Kind != Wait {
			continue
		}
		end := ends[j]
		best, bestEnd := -1, int64(0)
		for ci := range st.Colls {
			ce := collEnds[ci]
			if paired[ci] || int(st.Colls[ci].Pos) > j || ce > end || end-ce > pairSlack {
				continue
			}
			if best < 0 || ce > bestEnd {
				best, bestEnd = ci, ce
			}
		}
		if best >= 0 {
			paired[best] = true
			it.Coll = int16(best)
			st.Colls[best].Tail = end - bestEnd
		}
	}
}

// shapeClass is a shapes cell without its leading dimension
// ("25,4096;1280,4096" -> ",4096;1280,4096").
func shapeClass(shapes string) string {
	s := strings.Trim(shapes, `" `)
	if i := strings.IndexAny(s, ";,"); i >= 0 {
		return s[i:]
	}
	return ""
}
