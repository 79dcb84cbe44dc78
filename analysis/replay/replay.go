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
	tl.Steps = len(tl.Ranks[0].Steps)
	for _, l := range tl.Ranks {
		tl.Steps = min(tl.Steps, len(l.Steps))
	}
	for k := 0; k < tl.Steps; k++ {
		tl.eachInstance(k, func(members []*Coll) {
			m := members[0].Dur
			for _, c := range members {
				m = min(m, c.Dur)
			}
			for _, c := range members {
				c.Transfer = m
			}
		})
	}
	return tl
}

// instKey names one group instance's collective in a step.
type instKey struct {
	group string
	first int // the instance's lowest global rank
	seq   int32
}

// key returns the instance key of collective c of rank line l.
func (l *RankLine) key(c *Coll) instKey {
	g := l.Groups[c.Group]
	first := l.Rank
	if len(g.Members) > 0 {
		first = g.Members[0]
	}
	return instKey{g.Name, first, c.Seq}
}

// eachInstance calls f with the collectives of every group instance of
// step k, one per member rank present in the timeline.
func (tl *Timeline) eachInstance(k int, f func([]*Coll)) {
	inst := map[instKey][]*Coll{}
	var order []instKey
	for _, l := range tl.Ranks {
		st := &l.Steps[k]
		for ci := range st.Colls {
			key := l.key(&st.Colls[ci])
			if _, ok := inst[key]; !ok {
				order = append(order, key)
			}
			inst[key] = append(inst[key], &st.Colls[ci])
		}
	}
	for _, key := range order {
		f(inst[key])
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
	l      *RankLine
	st     *Step
	item   int     // next item
	coll   int     // next collective to arrive at
	t      int64   // stream time
	end    []int64 // collective ends, -1 unknown
	arrive []int64 // arrival times, -1 not arrived
	prev   []int   // previous collective of the same group, -1 none
}

// Replay runs the timeline's kept steps and returns their mean step time.
func (tl *Timeline) Replay() (Result, error) {
	res := Result{RankStepNs: make([]float64, len(tl.Ranks))}
	if tl.Steps == 0 {
		return res, fmt.Errorf("replay: no decode step to replay")
	}
	var sum float64
	for k := 0; k < tl.Steps; k++ {
		d, err := tl.replayStep(k)
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

// replayStep replays step k on every rank at once and returns each rank's
// step time (start to the next step's start).
func (tl *Timeline) replayStep(k int) ([]int64, error) {
	runs := make([]*rankRun, len(tl.Ranks))
	byKey := map[instKey][]collRef{}
	for i, l := range tl.Ranks {
		st := &l.Steps[k]
		rr := &rankRun{l: l, st: st, t: st.Anchor, end: make([]int64, len(st.Colls)),
			arrive: make([]int64, len(st.Colls)), prev: make([]int, len(st.Colls))}
		last := map[uint16]int{}
		for ci := range st.Colls {
			rr.end[ci], rr.arrive[ci] = -1, -1
			p, ok := last[st.Colls[ci].Group]
			if !ok {
				p = -1
			}
			rr.prev[ci] = p
			last[st.Colls[ci].Group] = ci
			key := l.key(&st.Colls[ci])
			byKey[key] = append(byKey[key], collRef{i, ci})
		}
		runs[i] = rr
	}
	for {
		moved := false
		done := true
		for _, rr := range runs {
			moved = rr.advance() || moved
			done = done && rr.item == len(rr.st.Items) && rr.coll == len(rr.st.Colls)
		}
		if done {
			break
		}
		if !resolve(runs, byKey) && !moved {
			return nil, fmt.Errorf("replay: step %d cannot finish: a wait or collective never completes", k)
		}
	}
	out := make([]int64, len(runs))
	for i, rr := range runs {
		out[i] = rr.t + rr.st.Tail - rr.st.Anchor
	}
	return out, nil
}

// collRef is one member's collective: runs[run].st.Colls[coll].
type collRef struct{ run, coll int }

// advance runs the rank's stream as far as it can and reports whether it
// moved.
func (rr *rankRun) advance() bool {
	moved := false
	for {
		for rr.coll < len(rr.st.Colls) && int(rr.st.Colls[rr.coll].Pos) <= rr.item {
			c := &rr.st.Colls[rr.coll]
			at := rr.t
			if p := rr.prev[rr.coll]; p >= 0 {
				if rr.end[p] < 0 {
					return moved
				}
				at = max(at, rr.end[p])
			}
			rr.arrive[rr.coll] = at + c.Arrive
			rr.coll++
			moved = true
		}
		if rr.item == len(rr.st.Items) {
			return moved
		}
		it := &rr.st.Items[rr.item]
		if it.Kind == Wait && it.Coll >= 0 {
			e := rr.end[it.Coll]
			if e < 0 {
				return moved
			}
			rr.t = max(rr.t+it.Gap, e+rr.st.Colls[it.Coll].Tail)
		} else {
			rr.t += it.Gap + it.Dur
		}
		rr.item++
		moved = true
	}
}

// resolve starts every collective whose members have all arrived and
// reports whether any did.
func resolve(runs []*rankRun, byKey map[instKey][]collRef) bool {
	any := false
	for key, refs := range byKey {
		start := int64(-1)
		for _, ref := range refs {
			a := runs[ref.run].arrive[ref.coll]
			if a < 0 {
				start = -1
				break
			}
			start = max(start, a)
		}
		if start < 0 {
			continue
		}
		for _, ref := range refs {
			rr := runs[ref.run]
			rr.end[ref.coll] = start + rr.st.Colls[ref.coll].Transfer
		}
		delete(byKey, key)
		any = true
	}
	return any
}
