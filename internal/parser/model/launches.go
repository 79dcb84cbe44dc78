package model

import "slices"

// launches is what the analysis reads of a rank's framework ops and
// links, kept by ReduceFramework in place of them: 8 bytes a task link
// and a few bytes a distinct op name, where the ops (24 bytes each) and
// the links (12 bytes each, HCCL links among them) held 19 MB at 1 GB.
type launches struct {
	task []int32 // the launched task of each task link, in Links order
	// before is how long before its task's start the op of each link
	// ended; nil when one of them does not fit in an int32 (2.1 s), and
	// end holds the ends instead
	before []int32
	end    []int64
	// names counts the ops by name, ascending by symbol
	names []nameCount
	// pending is what DropDuplicates needs of a rank reduced while it
	// is read (ReduceFrameworkEarly); nil after it, or when reduced later
	pending *pending
}

// pending holds the framework ops' exact duplicates ReduceFrameworkEarly
// dropped, for DropDuplicates to count, and the launches it may drop.
type pending struct {
	ops   int   // duplicate ops dropped
	first int64 // the earliest start of them
	// same are the launches whose op launched another of the same start
	// (or the same task twice), by launch index: the only ones that
	// dropping duplicate tasks can make equal links, as DropDuplicates
	// drops them
	same []opLaunch
}

type opLaunch struct{ launch, op int32 }

type nameCount struct {
	name Sym
	n    int32
}

// ReduceFramework replaces the rank's framework ops and links by what
// the analysis passes read of them (TaskLaunches, CountOpNames): for a
// rank that is analyzed and not exported (the export writes them).
// FrameworkOps and Links are nil afterwards; Have.Framework stays.
func (r *Rank) ReduceFramework() {
	if r.launched != nil {
		return
	}
	l := &launches{}
	n := 0
	r.eachTaskLink(func(*int32, int32) { n++ })
	l.task, l.before = make([]int32, n), make([]int32, n)
	end := func(o int32) int64 {
		op := &r.FrameworkOps[o]
		return op.Start + op.Dur
	}
	if s := r.opSum; s != nil {
		end = func(o int32) int64 { return s.Ends[o] }
	}
	n = 0
	r.eachTaskLink(func(o *int32, task int32) {
		end := end(*o)
		d := r.Tasks[task].Start - end
		l.task[n], l.before[n] = task, int32(d)
		if d != int64(int32(d)) && l.end == nil {
			// too far apart: the ends themselves, from here on
			l.end = make([]int64, len(l.task))
			for j := range n {
				l.end[j] = r.Tasks[l.task[j]].Start - int64(l.before[j])
			}
		}
		if l.end != nil {
			l.end[n] = end
		}
		n++
	})
	if l.end != nil {
		l.before = nil
	}
	counts := make([]int32, r.Syms.Len())
	r.CountOpNames(counts)
	for s, c := range counts {
		if c > 0 {
			l.names = append(l.names, nameCount{Sym(s), c})
		}
	}
	r.FrameworkOps, r.Links, r.opTasks, r.opSum, r.launched = nil, nil, nil, nil, l
}

// eachTaskLink calls f with each task link's op, to remap in place, and
// task, in Links order (then SetTaskLinks' pairs).
func (r *Rank) eachTaskLink(f func(op *int32, task int32)) {
	for i := range r.Links {
		if k := &r.Links[i]; k.Task >= 0 {
			f(&k.Op, k.Task)
		}
	}
	for i := range r.opTasks {
		f(&r.opTasks[i].Op, r.opTasks[i].Task)
	}
}

// ReduceFrameworkEarly is ReduceFramework for a rank whose read goes on
// (SortTasks and DropDuplicates to come), so the ops and links are not
// held meanwhile: the ops' exact duplicates are dropped now and counted
// by DropDuplicates as before, which then drops the launches whose links
// it would have dropped. Links out of range are left for Validate to say
// (no reduction).
func (r *Rank) ReduceFrameworkEarly() {
	if r.launched != nil {
		return
	}
	if !r.linksInRange() {
		r.linksFromPairs()
		return
	}
	p := &pending{}
	nOps := 0
	if s := r.opSum; s != nil {
		// the reader dropped the duplicates and numbered the ops
		p.ops, p.first, nOps = s.Dups, s.FirstDup, len(s.Ends)
	} else {
		om := settle(r.FrameworkOps, r.opCmp())
		var opMap []int32
		r.FrameworkOps, opMap = r.dedupOps(func(o *FrameworkOp) {
			if p.ops == 0 || o.Start < p.first {
				p.first = o.Start
			}
			p.ops++
		})
		if om.moved() || opMap != nil {
			r.eachTaskLink(func(op *int32, _ int32) { *op = remap(opMap, om.of(*op)) })
		}
		nOps = len(r.FrameworkOps)
	}
	// an op of several task links, of which two may become one link
	many := make([]uint8, nOps)
	multi := false
	r.eachTaskLink(func(op *int32, _ int32) {
		if many[*op] < 2 {
			many[*op]++
			multi = multi || many[*op] == 2
		}
	})
	n := int32(0)
	if multi {
		r.eachTaskLink(func(op *int32, _ int32) {
			if many[*op] == 2 {
				p.same = append(p.same, opLaunch{n, *op})
			}
			n++
		})
	}
	r.ReduceFramework()
	p.same = r.launched.sameStart(p.same, r.Tasks)
	r.launched.pending = p
}

// sameStart keeps of c the launches whose op launched another task of
// the same start (DropDuplicates drops tasks only among those), in
// launch order.
func (l *launches) sameStart(c []opLaunch, tasks []DeviceTask) []opLaunch {
	start := func(x opLaunch) int64 { return tasks[l.task[x.launch]].Start }
	slices.SortFunc(c, func(a, b opLaunch) int {
		if a.op != b.op {
			return cmpInt(int64(a.op), int64(b.op))
		}
		return cmpInt(start(a), start(b))
	})
	kept := c[:0]
	for i := 0; i < len(c); {
		j := i + 1
		for j < len(c) && c[j].op == c[i].op && start(c[j]) == start(c[i]) {
			j++
		}
		if j-i > 1 {
			kept = append(kept, c[i:j]...)
		}
		i = j
	}
	if len(kept) == 0 {
		return nil
	}
	slices.SortFunc(kept, func(a, b opLaunch) int { return cmpInt(int64(a.launch), int64(b.launch)) })
	return slices.Clip(kept)
}

// dropLinked moves the launches to the kept copies of duplicate tasks
// (taskMap, dedupRuns) and drops, of the launches same, those of an op
// and task another launch before them has: DropDuplicates's links.
func (l *launches) dropLinked(taskMap []int32, same []opLaunch) {
	if taskMap == nil && len(same) == 0 {
		return
	}
	seen := make(map[[2]int32]bool, len(same)) // (task, op)
	k, c := 0, 0
	for i := range l.task {
		t := remap(taskMap, l.task[i])
		if c < len(same) && same[c].launch == int32(i) {
			key := [2]int32{t, same[c].op}
			c++
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		l.task[k] = t
		if l.before != nil {
			l.before[k] = l.before[i]
		} else {
			l.end[k] = l.end[i]
		}
		k++
	}
	l.task = l.task[:k]
	if l.before != nil {
		l.before = l.before[:k]
	} else {
		l.end = l.end[:k]
	}
}

// ofTasks returns the launches of the tasks at maps to a task (-1: none),
// with it: a device's of a rank that SplitDevices splits.
func (l *launches) ofTasks(at []int32) *launches {
	c := &launches{names: l.names}
	for i, t := range l.task {
		if at[t] < 0 {
			continue
		}
		c.task = append(c.task, at[t])
		if l.before != nil {
			c.before = append(c.before, l.before[i])
		} else {
			c.end = append(c.end, l.end[i])
		}
	}
	if l.before != nil && c.before == nil {
		c.before = []int32{}
	}
	return c
}

// Launches is a view of a rank's links with their launching ops' ends:
// link i launched task Task(i) (-1: an HCCL op), and its op ended at
// End(i), in Links order (after ReduceFramework, the task links alone).
type Launches struct {
	links  []Link
	ops    []FrameworkOp
	task   []int32
	end    []int64
	before []int32 // with tasks, in place of end (launches.before)
	tasks  []DeviceTask
}

// Len is the number of links in the view.
func (l *Launches) Len() int {
	if l.links != nil {
		return len(l.links)
	}
	return len(l.task)
}

// Task is the task link i launched, -1 when it launched an HCCL op.
func (l *Launches) Task(i int) int32 {
	if l.links != nil {
		return l.links[i].Task
	}
	return l.task[i]
}

// End is when the op of link i ended (its Start + Dur).
func (l *Launches) End(i int) int64 {
	if l.links != nil {
		op := &l.ops[l.links[i].Op]
		return op.Start + op.Dur
	}
	if l.before != nil {
		return l.tasks[l.task[i]].Start - int64(l.before[i])
	}
	return l.end[i]
}

// TaskLaunches returns the view of the rank's links and their ops' ends,
// the same after ReduceFramework.
func (r *Rank) TaskLaunches() Launches {
	if r.launched != nil {
		return Launches{task: r.launched.task, end: r.launched.end, before: r.launched.before, tasks: r.Tasks}
	}
	return Launches{links: r.Links, ops: r.FrameworkOps}
}

// Launched returns the launches of the given tasks with their ends, in
// the view's order, as a view.
func Launched(task []int32, end []int64) Launches { return Launches{task: task, end: end} }

// CountOpNames adds to counts[s] the number of framework ops named s
// (symbols past the end of counts are skipped); the same after
// ReduceFramework.
func (r *Rank) CountOpNames(counts []int32) {
	if s := r.opSum; s != nil {
		for i, c := range s.Names[:min(len(s.Names), len(counts))] {
			counts[i] += c
		}
	}
	if r.launched != nil {
		for _, c := range r.launched.names {
			if int(c.name) < len(counts) {
				counts[c.name] += c.n
			}
		}
		return
	}
	for i := range r.FrameworkOps {
		if s := int(r.FrameworkOps[i].Name); s < len(counts) {
			counts[s]++
		}
	}
}

// WillReduceEarly says that ReduceFrameworkEarly follows the read, so a
// reader may keep the task links alone, as pairs (TaskLinksOnly).
func (r *Rank) WillReduceEarly() { r.early = true }

// TaskLinksOnly reports whether the rank's reader may hand its task
// links to SetTaskLinks and drop its HCCL links: ReduceFrameworkEarly
// reads the task links' ops and tasks alone.
func (r *Rank) TaskLinksOnly() bool { return r.early && r.launched == nil }

// SetTaskLinks adds the task links l (TaskLinksOnly) after Links'.
func (r *Rank) SetTaskLinks(l []OpTask) {
	if r.opTasks == nil {
		r.opTasks = l // the reader's array, not a copy
		return
	}
	r.opTasks = append(r.opTasks, l...)
}

// OpSummary is what a reader of a rank that TaskLinksOnly reports may
// hand in place of its framework ops (SetOpSummary): all that
// ReduceFrameworkEarly reads of them, so the ops are never made (12.7 MB
// at 1 GB, beside the tasks). The reader drops the ops' exact duplicates
// (DropDuplicates counts them) and numbers the distinct ops that its
// task links (SetTaskLinks) name: an OpTask's Op is that number.
type OpSummary struct {
	Dups     int     // the exact duplicate ops dropped
	FirstDup int64   // the earliest start of them
	Names    []int32 // by name symbol: the ops, duplicates left out
	Ends     []int64 // by number: the op's end (its Start + Dur)
}

// SetOpSummary hands the rank the summary of its framework ops, in
// place of FrameworkOps (empty), for ReduceFrameworkEarly.
func (r *Rank) SetOpSummary(s *OpSummary) { r.opSum = s }

// linksFromPairs moves the task links' pairs back into Links, for
// Validate to say the ones out of range.
func (r *Rank) linksFromPairs() {
	for _, l := range r.opTasks {
		r.Links = append(r.Links, Link{Op: l.Op, Task: l.Task, HCCL: -1})
	}
	r.opTasks = nil
}
