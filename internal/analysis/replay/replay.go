package replay

import (
	"fmt"
	"sort"
)

// NewTimeline joins the ranks' timelines (nil ones are skipped) and sets
// each collective's transfer time: the shortest duration any member of its
// group instance measured, i.e. the last arriver's, whose op did not wait.
func NewTimeline(lines []*RankLine) *Timeline {
	tl := &Timeline{}
	for _, l := range lines {
		if l != nil && len(l.Steps) > 0 {
			tl.Ranks = append(tl.Ranks, l)
		}
	}
	sort.Slice(tl.Ranks, func(a, b int) bool { return tl.Ranks[a].Rank < tl.Ranks[b].Rank })
	if len(tl.Ranks) == 0 {
		return tl
	}
	alignSteps(tl)
	tl.Steps = len(tl.Ranks[0].Steps)
	for _, l := range tl.Ranks {
		tl.Steps = min(tl.Steps, len(l.Steps))
		l.classify()
	}
	ix := newInstances(tl)
	if !syncAligned(tl, ix) {
		for _, l := range tl.Ranks {
			if g := l.group(syncGroup); g >= 0 {
				l.Groups[g].Members = nil
			}
		}
		ix = newInstances(tl)
	}
	var m, ready, arrive []int64
	var seen []bool
	var cs []Coll
	for k := 0; k < tl.Steps; k++ {
		ix.index(tl, k)
		m, seen = resize(m, ix.n), resize(seen, ix.n)
		ready, arrive = resize(ready, ix.n), resize(arrive, ix.n)
		clear(seen)
		for in := range ready {
			ready[in] = -1
		}
		for i, l := range tl.Ranks {
			cs = colls(&l.Steps[k], cs)
			for ci, c := range cs {
				in := ix.of[i][ci]
				if !seen[in] || c.Dur < m[in] {
					m[in], seen[in] = c.Dur, true
				}
				if c.Ready > ready[in] {
					ready[in], arrive[in] = c.Ready, c.Arrive
				}
			}
		}
		for i, l := range tl.Ranks {
			st := &l.Steps[k]
			sp := st.collsAt.s
			cs = colls(st, cs)
			for ci := range cs {
				c := &cs[ci]
				in := ix.of[i][ci]
				c.Transfer = m[in]
				// a member that started the op no later than the member
				// ready last (give or take the ranks' clock offsets)
				// waited for its peers before the op (the comm stream's
				// EVENT_WAIT): it arrived when it was ready, as late
				// after that as the last one did
				if c.Ready >= 0 && ready[in] >= 0 && c.Arrive > arrive[in] && c.Ready+c.Arrive <= ready[in]+arrive[in]+pairSlack {
					c.Arrive = arrive[in]
				}
			}
			l.setColls(st, cs)
			if sp != nil {
				// back to the spill file it was read from
				st.spill(sp)
			}
		}
	}
	keepDecoded(tl)
	tl.memo = &memo{}
	tl.spill = tl.spillFile()
	return tl
}

// alignSteps makes the ranks' kept steps the same steps where every rank
// joined MC2 exchanges: a rank whose first kept step ended its first
// exchange before the rank that starts latest began its first kept step
// drops its leading steps until they meet (the busy engine's steps come
// from ProfilerStep#N from the capture's first step, the idle engines'
// from the layer period, whose first step starts at the first boundary).
// The members of one exchange end together, so the first exchange's end
// names the step. Ranks without MC2 exchanges keep their steps.
func alignSteps(tl *Timeline) {
	var cs []Coll
	first := func(st *Step) int64 {
		cs = colls(st, cs)
		for _, c := range cs {
			if c.End != 0 {
				return c.End
			}
		}
		return 0
	}
	var latest int64
	for _, l := range tl.Ranks {
		e := first(&l.Steps[0])
		if e == 0 {
			return
		}
		latest = max(latest, e)
	}
	for _, l := range tl.Ranks {
		skip := 0
		for skip < len(l.Steps)-1 && first(&l.Steps[skip]) < latest-pairSlack && first(&l.Steps[skip]) != 0 {
			skip++
		}
		l.Steps = l.Steps[skip:]
	}
}

// syncAligned reports whether the ranks' kept steps pair their MC2
// exchanges: the members of every exchange instance ended within
// pairSlack of each other. When they do not (the ranks' steps start at
// different layers, as where some ranks' steps come from ProfilerStep#N
// and others' from the layer period), every rank's exchanges are its own:
// each runs as measured, waits included.
func syncAligned(tl *Timeline, ix *instances) bool {
	var lo, hi []int64
	var cs []Coll
	for k := 0; k < tl.Steps; k++ {
		ix.index(tl, k)
		lo, hi = resize(lo, ix.n), resize(hi, ix.n)
		clear(lo)
		clear(hi)
		for i, l := range tl.Ranks {
			cs = colls(&l.Steps[k], cs)
			for ci, c := range cs {
				if c.End == 0 {
					continue
				}
				in := ix.of[i][ci]
				if lo[in] == 0 || c.End < lo[in] {
					lo[in] = c.End
				}
				hi[in] = max(hi[in], c.End)
			}
		}
		for in := range lo {
			if hi[in]-lo[in] > pairSlack {
				return false
			}
		}
	}
	return true
}

// instKey names one group instance: the group's name and its lowest
// global rank (the rank itself when the group lists no members).
type instKey struct {
	group string
	first int
}

// instances numbers the group instances of one step: the collectives of
// one group instance with the same Seq are one instance, whichever ranks
// joined it.
type instances struct {
	gid   [][]int32 // per rank, per group index: the instance group's id
	slots [][]int32 // per instance group, per Seq: the instance, -1 none
	of    [][]int32 // per rank, per collective of the step: its instance
	n     int       // instances in the step
	cs    []Coll    // a rank's collectives of the step, decoded
}

// newInstances gives each rank's groups their instance group's id.
func newInstances(tl *Timeline) *instances {
	ix := &instances{gid: make([][]int32, len(tl.Ranks)), of: make([][]int32, len(tl.Ranks))}
	ids := map[instKey]int32{}
	for i, l := range tl.Ranks {
		ix.gid[i] = make([]int32, len(l.Groups))
		for g := range l.Groups {
			key := instKey{l.Groups[g].Name, l.Rank}
			if m := l.Groups[g].Members; len(m) > 0 {
				key.first = m[0]
			}
			id, ok := ids[key]
			if !ok {
				id = int32(len(ids))
				ids[key] = id
			}
			ix.gid[i][g] = id
		}
	}
	ix.slots = make([][]int32, len(ids))
	return ix
}

// index numbers the instances of step k (in the order of their first
// member: rank, then collective) and sets ix.of.
func (ix *instances) index(tl *Timeline, k int) {
	ix.indexWith(tl, func(i int) []Coll {
		ix.cs = colls(&tl.Ranks[i].Steps[k], ix.cs)
		return ix.cs
	})
}

// indexWith is index with rank i's collectives of the step given by
// colls.
func (ix *instances) indexWith(tl *Timeline, colls func(i int) []Coll) {
	for g := range ix.slots {
		ix.slots[g] = ix.slots[g][:0]
	}
	ix.n = 0
	for i := range tl.Ranks {
		cs := colls(i)
		of := ix.of[i][:0]
		for ci := range cs {
			g, seq := ix.gid[i][cs[ci].Group], int(cs[ci].Seq)
			sl := ix.slots[g]
			for len(sl) <= seq {
				sl = append(sl, -1)
			}
			if sl[seq] < 0 {
				sl[seq] = int32(ix.n)
				ix.n++
			}
			ix.slots[g] = sl
			of = append(of, sl[seq])
		}
		ix.of[i] = of
	}
}

// Result is a replay's step time.
type Result struct {
	// StepNs is the mean replayed time from one step's start to the next,
	// over every kept step of every rank.
	StepNs float64
	// RankStepNs is each rank's mean, in Timeline.Ranks order.
	RankStepNs []float64
}

// rankRun is one rank's progress through a step.
type rankRun struct {
	st       *Step
	colls    []runColl  // what is read of st's collectives out of order
	cur      cursor     // reads st's items
	cc       collCursor // reads st's collectives in order
	ibuf     []byte     // st's items read from a spill file, a window
	cbuf     []byte     // st's collectives read from a spill file, a window
	it       Item       // item number item, when read
	read     bool       // it is read
	item     int        // next item
	next     Coll       // collective number coll, when read
	nextRead bool       // next is read
	coll     int        // next collective to arrive at
	t        int64      // stream time
	inst     []int32    // each collective's instance
	last     []int32    // per group: the last collective arrived at, -1 none
	blocked  int32      // the collective whose end the run waits for, -1 none
	waiter   int32      // the next run blocked on the same instance, -1 none
	queued   bool
}

// runColl is what the replay reads of a collective out of order: a
// collective's end is its instance's start (the last arrival) plus its
// transfer, known once every member arrived.
type runColl struct {
	tail, transfer int64
}

// Replay runs the timeline's kept steps and returns their mean step time.
func (tl *Timeline) Replay() (Result, error) {
	res := Result{RankStepNs: make([]float64, len(tl.Ranks))}
	if tl.Steps == 0 {
		return res, fmt.Errorf("replay: no decode step to replay")
	}
	s := newStepper(tl)
	var sum float64
	for k := 0; k < tl.Steps; k++ {
		d, err := s.step(k)
		if err != nil {
			return res, err
		}
		for r, v := range d {
			res.RankStepNs[r] += float64(v) / float64(tl.Steps)
			sum += float64(v)
		}
	}
	res.StepNs = sum / float64(tl.Steps*len(tl.Ranks))
	return res, nil
}

// stepper replays the steps of a timeline one after the other, reusing
// its buffers.
type stepper struct {
	tl    *Timeline
	ix    *instances
	runs  []rankRun
	left  []int32 // per instance: members not yet arrived
	start []int64 // per instance: the latest arrival so far
	head  []int32 // per instance: the first run blocked on it, -1 none
	queue []int32 // runs to advance
	out   []int64
	cs    []Coll // a rank's collectives of the step, decoded
}

func newStepper(tl *Timeline) *stepper {
	return &stepper{tl: tl, ix: newInstances(tl), runs: make([]rankRun, len(tl.Ranks)), out: make([]int64, len(tl.Ranks))}
}

// step replays step k on every rank at once and returns each rank's step
// time (start to the next step's start). Each rank's stream runs until it
// needs the end of a collective not yet started; a collective starts when
// its last member arrives, which wakes the members that waited for it:
// every item and collective is visited once. What a run reads in order
// (its items, its collectives' positions and arrivals) is read as it
// goes, through a window when it is in a spill file.
func (s *stepper) step(k int) ([]int64, error) {
	tl, ix := s.tl, s.ix
	ix.indexWith(tl, func(i int) []Coll {
		// each rank's collectives decoded in turn into one buffer
		s.cs = colls(&tl.Ranks[i].Steps[k], s.cs)
		rr := &s.runs[i]
		rr.colls = resize(rr.colls, len(s.cs))
		for ci := range s.cs {
			rr.colls[ci] = runColl{tail: s.cs[ci].Tail, transfer: s.cs[ci].Transfer}
		}
		return s.cs
	})
	s.left, s.start, s.head = resize(s.left, ix.n), resize(s.start, ix.n), resize(s.head, ix.n)
	clear(s.left)
	for in := range s.start {
		s.start[in], s.head[in] = -1, -1
	}
	s.queue = s.queue[:0]
	for i, l := range tl.Ranks {
		st := &l.Steps[k]
		rr := &s.runs[i]
		ib, cb := rr.ibuf, rr.cbuf
		cur, cc := l.cursorIn(st, &ib), collCursorIn(st, &cb)
		*rr = rankRun{st: st, colls: rr.colls, cur: cur, cc: cc, ibuf: ib, cbuf: cb, t: st.Anchor, inst: ix.of[i],
			last: resize(rr.last, len(l.Groups)), blocked: -1, waiter: -1, queued: true}
		for g := range rr.last {
			rr.last[g] = -1
		}
		for _, in := range rr.inst {
			s.left[in]++
		}
		s.queue = append(s.queue, int32(i))
	}
	for len(s.queue) > 0 {
		i := s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		rr := &s.runs[i]
		rr.queued = false
		s.advance(i, rr)
	}
	for i := range s.runs {
		rr := &s.runs[i]
		if rr.item < int(rr.st.N) || rr.coll < len(rr.colls) {
			return nil, fmt.Errorf("replay: step %d cannot finish: a wait or collective never completes", k)
		}
		s.out[i] = rr.t + rr.st.Tail - rr.st.Anchor
	}
	return s.out, nil
}

// end returns the end of the run's collective c, -1 when not known yet.
func (s *stepper) end(rr *rankRun, c int32) int64 {
	in := rr.inst[c]
	if s.left[in] > 0 {
		return -1
	}
	return s.start[in] + rr.colls[c].transfer
}

// block makes run i wait for the end of its collective c.
func (s *stepper) block(i int32, rr *rankRun, c int32) {
	in := rr.inst[c]
	rr.blocked, rr.waiter = c, s.head[in]
	s.head[in] = i
}

// advance runs the rank's stream (run i) as far as it can.
func (s *stepper) advance(i int32, rr *rankRun) {
	rr.blocked = -1
	for {
		for rr.coll < len(rr.colls) {
			c := &rr.next
			if !rr.nextRead {
				rr.cc.next(c)
				rr.nextRead = true
			}
			if int(c.Pos) > rr.item {
				break
			}
			at := rr.t
			if p := rr.last[c.Group]; p >= 0 {
				e := s.end(rr, p)
				if e < 0 {
					s.block(i, rr, p)
					return
				}
				at = max(at, e)
			}
			rr.last[c.Group] = int32(rr.coll)
			s.arrive(rr.inst[rr.coll], at+c.Arrive)
			rr.coll++
			rr.nextRead = false
		}
		if rr.item == int(rr.st.N) {
			return
		}
		it := &rr.it
		if !rr.read {
			rr.cur.next(it)
			rr.read = true
		}
		if it.Coll >= 0 { // a wait on a collective, or an MC2 exchange kernel
			e := s.end(rr, int32(it.Coll))
			if e < 0 {
				s.block(i, rr, int32(it.Coll))
				return
			}
			rr.t = max(rr.t+it.Gap, e+rr.colls[it.Coll].tail)
		} else {
			rr.t += it.Gap + it.Dur
		}
		rr.item++
		rr.read = false
	}
}

// arrive records a member's arrival at instance in; the last arrival
// starts the collective (its members' ends are known from then) and queues
// the runs that waited for it.
func (s *stepper) arrive(in int32, at int64) {
	s.start[in] = max(s.start[in], at)
	if s.left[in]--; s.left[in] > 0 {
		return
	}
	for w := s.head[in]; w >= 0; {
		rr := &s.runs[w]
		next := rr.waiter
		rr.waiter = -1
		if !rr.queued {
			rr.queued = true
			s.queue = append(s.queue, w)
		}
		w = next
	}
	s.head[in] = -1
}

// resize returns b with length n, reallocated when too small.
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}
