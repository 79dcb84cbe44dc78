package model

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
	l.task, l.before = make([]int32, n), make([]int32, n)
	n = 0
	for i := range r.Links {
		if k := &r.Links[i]; k.Task >= 0 {
			op := &r.FrameworkOps[k.Op]
			end := op.Start + op.Dur
			d := r.Tasks[k.Task].Start - end
			l.task[n], l.before[n] = k.Task, int32(d)
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
		}
	}
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
	r.FrameworkOps, r.Links, r.launched = nil, nil, l
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
