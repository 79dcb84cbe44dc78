// Package replay keeps a compact timeline of a capture's decode steps and
// replays it under fixes to predict the step time they would give.
//
// A rank's timeline is, per decode step, its compute stream as a list of
// items in order (kernels, waits, other tasks), each with the idle gap
// before it, and the collectives the rank joined, each with where the
// compute stream issued it, how long after that the rank arrived, and the
// wait that waited on it. The replay runs every rank's stream in order
// with its gaps; a wait ends when what it waits on ends; a collective
// starts when the last rank of its group arrives and lasts its transfer
// time (the duration the last arriver measured). A fix is a list of
// typed transforms of the timeline (remove kernels, replace collectives,
// rebatch, eager to graph, rebalance experts); its prediction is the
// replayed step time after the transforms against the replay before.
//
// The package reads only the model (internal/parser/model).
package replay

import "slices"

// ItemKind is the kind of one compute-stream item.
type ItemKind uint8

// Item kinds.
const (
	// Kernel is a compute kernel.
	Kernel ItemKind = iota
	// Wait is an EVENT_WAIT: the stream sat blocked.
	Wait
	// Record is an EVENT_RECORD (a collective is issued after it).
	Record
	// Other is any other task of the stream (memcpy, placeholder).
	Other
)

// Item is one task of a rank's compute stream, decoded (a Step holds its
// items encoded: Step.ItemBytes).
type Item struct {
	// Dur is the item's duration (ns).
	Dur int64
	// Gap is the idle time on the stream before the item (ns).
	Gap int64
	// Tokens is the leading dimension of the kernel's first input (the
	// tokens, or token-expert pairs, it processed), 0 when unknown.
	Tokens int32
	// Coll indexes the step's Colls for a Wait that waited on a
	// collective, -1 otherwise.
	Coll int16
	// Op indexes RankLine.Ops (the kernel's op type, or the task name).
	Op uint16
	// Shape indexes RankLine.Ops: the kernel's input shapes without the
	// leading dimension (kernels of one op with other weights differ).
	Shape uint16
	Kind  ItemKind
	// Graph: the kernel was replayed from a captured graph.
	Graph bool
	// ent is 1 + the index of the RankLine.Dict entry the item was
	// decoded from, 0 when none: an unedited item is encoded again
	// without looking its entry up.
	ent int32
}

// Coll is one collective a rank joined in a step, decoded (a Step holds
// its collectives encoded: Step.CollBytes).
type Coll struct {
	// Pos is where the compute stream issued it: after Items[Pos-1].
	Pos int32
	// Seq is its index among the step's collectives of its group (not
	// encoded: the decoder numbers them).
	Seq int32
	// Group indexes RankLine.Groups; Type RankLine.Ops.
	Group, Type uint16
	// Arrive is the rank's arrival delay: the op's start minus the later
	// of the stream time at Pos and the end of the group's previous
	// collective on this rank (the comm stream runs in order).
	Arrive int64
	// Ready is when the rank was ready (ns since the epoch): Arrive
	// counts from it; -1 for an MC2 exchange (it arrives at its kernel).
	Ready int64
	// End is an MC2 exchange's measured end (ns since the epoch; 0 for an
	// HCCL op): the members of one exchange end together.
	End int64
	// Dur is the duration this rank measured (its wait for the last
	// arriver included).
	Dur int64
	// Tail is, for the Wait on this collective, the wait's end minus the
	// collective's end (the stream resumes that long after the op ends).
	Tail int64
	// Transfer is the op's own time once every member arrived: the
	// shortest duration any member measured (set by NewTimeline; Dur when
	// the rank's peers are not in the timeline).
	Transfer int64
}

// Step is one decode step of one rank, its items and collectives encoded
// (encode.go): an edit writes new bytes and never changes the ones it
// read, so a cloned timeline shares every step its transforms leave
// unedited.
type Step struct {
	// Anchor is the step's start (ns since the epoch): ProfilerStep#N's
	// start, or npuprof's decode-step start.
	Anchor int64
	// Tail is the time from the end of the step's last stream item to the
	// next step's start.
	Tail int64
	// N is the number of items, NColls of collectives.
	N, NColls int32
	// ItemBytes are the items, CollBytes the collectives, encoded.
	ItemBytes, CollBytes []byte
	// itemsAt and collsAt hold ItemBytes and CollBytes when they were
	// moved to a spill file (RankLine.Spill; nil then).
	itemsAt, collsAt Ref
	// dec, when set, holds the step decoded instead (a small timeline,
	// NewTimeline): it is replaced, never edited in place, so a clone
	// shares it as it shares the bytes.
	dec *decoded
}

// decoded is a step's items and collectives kept decoded.
type decoded struct {
	items []Item
	colls []Coll
}

// Group is a communicator a rank belongs to.
type Group struct {
	Name    string // tp, ep, dp, ...
	Members []int  // global ranks, ascending
}

// RankLine is the compact timeline of one rank.
type RankLine struct {
	Rank   int
	Ops    []string
	Groups []Group
	// Steps are the kept decode steps (at most MaxSteps, consecutive),
	// each with a following step start.
	Steps []Step
	// StepSource says where step starts came from.
	StepSource string
	// StepNs is the measured mean time from one step's start to the next
	// over the whole capture, Intervals the number of such intervals.
	StepNs    float64
	Intervals int
	// Dict is what the items share (op, shapes, kind, graph, tokens):
	// an encoded item names its entry.
	Dict []Entry
	// classes are the Ops' classes (opExpert, ...), once per op.
	classes []uint8
	// dictIx finds an entry of Dict by its op (built when an item is
	// encoded).
	dictIx [][]uint32
	// spill is where its steps' edited bytes are written (nil: the heap).
	spill *Spill
	// scratch, when set, is where an edit of a decoded step writes its
	// items and collectives instead of new slices: PredictStep's copy,
	// which holds one edited step of the line at a time (nil: new ones).
	scratch *decodedScratch
}

// MaxSteps bounds the decode steps a rank's timeline keeps: the replay's
// memory does not grow with the capture's length.
const MaxSteps = 6

// op returns the name of an op index.
func (l *RankLine) op(i uint16) string { return l.Ops[i] }

// intern returns the index of name in l.Ops, adding it when missing.
func (l *RankLine) intern(name string) uint16 {
	for i, s := range l.Ops {
		if s == name {
			return uint16(i)
		}
	}
	l.Ops = append(l.Ops, name)
	if len(l.classes) == len(l.Ops)-1 {
		l.classes = append(l.classes, classOf(name))
	}
	return uint16(len(l.Ops) - 1)
}

// opIndex returns the index of name in l.Ops, -1 when missing.
func (l *RankLine) opIndex(name string) int {
	for i, s := range l.Ops {
		if s == name {
			return i
		}
	}
	return -1
}

// group returns the index of the named group, -1 when the rank has none.
func (l *RankLine) group(name string) int {
	for i, g := range l.Groups {
		if g.Name == name {
			return i
		}
	}
	return -1
}

// clone returns a copy whose steps share their encoded items and
// collectives with l's (an edit writes new ones): l must not be edited
// while the copy is in use.
func (l *RankLine) clone() *RankLine {
	c := *l
	c.Ops = l.Ops[:len(l.Ops):len(l.Ops)]
	c.classes = l.classes[:len(l.classes):len(l.classes)]
	c.Dict, c.dictIx = l.Dict[:len(l.Dict):len(l.Dict)], nil
	c.Steps = slices.Clone(l.Steps)
	c.scratch = nil
	return &c
}

// Timeline is every rank's compact timeline of one capture.
type Timeline struct {
	Ranks []*RankLine
	// Steps is the number of steps every rank kept (the replay runs the
	// first Steps steps of each).
	Steps int
	// replayed is the replay of a timeline Predict made (it is not
	// edited after).
	replayed *Result
	// copied: Predict made it (its ranks' lines are its own; PredictOn
	// may edit it)
	copied bool
	// memo is what the transforms read of the timeline NewTimeline made,
	// shared by its copies until a transform edits them (nil after).
	memo *memo
	// spill is the spill file its ranks' steps were moved to (nil: none),
	// which Spill moves a copy's edited steps to.
	spill *Spill
	// decoded: every step is kept decoded (keepDecoded).
	decoded bool
}

// Spill moves the encoded bytes of tl's steps that are on the heap (a
// transformed copy's edited steps) to the spill file its ranks' steps
// were read from (none: they stay): a plan holds its current step's
// copy while it predicts the next one's candidates.
func (tl *Timeline) Spill() {
	if tl.spill == nil {
		return
	}
	for _, l := range tl.Ranks {
		l.Spill(tl.spill)
	}
}

// memo holds what the transforms' begin read of an unedited timeline.
type memo struct {
	batch         int32
	haveBatch     bool
	model, within *tokenModel // their used maps are not read
	gap           int64
	gapMeasured   bool
	haveGap       bool
	cost          map[string]allReduce
}

// allReduce is allReduceCost's result for a group.
type allReduce struct {
	cost int64
	src  string
	err  error
}

// batch is decodeBatch, from tl's memo when it has one.
func (tl *Timeline) batch() int32 {
	m := tl.memo
	if m == nil {
		return tl.decodeBatch()
	}
	if !m.haveBatch {
		m.batch, m.haveBatch = tl.decodeBatch(), true
	}
	return m.batch
}

// tokenModel is newTokenModel (within: newTokenModelWithin), from tl's
// memo when it has one.
func (tl *Timeline) tokenModel(within bool) *tokenModel {
	build := newTokenModel
	if within {
		build = newTokenModelWithin
	}
	if tl.memo == nil {
		return build(tl)
	}
	p := &tl.memo.model
	if within {
		p = &tl.memo.within
	}
	if *p == nil {
		*p = build(tl)
	}
	m := **p
	m.used = map[fitID]string{}
	return &m
}

// graphGapMemo is graphGap, from tl's memo when it has one.
func (tl *Timeline) graphGapMemo() (int64, bool) {
	m := tl.memo
	if m == nil {
		return tl.graphGap()
	}
	if !m.haveGap {
		m.gap, m.gapMeasured = tl.graphGap()
		m.haveGap = true
	}
	return m.gap, m.gapMeasured
}

// allReduceCostMemo is allReduceCost, from tl's memo when it has one.
func (tl *Timeline) allReduceCostMemo(g string) (int64, string, error) {
	m := tl.memo
	if m == nil {
		return tl.allReduceCost(g)
	}
	a, ok := m.cost[g]
	if !ok {
		a.cost, a.src, a.err = tl.allReduceCost(g)
		if m.cost == nil {
			m.cost = map[string]allReduce{}
		}
		m.cost[g] = a
	}
	return a.cost, a.src, a.err
}
