package analysis

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Bounds of a TimelineSample: whatever the trace's size, a window holds at
// most SampleMaxBoxes boxes (plus one per lane when a window has more lanes
// than that), names of at most SampleNameRunes runes, and a rank at most
// two step windows or one capture window.
const (
	// SampleMaxBoxes caps the boxes of one sampled window: neighbouring
	// boxes of a lane are merged until at most this many remain.
	SampleMaxBoxes = 1200
	// SampleSliceNs is the slice sampled from the middle of a capture that
	// has no profiler step with device work and lasts longer than this.
	SampleSliceNs = 20_000_000
	// SampleNameRunes caps a box name (longer names are cut, no ellipsis:
	// renderers shorten further and mark the cut).
	SampleNameRunes = 256
)

// BoxKind is what a sampled box is. The order is the mini timeline's
// legend order.
type BoxKind uint8

const (
	BoxCompute     BoxKind = iota // compute kernel
	BoxHCCLOp                     // HCCL op (hcom_*), drawn on the group's lane
	BoxCommKernel                 // collective kernel on a device stream
	BoxEventWait                  // EVENT_WAIT task
	BoxEventRecord                // EVENT_RECORD task
	BoxMemcpy                     // memcpy task
	BoxOther                      // anything else

	// NumBoxKinds is how many kinds there are.
	NumBoxKinds = int(BoxOther) + 1
)

// SampleLane is one lane of a sampled window: a device stream, or the HCCL
// ops of one communication group.
type SampleLane struct {
	HCCL   bool
	Stream int32  // device stream (-1: unknown); not HCCL
	Group  string // HCCL group name ("" when unknown); HCCL only
}

// SampleBox is one box of a sampled window: a task, an HCCL op, or
// neighbouring ones of a lane merged into one.
type SampleBox struct {
	Lane int32 // index into SampleWindow.Lanes
	Kind BoxKind
	// Start and End are ns from the window's start, clipped to the window.
	Start, End int64
	// Name indexes SampleWindow.Names: the task's name, or for a merged
	// box the name of its longest member. A merged box's Kind is the kind
	// that holds most of its time (KindTime).
	Name int32
	// Count is how many tasks the box stands for; Longest the longest
	// one's duration in ns.
	Count   int32
	Longest int64
}

// SampleWindow is one sampled window of a rank's device timeline.
// kept: results.SampleWindow is the document's copy: render reads no analysis type
type SampleWindow struct {
	// Step is the profiler step id (-1: not a step window).
	Step int
	// Start and End are the window's bounds in ns (the step's first and
	// last device work, or the capture or its middle slice).
	Start, End int64
	// Sliced: a capture window cut to SampleSliceNs from its middle.
	Sliced bool
	// Lanes are ordered: device streams by id, then HCCL groups by name.
	Lanes []SampleLane
	// Boxes in drawing order; Names are the distinct names they use.
	Boxes []SampleBox
	// KindTime, when boxes were merged, is each box's members' time (ns,
	// clipped to the window) by kind: what a merged box is made of; nil
	// when no box was merged.
	KindTime [][NumBoxKinds]int64
	Names    []string
	// Tasks counts the tasks and HCCL ops in the window before merging.
	Tasks int
}

// TimelineSample is a small, bounded picture of a rank's device timeline
// taken while the model is alive, so that renderers can draw a mini
// timeline from results alone.
type TimelineSample struct {
	// Median is the median-length step with device work (ties: the lower
	// step id); nil when the rank has no such step.
	Median *SampleWindow
	// Middle is the middle step with device work by step id, which ranks
	// with the same steps agree on; nil when it is the Median step or
	// there is none.
	Middle *SampleWindow
	// Capture is sampled when there is no step with device work: the whole
	// capture, or a SampleSliceNs slice from its middle.
	Capture *SampleWindow
}

// TimelineSamplePass samples the device timeline for drawing.
var TimelineSamplePass = &Pass{
	Name: "timelinesample",
	Doc: `bounded sample of the device timeline for the HTML mini timeline

Samples the median-length profiler step with device work and the middle
step by id (or, without steps, the capture or a 20 ms slice from its
middle): device tasks and HCCL ops clipped to the window, one lane per
stream and HCCL group, neighbouring boxes merged until at most 1200
remain. Names are resolved to strings, so the sample outlives the model.
It records no metrics.`,
	Requires: []*Pass{TimelinePass, StepsPass},
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := TimelineOf(ctx)
		if tl == nil || !tl.HaveWindow || (len(r.Tasks) == 0 && len(r.HCCL) == 0) {
			return (*TimelineSample)(nil), nil
		}
		steps := StepsOf(ctx)
		res := &TimelineSample{}
		med, ok := MedianStep(steps)
		if !ok {
			ws, we := tl.WindowStart, tl.WindowEnd
			sliced := false
			if we-ws > SampleSliceNs {
				mid := ws + (we-ws)/2
				ws, we, sliced = mid-SampleSliceNs/2, mid+SampleSliceNs/2, true
			}
			res.Capture = sampleWindow(r, ws, we)
			res.Capture.Step, res.Capture.Sliced = -1, sliced
			return res, nil
		}
		res.Median = sampleWindow(r, med.DeviceStart, med.DeviceEnd)
		res.Median.Step = med.Step
		if mid, _ := MiddleStep(steps); mid.Step != med.Step {
			res.Middle = sampleWindow(r, mid.DeviceStart, mid.DeviceEnd)
			res.Middle.Step = mid.Step
		}
		return res, nil
	},
}

// TimelineSampleOf is what the HTML mini timeline draws, sampled
// while the model was alive: results never hold the model itself, so
// memory grows with the ranks parsed at once, not with the rank count.
var TimelineSampleOf = RankResultOf[*TimelineSample](TimelineSamplePass)

// stepsWithWork returns the steps with device work, in their order.
func stepsWithWork(steps []StepBreakdown) []StepBreakdown {
	var ok []StepBreakdown
	for _, s := range steps {
		if s.DeviceEnd > s.DeviceStart {
			ok = append(ok, s)
		}
	}
	return ok
}

// MedianStep returns the median-length step with device work (the lower
// median; equal lengths: the lower step id).
func MedianStep(steps []StepBreakdown) (StepBreakdown, bool) {
	ok := stepsWithWork(steps)
	if len(ok) == 0 {
		return StepBreakdown{}, false
	}
	sort.SliceStable(ok, func(i, j int) bool {
		a, b := ok[i].DeviceEnd-ok[i].DeviceStart, ok[j].DeviceEnd-ok[j].DeviceStart
		if a != b {
			return a < b
		}
		return ok[i].Step < ok[j].Step
	})
	return ok[(len(ok)-1)/2], true
}

// MiddleStep returns the middle step with device work by step id (the
// lower middle).
func MiddleStep(steps []StepBreakdown) (StepBreakdown, bool) {
	ok := stepsWithWork(steps)
	if len(ok) == 0 {
		return StepBreakdown{}, false
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].Step < ok[j].Step })
	return ok[(len(ok)-1)/2], true
}

// boxKinds is each task class's box, keyed by class (every class listed:
// BoxCompute is the zero BoxKind).
var boxKinds = [...]BoxKind{model.ClassOther: BoxOther,
	model.ClassCompute: BoxCompute, model.ClassCommKernel: BoxCommKernel,
	model.ClassEventWait: BoxEventWait, model.ClassEventRecord: BoxEventRecord,
	model.ClassMemcpy: BoxMemcpy, model.ClassCommSubtask: BoxOther, model.ClassPlaceholder: BoxOther}

func boxKind(c model.TaskClass) BoxKind {
	if int(c) < len(boxKinds) {
		return boxKinds[c]
	}
	return BoxOther
}

// sampleWindow samples [ws, we): device tasks (not HCCL subtasks or
// placeholders) and HCCL ops that overlap it, clipped, then merged by
// downsample.
func sampleWindow(r *model.Rank, ws, we int64) *SampleWindow {
	w := &SampleWindow{Start: ws, End: we}
	var keys []SampleLane
	seen := map[SampleLane]int32{}
	// sized by a counting pass: grown by append, the slice would leave
	// about as much again behind (the passes' allocation budget,
	// TestPassesAllocateAboutTheModel). While sampling, a box's Lane
	// is its key's index in keys and its Name its name's symbol; both
	// are made final in place, and the array is the window's.
	boxes := make([]SampleBox, 0, windowBoxes(r, ws, we))
	add := func(b SampleBox, key SampleLane) {
		lane, ok := seen[key]
		if !ok {
			lane = int32(len(keys))
			seen[key] = lane
			keys = append(keys, key)
		}
		b.Lane = lane
		boxes = append(boxes, b)
	}
	// tasks and HCCL ops are sorted by start (a task's duration is
	// unbounded, so the scan starts at the first one)
	for i := range r.Tasks {
		t := &r.Tasks[i]
		if t.Start >= we {
			break
		}
		if r.End(t) <= ws || r.Class(t) == model.ClassCommSubtask || r.Class(t) == model.ClassPlaceholder {
			continue
		}
		add(SampleBox{Start: max(t.Start, ws) - ws, End: min(r.End(t), we) - ws, Kind: boxKind(r.Class(t)),
			Count: 1, Longest: r.Dur(t), Name: int32(r.Name(t))}, SampleLane{Stream: r.Stream(t)})
	}
	for i := range r.HCCL {
		h := &r.HCCL[i]
		if h.Start >= we {
			break
		}
		if h.End() <= ws {
			continue
		}
		add(SampleBox{Start: max(h.Start, ws) - ws, End: min(h.End(), we) - ws, Kind: BoxHCCLOp,
			Count: 1, Longest: h.Dur, Name: int32(h.Name)}, SampleLane{HCCL: true, Group: r.Str(h.Group)})
	}
	// lanes in order: final[i] is the place of keys[i]
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := keys[order[i]], keys[order[j]]
		if a.HCCL != b.HCCL {
			return !a.HCCL
		}
		if a.Stream != b.Stream {
			return a.Stream < b.Stream
		}
		return a.Group < b.Group
	})
	final := make([]int32, len(keys))
	for i, k := range order {
		final[k] = int32(i)
		key := keys[k]
		key.Group = strings.Clone(key.Group)
		w.Lanes = append(w.Lanes, key)
	}
	for i := range boxes {
		boxes[i].Lane = final[boxes[i].Lane]
	}
	w.Tasks = len(boxes)
	boxes, w.KindTime = downsample(boxes, we-ws, SampleMaxBoxes)
	names := map[model.Sym]int32{}
	for i := range boxes {
		b := &boxes[i]
		sym := model.Sym(uint32(b.Name))
		ni, ok := names[sym]
		if !ok {
			ni = int32(len(w.Names))
			names[sym] = ni
			w.Names = append(w.Names, cutName(r.Str(sym)))
		}
		b.Name = ni
	}
	w.Boxes = boxes
	return w
}

// windowBoxes counts what sampleWindow samples in [ws, we).
func windowBoxes(r *model.Rank, ws, we int64) int {
	n := 0
	for i := range r.Tasks {
		t := &r.Tasks[i]
		if t.Start >= we {
			break
		}
		if r.End(t) > ws && r.Class(t) != model.ClassCommSubtask && r.Class(t) != model.ClassPlaceholder {
			n++
		}
	}
	for i := range r.HCCL {
		h := &r.HCCL[i]
		if h.Start >= we {
			break
		}
		if h.End() > ws {
			n++
		}
	}
	return n
}

// cutName copies s, cut to SampleNameRunes runes (an invalid byte counts
// as one rune, as renderers count it).
func cutName(s string) string {
	n := 0
	for i := 0; i < len(s); n++ {
		if n == SampleNameRunes {
			return strings.Clone(s[:i])
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return strings.Clone(s)
}

// downsample merges neighbouring boxes of a lane whose gap is under a
// quantum, doubling the quantum until at most limit boxes remain (or the
// quantum exceeds the window: one box per lane). A merged box keeps the
// name of its longest member and takes the kind that holds most of its
// time (a 3.2 ms compute step with one 89 µs wait is compute); the second
// result is each box's time by kind (nil when nothing was merged).
func downsample(boxes []SampleBox, window int64, limit int) ([]SampleBox, [][NumBoxKinds]int64) {
	if len(boxes) <= limit {
		return boxes, nil
	}
	sort.SliceStable(boxes, func(i, j int) bool {
		if boxes[i].Lane != boxes[j].Lane {
			return boxes[i].Lane < boxes[j].Lane
		}
		return boxes[i].Start < boxes[j].Start
	})
	q := max(window/4000, 1)
	var kt [][NumBoxKinds]int64
	for {
		var out []SampleBox
		kt = kt[:0]
		for _, b := range boxes {
			if n := len(out); n > 0 && out[n-1].Lane == b.Lane && b.Start-out[n-1].End <= q {
				last, k := &out[n-1], &kt[n-1]
				last.End = max(last.End, b.End)
				last.Count += b.Count
				if b.Longest > last.Longest {
					last.Longest, last.Name = b.Longest, b.Name
				}
				k[b.Kind] += b.End - b.Start
				if k[b.Kind] > k[last.Kind] {
					last.Kind = b.Kind
				}
				continue
			}
			out = append(out, b)
			var k [NumBoxKinds]int64
			k[b.Kind] = b.End - b.Start
			kt = append(kt, k)
		}
		if len(out) <= limit || q > window {
			return out, kt
		}
		q *= 2
	}
}
