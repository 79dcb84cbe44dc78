package analysis

import (
	"cmp"
	"slices"
	"sort"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Interval is a half-open [Start, End) span in ns.
type Interval struct{ Start, End int64 }

// Union merges intervals (any order) into sorted, disjoint intervals.
func Union(iv []Interval) []Interval {
	if len(iv) == 0 {
		return nil
	}
	sorted := true
	for i := 1; i < len(iv); i++ {
		if iv[i].Start < iv[i-1].Start {
			sorted = false
			break
		}
	}
	var out []Interval
	s := iv
	if sorted {
		// the common case (tasks are sorted by start): merge straight into
		// a new slice, without copying and sorting the input first
		out = append(make([]Interval, 0, 16), s[0])
	} else {
		s = append([]Interval(nil), iv...)
		slices.SortFunc(s, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
		out = s[:1]
	}
	return merge(out, s)
}

// UnionInto is Union appending to dst (which must not share memory with
// iv); iv is sorted in place when it is not sorted by start.
func UnionInto(dst, iv []Interval) []Interval {
	if len(iv) == 0 {
		return dst
	}
	if !slices.IsSortedFunc(iv, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) }) {
		slices.SortFunc(iv, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	}
	return merge(append(dst, iv[0]), iv)
}

// merge merges the sorted intervals s[1:] into out, whose last interval
// is s[0] (possibly extended).
func merge(out, s []Interval) []Interval {
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.Start <= last.End {
			if x.End > last.End {
				last.End = x.End
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// overlapping returns the sub-slice of sorted disjoint intervals that overlap
// [lo, hi) (the first and last may stick out).
func overlapping(iv []Interval, lo, hi int64) []Interval {
	a := sort.Search(len(iv), func(k int) bool { return iv[k].End > lo })
	b := sort.Search(len(iv), func(k int) bool { return iv[k].Start >= hi })
	if b < a {
		b = a
	}
	return iv[a:b]
}

// LengthIn is Length(Clip(iv, lo, hi)) without the copy.
func LengthIn(iv []Interval, lo, hi int64) int64 {
	var n int64
	for _, x := range overlapping(iv, lo, hi) {
		if s, e := max(x.Start, lo), min(x.End, hi); e > s {
			n += e - s
		}
	}
	return n
}

// IntersectLengthIn is IntersectLength(Clip(a, lo, hi), Clip(b, lo, hi))
// without the copies.
func IntersectLengthIn(a, b []Interval, lo, hi int64) int64 {
	a, b = overlapping(a, lo, hi), overlapping(b, lo, hi)
	var n int64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		s := max(a[i].Start, b[j].Start, lo)
		e := min(a[i].End, b[j].End, hi)
		if e > s {
			n += e - s
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return n
}

// breakdownIn is breakdown over [lo, hi) of the merged compute set and the
// collectives.
func (tl *Timeline) breakdownIn(r *model.Rank, lo, hi int64) Breakdown {
	if !tl.computeOwn {
		return breakdown(tl.Compute, tl.Comm, lo, hi)
	}
	comm := tl.commSpans(r)
	a, b := comm.overlapping(lo, hi)
	computing, overlapped := tl.ownLengths(r, comm, a, b, lo, hi)
	var communication int64
	for k := a; k < b; k++ {
		if x := comm.at(k); min(x.End, hi) > max(x.Start, lo) {
			communication += min(x.End, hi) - max(x.Start, lo)
		}
	}
	return lengthsBreakdown(lo, hi, computing, communication, overlapped)
}

// spans are sorted disjoint intervals: iv, or when ops is set, the HCCL
// ops' own (Timeline.commOwn).
type spans struct {
	iv  []Interval
	ops []model.HCCLOp
}

// commSpans are the merged collectives.
func (tl *Timeline) commSpans(r *model.Rank) spans {
	if tl.commOwn {
		return spans{ops: r.HCCL}
	}
	return spans{iv: tl.Comm}
}

func (s spans) len() int {
	if s.ops != nil {
		return len(s.ops)
	}
	return len(s.iv)
}

func (s spans) at(k int) Interval {
	if s.ops != nil {
		return Interval{s.ops[k].Start, s.ops[k].End()}
	}
	return s.iv[k]
}

// overlapping is the package's overlapping, as the range [a, b) of s.
func (s spans) overlapping(lo, hi int64) (a, b int) {
	a = sort.Search(s.len(), func(k int) bool { return s.at(k).End > lo })
	b = sort.Search(s.len(), func(k int) bool { return s.at(k).Start >= hi })
	return a, max(a, b)
}

// ownLengths is LengthIn and IntersectLengthIn over [lo, hi) of the
// compute kernels' own intervals (sorted and disjoint: computeOwn) and
// comm[a:b], the collectives that overlap it, in one walk.
func (tl *Timeline) ownLengths(r *model.Rank, comm spans, a, b int, lo, hi int64) (computing, overlapped int64) {
	ct := tl.ComputeTasks
	// the ends rise with the starts: the first kernel that ends after lo
	k := sort.Search(len(ct), func(k int) bool { return r.End(&r.Tasks[ct[k]]) > lo })
	j := a
	var cj Interval // comm.at(j) while j < b
	if j < b {
		cj = comm.at(j)
	}
	for ; k < len(ct); k++ {
		t := &r.Tasks[ct[k]]
		if t.Start >= hi {
			break
		}
		s, e := max(t.Start, lo), min(r.End(t), hi)
		if e <= s {
			continue
		}
		computing += e - s
		// collectives that end before this kernel end before the next
		for j < b && cj.End <= s {
			if j++; j < b {
				cj = comm.at(j)
			}
		}
		if j == b || cj.Start >= e {
			continue // none overlaps it
		}
		for c := j; c < b; c++ {
			x := comm.at(c)
			if x.Start >= e {
				break
			}
			if cs, ce := max(x.Start, s), min(x.End, e); ce > cs {
				overlapped += ce - cs
			}
		}
	}
	return computing, overlapped
}

// Timeline is the shared infrastructure result: the compute and
// communication interval sets and the device window of a rank.
type Timeline struct {
	// HaveCompute: compute kernels are known (timeline or kernel_details).
	HaveCompute bool
	// HaveComm: collectives are known.
	HaveComm bool
	// Compute and Comm are merged (sorted, disjoint) interval sets, but
	// Compute is nil when no two compute kernels merge, in start order
	// (computeOwn): each kernel is then its own interval, read from the
	// tasks (4 bytes a kernel, not 16 more; breakdownIn reads either);
	// Comm likewise when the collectives are their own (commOwn).
	// ComputeTasks indexes Rank.Tasks of class compute, in the tasks'
	// order (start order when they are sorted, computeSorted).
	// All three are dropped (nil) in pipeline.Analyze's results, whose models
	// are released: they serve the passes.
	Compute      []Interval
	Comm         []Interval
	ComputeTasks []int32
	// computeOwn: ComputeTasks' own intervals are the merged compute set.
	// computeSorted: ComputeTasks are in start order. commOwn (only with
	// computeOwn): Comm is nil, the HCCL ops' own intervals are the
	// merged collectives (in start order, none touching the next).
	computeOwn, computeSorted, commOwn bool
	// WindowStart/End are the device window by the writer's rule
	// (windowRule): the kernel span, or with the extremes rule of current
	// msprof, also every other device task but the profiler's
	// PROFILING_ENABLE/DISABLE; valid when HaveWindow.
	HaveWindow             bool
	WindowStart, WindowEnd int64
	// KernelStart/End span the compute kernels and HCCL big ops (the
	// kernel-active span); ExtremeStart/End every device task and HCCL
	// big op but PROFILING_ENABLE/DISABLE. Valid when HaveWindow.
	KernelStart, KernelEnd   int64
	ExtremeStart, ExtremeEnd int64
	// Rule is the window rule applied (windowRule).
	Rule WindowRule
	// ComputeSource names where compute kernels came from.
	ComputeSource string
}

// TimelinePass builds the interval sets every time-based pass reads.
var TimelinePass = &Pass{
	Name: "timeline",
	Doc:  "build compute and communication interval sets\n\nInfrastructure pass: compute kernels are device tasks of compute ops (never EVENT_*, memcpy, placeholders, HCCL subtasks or AIV/AICPU collective kernels); communication is the HCCL big ops. The device window is the writer version's (docs/formats.md#the-device-window-by-writer-version): the first start to the last end of these two sets before CANN 8.5, also every other device task but PROFILING_ENABLE/DISABLE since.",
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := &Timeline{}
		tl.HaveCompute = r.Have.Timeline || r.Have.KernelDetails
		tl.HaveComm = r.Have.HCCL
		switch {
		case r.Have.Timeline:
			tl.ComputeSource = r.Have.TimelineFile
		case r.Have.KernelDetails:
			tl.ComputeSource = r.Have.KernelFile
		}
		nComp := 0
		for i := range r.Tasks {
			if r.Class(&r.Tasks[i]) == model.ClassCompute {
				nComp++
			}
		}
		// Tasks are sorted by start (model.Rank.SortTasks), so the union
		// is merged on the fly; the intervals are only collected and
		// sorted when a reader left them out of order. While no two
		// compute kernels merge (own), nothing but their indexes is kept.
		var comp, merged []Interval
		own, inOrder := true, true
		var ownEnd int64 // the last compute kernel's end, while own
		tl.ComputeTasks = make([]int32, 0, nComp)
		var win, all hull
		for i := range r.Tasks {
			t := &r.Tasks[i]
			c, end := r.Class(t), r.End(t)
			if c != model.ClassCompute {
				// current msprof's extremes: every task but the
				// profiler's own start and stop markers
				if c != model.ClassPlaceholder || !profilingMarker(r.Str(r.Name(t)), r.Str(r.TaskType(t))) {
					all.add(t.Start, end)
				}
				continue
			}
			// the window spans compute kernels and HCCL big ops only, as
			// the profiler's own Overlap Analysis does: bookkeeping
			// (PROFILING_ENABLE/DISABLE), memcpy, EVENT_* and HCCL
			// subtasks outside them are left out (docs/formats.md)
			win.add(t.Start, end)
			x := Interval{t.Start, end}
			if own {
				if end >= t.Start && (len(tl.ComputeTasks) == 0 || t.Start > ownEnd) {
					// after the last one and apart from it: its own interval
					ownEnd = end
					tl.ComputeTasks = append(tl.ComputeTasks, int32(i))
					continue
				}
				own = false
				// at most one interval per compute task: allocated once
				// rather than grown by doubling
				merged = make([]Interval, 0, nComp)
				for _, j := range tl.ComputeTasks {
					merged = append(merged, Interval{r.Tasks[j].Start, r.End(&r.Tasks[j])})
				}
			}
			tl.ComputeTasks = append(tl.ComputeTasks, int32(i))
			switch {
			case !inOrder:
				comp = append(comp, x)
			case len(merged) > 0 && x.Start < merged[len(merged)-1].Start:
				// out of order: fall back to collect-and-sort
				inOrder = false
				comp = make([]Interval, 0, nComp)
				for _, j := range tl.ComputeTasks {
					comp = append(comp, Interval{r.Tasks[j].Start, r.End(&r.Tasks[j])})
				}
				merged = nil
			case len(merged) > 0 && x.Start <= merged[len(merged)-1].End:
				if last := &merged[len(merged)-1]; x.End > last.End {
					last.End = x.End
				}
			default:
				merged = append(merged, x)
			}
		}
		commOwn := own
		for i := range r.HCCL {
			h := &r.HCCL[i]
			win.add(h.Start, h.End())
			if commOwn && (h.Dur < 0 || i > 0 && h.Start <= r.HCCL[i-1].End()) {
				commOwn = false
			}
		}
		tl.commOwn = commOwn
		var comm []Interval
		if !commOwn {
			comm = make([]Interval, 0, len(r.HCCL))
			for i := range r.HCCL {
				comm = append(comm, Interval{r.HCCL[i].Start, r.HCCL[i].End()})
			}
		}
		tl.computeOwn, tl.computeSorted = own, inOrder
		switch {
		case own:
		case inOrder:
			tl.Compute = merged
		default:
			tl.Compute = Union(comp)
		}
		if len(comm) > 0 && slices.IsSortedFunc(comm, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) }) {
			// merged in comm's own array (merge writes no further than
			// it has read), not copied into a new one grown by doubling
			tl.Comm = merge(comm[:1], comm)
		} else {
			tl.Comm = Union(comm)
		}
		tl.HaveWindow = win.seen
		tl.KernelStart, tl.KernelEnd = win.first, win.last
		tl.ExtremeStart, tl.ExtremeEnd = win.first, win.last
		if all.seen && win.seen {
			tl.ExtremeStart, tl.ExtremeEnd = min(win.first, all.first), max(win.last, all.last)
		}
		tl.Rule = windowRule(r)
		tl.WindowStart, tl.WindowEnd = tl.KernelStart, tl.KernelEnd
		if tl.Rule == RuleExtremes {
			tl.WindowStart, tl.WindowEnd = tl.ExtremeStart, tl.ExtremeEnd
		}
		return tl, nil
	},
}

// WindowRule is how a writer bounds the device window of its Overlap
// Analysis (docs/formats.md#the-device-window-by-writer-version).
type WindowRule uint8

const (
	// RuleKernels: the first start to the last end of the compute kernels
	// and HCCL big ops (msprof and torch_npu before CANN 8.5).
	RuleKernels WindowRule = iota
	// RuleExtremes: also the earliest and latest device task of any other
	// kind but PROFILING_ENABLE/DISABLE, the gaps before and after the
	// kernels counted free (msprof's pipeline_overlap_viewer.py and
	// overlap_analysis_processor.cpp, CANN 8.5 and later).
	RuleExtremes
)

func (w WindowRule) String() string {
	if w == RuleExtremes {
		return "the earliest to the latest device task (CANN 8.5 and later)"
	}
	return "the first to the last compute kernel or collective (before CANN 8.5)"
}

// windowRule is the rule of the writer a rank came from: the extremes rule
// for CANN 8.5 and later, else (older or unknown versions, a Kineto trace)
// the kernel span.
func windowRule(r *model.Rank) WindowRule {
	if r.Format == model.FormatTorchNPUChrome {
		return RuleKernels
	}
	if extremes, _ := model.ExtremesWriter(r.CANNVersion); extremes {
		return RuleExtremes
	}
	return RuleKernels
}

// profilingMarker reports whether a placeholder task is the profiler's
// start or stop marker, which no writer counts in the window.
func profilingMarker(name, taskType string) bool {
	return name == "PROFILING_ENABLE" || name == "PROFILING_DISABLE" || taskType == "PROFILING_ENABLE" || taskType == "PROFILING_DISABLE"
}

// hull is the least interval [first, last] holding every interval added to
// it; seen once one was.
type hull struct {
	first, last int64
	seen        bool
}

// kept: tracegen's truthAcc.window computes the same window on its own, as the tests' ground truth
func (s *hull) add(start, end int64) {
	if !s.seen || start < s.first {
		s.first = start
	}
	if !s.seen || end > s.last {
		s.last = end
	}
	s.seen = true
}

// TimelineOf is the timeline pass's result on a rank.
var TimelineOf = RankResultOf[*Timeline](TimelinePass)
