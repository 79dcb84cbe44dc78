package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Breakdown is the time split of a span, in ns.
type Breakdown struct {
	Window                     int64
	Computing                  int64
	Communication              int64
	CommunicationNotOverlapped int64
	Overlapped                 int64
	Free                       int64
}

func breakdown(compute, comm []Interval, start, end int64) Breakdown {
	return lengthsBreakdown(start, end, LengthIn(compute, start, end), LengthIn(comm, start, end), IntersectLengthIn(compute, comm, start, end))
}

// lengthsBreakdown is the breakdown of [start, end) whose compute and
// communication sets cover computing and communication ns of it, overlapped
// of which both.
func lengthsBreakdown(start, end, computing, communication, overlapped int64) Breakdown {
	b := Breakdown{Window: end - start, Computing: computing, Communication: communication, Overlapped: overlapped}
	b.CommunicationNotOverlapped = b.Communication - b.Overlapped
	b.Free = b.Window - (b.Computing + b.CommunicationNotOverlapped)
	return b
}

// Metrics of the overlap pass.
const (
	MetricDeviceWindowUs      = "device.window.time_us"                        // µs: the profiler's device window: the capture's own Overlap Analysis span (msprof_*.json, a DB's OVERLAP_ANALYSIS), else the writer version's rule (docs/formats.md#the-device-window-by-writer-version)
	MetricKernelSpanUs        = "device.kernel_span.time_us"                   // µs: first start to last end of the compute kernels and HCCL big ops (the kernel-active span)
	MetricHeadIdleUs          = "device.head_idle.time_us"                     // µs: device window start to the first compute kernel or HCCL big op (free time before the work)
	MetricTailIdleUs          = "device.tail_idle.time_us"                     // µs: last compute kernel or HCCL big op end to the device window end (free time after the work)
	MetricComputingUs         = "overlap.computing.time_us"                    // µs: union of compute-kernel intervals
	MetricCommunicationUs     = "overlap.communication.time_us"                // µs: union of HCCL big-op intervals
	MetricCommNotOverlappedUs = "overlap.communication_not_overlapped.time_us" // µs: communication minus computing
	MetricOverlappedUs        = "overlap.overlapped.time_us"                   // µs: communication that overlaps computing
	MetricFreeUs              = "overlap.free.time_us"                         // µs: window minus the union of computing and communication (device idle)
)

// OverlapPass measures the time breakdown over the whole profiled window.
var OverlapPass = &Pass{
	Name: "overlap",
	Doc: `time breakdown: computing, communication, not-overlapped, free

device.window.time_us is the capture's own Overlap Analysis span
(msprof_*.json, a DB's OVERLAP_ANALYSIS, trace_view.json's of CANN 8.5 and
later, or of no known version where the recomputation differs), else the window by its writer version's rule (the kernel span
before CANN 8.5, every device task but PROFILING_ENABLE/DISABLE since);
device.kernel_span.time_us spans the compute kernels and HCCL big ops,
device.head_idle.time_us and device.tail_idle.time_us the window before
and after them; overlap.computing.time_us is the union of compute-kernel
intervals; overlap.communication.time_us the union of HCCL big ops;
overlap.communication_not_overlapped.time_us is communication minus
computing; overlap.free.time_us is the window minus the union of both.`,
	Requires: []*Pass{TimelinePass},
	Metrics:  overlapMetrics,
	Run: func(ctx *Context) (any, error) {
		tl := TimelineOf(ctx)
		if !tl.HaveWindow {
			if len(ctx.Rank.StepTrace) > 0 {
				ctx.Unavailable("no device tasks to place the kernels in the window: "+strings.TrimPrefix(noDeviceData(ctx), "no device data: "), MetricKernelSpanUs, MetricHeadIdleUs, MetricTailIdleUs)
				return overlapFromStepTrace(ctx), nil
			}
			ctx.UnavailableAll(noDeviceData(ctx))
			return (*Breakdown)(nil), nil
		}
		b := tl.breakdownIn(ctx.Rank, tl.WindowStart, tl.WindowEnd)
		winStart, winEnd := tl.WindowStart, tl.WindowEnd
		if own := &ctx.Rank.OwnOverlap; own.Slices > 0 && (checkOwnOverlap(ctx, tl, own, b) || !own.IfDiffers) {
			// the profiler's own figures; npuprof's recomputation
			// checks them (a capture of no known writer version: only
			// where they differ, else the recomputation stands)
			b = ownBreakdown(own)
			winStart, winEnd = own.Start, own.End
		}
		head, tail := max(0, min(tl.KernelStart, winEnd)-winStart), max(0, winEnd-max(tl.KernelEnd, winStart))
		ctx.SetUs(MetricKernelSpanUs, tl.KernelEnd-tl.KernelStart)
		ctx.SetUs(MetricHeadIdleUs, head)
		ctx.SetUs(MetricTailIdleUs, tail)
		firstCallSetup(ctx, head, b.Window)
		if st := ctx.Rank.StepTrace; len(st) == 1 && !ctx.Rank.Have.Timeline && tl.HaveCompute && !ctx.Rank.Have.KernelPartial {
			// kernel_details.csv of one step: its rows are that step's
			// (a timeline's window also spans the work outside the step)
			checkAgainstStepTrace(ctx, "the profiled window", tl.ComputeSource, b, &st[0], tl.HaveComm)
		}
		ctx.SetUs(MetricDeviceWindowUs, b.Window)
		if tl.HaveCompute {
			ctx.SetUs(MetricComputingUs, b.Computing)
		} else {
			ctx.Unavailable(noDeviceData(ctx), MetricComputingUs)
		}
		if tl.HaveComm {
			ctx.SetUs(MetricCommunicationUs, b.Communication)
		} else {
			ctx.Unavailable(noCollectives(ctx), MetricCommunicationUs)
		}
		if tl.HaveCompute && tl.HaveComm {
			ctx.SetUs(MetricCommNotOverlappedUs, b.CommunicationNotOverlapped)
			ctx.SetUs(MetricOverlappedUs, b.Overlapped)
			ctx.SetUs(MetricFreeUs, b.Free)
		} else {
			why := noCollectives(ctx)
			if !tl.HaveCompute {
				why = noDeviceData(ctx)
			}
			ctx.Unavailable("needs both compute kernels and collectives; "+why, MetricCommNotOverlappedUs, MetricOverlappedUs, MetricFreeUs)
		}
		if h := ctx.Rank.Have; !h.Timeline && h.KernelDetails {
			// sources name kernel_details.csv; the note says what it
			// leaves out
			ctx.Warn(h.KernelFile, kernelDetailsWindowNote)
		}
		return &b, nil
	},
}

// ownBreakdown is the split of the capture's own Overlap Analysis.
func ownBreakdown(own *model.OwnOverlap) Breakdown {
	return Breakdown{
		Window: own.End - own.Start, Computing: own.Computing, Communication: own.Communication,
		CommunicationNotOverlapped: own.NotOverlapped, Overlapped: max(0, own.Communication-own.NotOverlapped), Free: own.Free,
	}
}

// ownWindowTolerance is how far (a share of the window) npuprof's
// recomputed window may differ from the capture's own before it warns.
const ownWindowTolerance = 0.001

// checkOwnOverlap warns when the window npuprof recomputes by the
// writer's rule differs from the capture's own Overlap Analysis by more
// than ownWindowTolerance, and reports whether it did.
func checkOwnOverlap(ctx *Context, tl *Timeline, own *model.OwnOverlap, b Breakdown) bool {
	w := own.End - own.Start
	if w <= 0 {
		return false
	}
	d := b.Window - w
	differs := math.Abs(float64(d)) > ownWindowTolerance*float64(w)
	if differs {
		ctx.Warn(ctx.Rank.Have.TimelineFile, fmt.Sprintf("the profiler's own Overlap Analysis spans %.3f µs, npuprof's recomputed window %.3f µs (%+.1f%%, by %s); device.window.time_us and overlap.* are the profiler's", float64(w)/1000, float64(b.Window)/1000, 100*float64(d)/float64(w), tl.Rule))
	}
	return differs
}

// setupShare is the share of the window a head idle must reach before
// firstCallSetup looks for the host call that held it.
const setupShare = 0.1

// firstCallSetup notes a long idle head of the window that the host's API
// statistics explain: the longest single API call covers at least half of
// it (the first call of an aclnn API builds its workspace and kernels:
// first-call setup, not a device problem).
func firstCallSetup(ctx *Context, head, window int64) {
	if window <= 0 || float64(head) < setupShare*float64(window) {
		return
	}
	var best *model.StatRow
	longest := func(s *model.StatRow) int64 {
		if s.Max > 0 {
			return s.Max
		}
		if s.Count == 1 {
			return s.Total
		}
		return 0
	}
	for i := range ctx.Rank.APIStats {
		s := &ctx.Rank.APIStats[i]
		if best == nil || longest(s) > longest(best) {
			best = s
		}
	}
	if best == nil || 2*longest(best) < head {
		return
	}
	ctx.Warn(cmp.Or(ctx.Rank.Have.APIStatFile, "api_statistic"), fmt.Sprintf("device.head_idle.time_us (%.1f µs, %.0f%% of the window) is first-call setup: the host's longest %s call (%s) took %.1f µs before the first kernel ran; profile after a warm-up step to leave it out", float64(head)/1000, 100*float64(head)/float64(window), cmp.Or(best.Level, "API"), best.Name, float64(longest(best))/1000))
}

// OverlapOf is the overlap pass's raw split on a rank. Its parts are
// measured only where the rank's Metrics hold the overlap.* metric of the
// same name; without collective data Communication,
// CommunicationNotOverlapped, Overlapped and Free are 0 and not measured
// (Unavailable says why): report the metrics, not these fields.
var OverlapOf = RankResultOf[*Breakdown](OverlapPass)

// kernelDetailsWindowNote is the note on a window and time split computed
// from kernel_details.csv (without a trace, or with one cut before its
// device metadata).
const kernelDetailsWindowNote = "device.window.time_us and overlap.free.time_us come from this file, whose rows are kernels and collectives only: EVENT_WAIT and the other non-kernel tasks of the device timeline are not in it, so the window can be shorter and the free time smaller than the timeline's"

// noDeviceData says why a rank has no device tasks, quoting what the
// parsers recorded about its trace_view.json and kernel_details.csv.
func noDeviceData(ctx *Context) string {
	h := &ctx.Rank.Have
	var why []string
	for _, n := range []string{h.TimelineNote, h.KernelNote} {
		if n != "" && !slices.Contains(why, n) {
			why = append(why, n)
		}
	}
	if len(why) == 0 {
		return "no device data: " + ctx.Rank.Path + " has no trace_view.json and no kernel_details.csv"
	}
	return "no device data: " + strings.Join(why, "; ")
}

// noCollectives says why a rank's collectives are unknown.
func noCollectives(ctx *Context) string {
	h := &ctx.Rank.Have
	if h.HCCLNote != "" {
		return "no collective data: " + h.HCCLNote
	}
	if !h.Timeline && !h.KernelDetails {
		return "no collective data: " + strings.TrimPrefix(noDeviceData(ctx), "no device data: ")
	}
	return "no collective data: neither a timeline HCCL process nor kernel_details HCCL rows"
}

// noSteps says why a rank has no per-step breakdown.
func noSteps(ctx *Context, tl *Timeline) string {
	r := ctx.Rank
	switch {
	case !r.Have.Timeline:
		if r.Have.TimelineNote != "" {
			return "no timeline to find ProfilerStep#N in: " + r.Have.TimelineNote
		}
		return "no timeline to find ProfilerStep#N in: " + strings.TrimPrefix(noDeviceData(ctx), "no device data: ")
	case len(r.Steps) == 0:
		return "the timeline has no ProfilerStep#N ranges (profiled without torch_npu's schedule and prof.step(), or without the host (CPU) activity)"
	case !tl.HaveCompute:
		return fmt.Sprintf("the timeline has %d ProfilerStep#N range(s) but no compute kernels to place in them", len(r.Steps))
	}
	return ""
}

// StepBreakdown is one ProfilerStep's breakdown.
type StepBreakdown struct {
	Step int
	// HostStart/HostEnd are the ProfilerStep#N bounds; DeviceStart/End the
	// first and last device work launched in it.
	HostStart, HostEnd     int64
	DeviceStart, DeviceEnd int64
	Breakdown
	Tasks int
	// CommUnavailable, when not empty, says why the step's collectives are
	// unknown (the rank has no collective data; see StepCommKeys):
	// Communication, CommunicationNotOverlapped, Overlapped and Free were
	// not measured, are left 0 and must not be shown or aggregated.
	// Window, Computing and Tasks then cover the compute kernels only.
	CommUnavailable string
	// OverlappedUnavailable, when not empty, says why Overlapped alone was
	// not measured (a step_trace_time.csv row without an Overlapped
	// value): it is left 0 and must not be shown or aggregated.
	OverlappedUnavailable string
	// Source is "" for a step measured on the timeline; else the file the
	// step's row came from (step_trace_time.csv, analysis.db): then the
	// host and device bounds are unknown (0), Tasks is -1 (not counted)
	// and Preparing is the row's Preparing (-1 when its header has none).
	Source    string
	Preparing int64
}

// PreparingNs is the step's preparing time (first device task start
// minus the step's host start) and whether it is known.
func (s *StepBreakdown) PreparingNs() (int64, bool) {
	if s.Source != "" {
		return s.Preparing, s.Preparing >= 0
	}
	return max(0, s.DeviceStart-s.HostStart), true
}

// HaveComm reports whether the step's communication, overlap and free
// times were measured (see CommUnavailable).
func (s *StepBreakdown) HaveComm() bool { return s.CommUnavailable == "" }

// StepCommKeys are the keys of RankResult.Unavailable (and of the JSON
// document's ranks[].unavailable) that say why the steps[] fields of the
// same names (communication_us, ...) are null: set when the rank has
// steps but no collective data.
var StepCommKeys = []string{"steps.communication_us", "steps.communication_not_overlapped_us", "steps.overlapped_us", "steps.free_us"}

// StepsPass computes the per-step breakdown the way torch_npu computes
// step_trace_time.csv: a step's device work is the compute kernels and
// HCCL big ops whose start lies within ProfilerStep#N; its window runs from
// the first of them to the last end.
var StepsPass = &Pass{
	Name: "steps",
	Doc: `per-step breakdown within ProfilerStep#N bounds

Without collective data (no HCCL process in the timeline and no HCCL rows
in kernel_details) a step's communication, overlapped, not-overlapped and
free times are not measured: free is the window minus the union of
computing and communication, and without communication window minus
computing is only an upper bound. They are then left out
(StepBreakdown.CommUnavailable, steps.*_us in Unavailable) and the window
spans the step's compute kernels only.

On a truncated trace, steps that end after the last compute kernel (or
collective) read are left out and named in Unavailable["steps.cut"]: the
cut may have taken part of their device work.`,
	Requires: []*Pass{TimelinePass},
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := TimelineOf(ctx)
		if !r.Have.Timeline && len(r.StepTrace) > 0 {
			if out := stepsFromStepTrace(ctx); len(out) > 0 {
				return out, nil
			}
		}
		if len(r.Steps) == 0 || !tl.HaveCompute {
			ctx.Unavailable(noSteps(ctx, tl), "steps")
			return []StepBreakdown(nil), nil
		}
		out := make([]StepBreakdown, 0, len(r.Steps))
		noComm := ""
		if !tl.HaveComm {
			noComm = noCollectives(ctx)
			ctx.Unavailable(noComm, StepCommKeys[0])
			ctx.Unavailable("needs both compute kernels and collectives; "+noComm, StepCommKeys[1:]...)
		}
		// Tasks and HCCL ops by start, so each step is found by binary
		// search instead of a scan of every task per step.
		comps := tl.ComputeTasks
		if !tl.computeSorted {
			comps = byStart(comps, func(i int32) int64 { return r.Tasks[i].Start })
		}
		hccls := make([]int32, len(r.HCCL))
		for i := range hccls {
			hccls[i] = int32(i)
		}
		hccls = byStart(hccls, func(i int32) int64 { return r.HCCL[i].Start })
		inStep := func(idx []int32, start func(int32) int64, lo, hi int64) []int32 {
			a := sort.Search(len(idx), func(k int) bool { return start(idx[k]) >= lo })
			b := sort.Search(len(idx), func(k int) bool { return start(idx[k]) >= hi })
			return idx[a:max(a, b)]
		}
		// A truncated trace holds each device process's events up to where
		// it was cut: a step that ends after the last kernel (or, with
		// collectives, the last collective) read may have lost device work,
		// and one past the cut has none left. Such steps are left out, not
		// reported with what little (or nothing) was read.
		covered := int64(math.MaxInt64)
		if r.Have.TimelinePartial {
			if len(comps) > 0 {
				covered = r.Tasks[comps[len(comps)-1]].Start
			}
			if noComm == "" && len(hccls) > 0 {
				covered = min(covered, r.HCCL[hccls[len(hccls)-1]].Start)
			}
		}
		var cut []string
		// per-step interval buffers, reused from step to step
		var comp, comm, ucomp, ucomm []Interval
		for _, s := range r.Steps {
			if s.End > covered {
				cut = append(cut, "#"+strconv.Itoa(s.ID))
				continue
			}
			sb := StepBreakdown{Step: s.ID, HostStart: s.Start, HostEnd: s.End, CommUnavailable: noComm}
			comp, comm = comp[:0], comm[:0]
			var win hull
			for _, i := range inStep(comps, func(i int32) int64 { return r.Tasks[i].Start }, s.Start, s.End) {
				t := &r.Tasks[i]
				comp = append(comp, Interval{t.Start, r.End(t)})
				win.add(t.Start, r.End(t))
			}
			for _, i := range inStep(hccls, func(i int32) int64 { return r.HCCL[i].Start }, s.Start, s.End) {
				if noComm != "" {
					break // collectives unknown: what little was read is not a measurement
				}
				h := &r.HCCL[i]
				comm = append(comm, Interval{h.Start, h.End()})
				win.add(h.Start, h.End())
			}
			if !win.seen {
				out = append(out, sb)
				continue
			}
			sb.DeviceStart, sb.DeviceEnd = win.first, win.last
			sb.Tasks = len(comp) + len(comm)
			ucomp, ucomm = UnionInto(ucomp[:0], comp), UnionInto(ucomm[:0], comm)
			sb.Breakdown = breakdown(ucomp, ucomm, win.first, win.last)
			if noComm != "" {
				sb.Communication, sb.CommunicationNotOverlapped, sb.Overlapped, sb.Free = 0, 0, 0, 0
			}
			out = append(out, sb)
		}
		if len(cut) > 0 {
			why := fmt.Sprintf("ProfilerStep%s left out: the truncated trace ends before their device work does (the last %s read starts at %s, before the step ends); %s",
				strings.Join(cut, ", "), map[bool]string{true: "kernel or collective", false: "kernel"}[noComm == ""], nsText(covered), r.PartialReason)
			if len(out) == 0 {
				ctx.Unavailable(why, "steps")
			} else {
				ctx.Unavailable(why, "steps.cut")
			}
		}
		checkStepsAgainstStepTrace(ctx, out, tl.ComputeSource)
		return out, nil
	},
}

// StepsOf is the steps pass's per-step breakdown on a rank (see
// StepBreakdown.CommUnavailable for a rank without collective data).
var StepsOf = RankResultOf[[]StepBreakdown](StepsPass)

// nsText prints a timestamp in µs, as the trace writes it.
func nsText(ns int64) string { return fmt.Sprintf("%d.%03d µs", ns/1000, ns%1000) }

// byStart returns idx ordered by start (stable; idx itself when already
// in order, as it is after model.Rank.SortTasks).
func byStart(idx []int32, start func(int32) int64) []int32 {
	// in order: one start a task (sort.SliceIsSorted's less took two,
	// through two closures)
	sorted, prev := true, int64(math.MinInt64)
	for _, i := range idx {
		s := start(i)
		if s < prev {
			sorted = false
			break
		}
		prev = s
	}
	if sorted {
		return idx
	}
	out := append([]int32(nil), idx...)
	sort.SliceStable(out, func(a, b int) bool { return start(out[a]) < start(out[b]) })
	return out
}
