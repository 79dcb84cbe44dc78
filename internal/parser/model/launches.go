package model

// launches is what the analysis reads of a rank's framework ops and
// links, kept by ReduceFramework in place of them: 12 bytes a task link
// and a few bytes a distinct op name, where the ops (24 bytes each) and
// the links (12 bytes each, HCCL links among them) held 19 MB at 1 GB.
type launches struct {
	task []int32 // the launched task of each task link, in Links order
	end  []int64 // when the op of that link ended
	// names counts the ops by name, ascending by symbol
	names []nameCount
}

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
	for i := range r.Links {
		if r.Links[i].Task >= 0 {
			n++
		}
	}
	l.task, l.end = make([]int32, n), make([]int64, n)
	n = 0
	for i := range r.Links {
		if k := &r.Links[i]; k.Task >= 0 {
			op := &r.FrameworkOps[k.Op]
			l.task[n], l.end[n] = k.Task, op.Start+op.Dur
			n++
		}
	}
	counts := make([]int32, r.Syms.Len())
	r.CountOpNames(counts)
	for s, c := range counts {
		if c > 0 {
			l.names = append(l.names, nameCount{Sym(s), c})
		}
	}
	r.FrameworkOps, r.Links, r.launched = nil, nil, l
}

// Launches is a view of a rank's links with their launching ops' ends:
// link i launched task Task(i) (-1: an HCCL op), and its op ended at
// End(i), in Links order (after ReduceFramework, the task links alone).
type Launches struct {
	links []Link
	ops   []FrameworkOp
	task  []int32
	end   []int64
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
	return l.end[i]
}

// TaskLaunches returns the view of the rank's links and their ops' ends,
// the same after ReduceFramework.
func (r *Rank) TaskLaunches() Launches {
	if r.launched != nil {
		return Launches{task: r.launched.task, end: r.launched.end}
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
