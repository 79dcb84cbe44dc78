package analysis

import (
	"sort"
	"strconv"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// StreamWait is EVENT_WAIT time on one stream.
type StreamWait struct {
	Stream int32
	Wait   Stat
	// Busy is the sum of durations of the stream's other tasks.
	Busy int64
	// Compute: the stream carries compute kernels; ComputeTime sums their
	// durations (the main stream has the most).
	Compute     bool
	ComputeTime int64
	// Span is first start to last end of the stream's tasks.
	Span int64
}

// Wait is one long EVENT_WAIT and the task that ran after it on its stream.
type Wait struct {
	Task int // index into Rank.Tasks
	// Next is the next task on the same stream (-1 when none): the op that waited.
	Next int
	// The wait task and its next task resolved, so they outlive the model
	// (Task and Next mean nothing once the pipeline released it): the
	// wait's stream, start and duration in ns, and the next task's name
	// and duration (HasNext false when there is none).
	Stream     int32
	Start, Dur int64
	NextName   string
	NextDur    int64
	HasNext    bool
}

// EventWaitResult describes EVENT_WAIT tasks.
type EventWaitResult struct {
	Total   Stat
	Streams []StreamWait // by stream id
	Longest []Wait       // up to 20, longest first
	// ComputeStreamWait sums waits on streams that carry compute kernels;
	// ComputeStreamSpan sums those streams' spans.
	ComputeStreamWait, ComputeStreamSpan int64
	// Main is the main compute stream: the one with the most compute-kernel
	// time (an index into Streams, -1 when no stream carries compute).
	Main int
	// WaitedOps sums EVENT_WAIT time by the op that ran right after the
	// wait on the same stream (the op that waited), longest first.
	WaitedOps []WaitedOp
}

// WaitedOp is the EVENT_WAIT time spent before one op (by name).
type WaitedOp struct {
	Name   string
	Stream int32
	Wait   Stat
}

// Metrics of the eventwait pass.
const (
	MetricEventWaitUs                        = "event_wait.time_us"                // µs: EVENT_WAIT device tasks, all streams
	MetricEventWaitCount                     = "event_wait.count"                  // count: number of EVENT_WAIT tasks
	FamilyEventWaitStreamUs           Family = "event_wait.stream.<id>.time_us"    // µs, base MetricEventWaitCount: EVENT_WAIT time on one stream
	FamilyEventWaitStreamCount        Family = "event_wait.stream.<id>.count"      // count, base MetricEventWaitCount: EVENT_WAIT tasks on one stream
	MetricEventWaitComputeStreamUs           = "event_wait.compute_stream.time_us" // µs: EVENT_WAIT time on streams that carry compute kernels
	MetricEventWaitComputeStreamShare        = "event_wait.compute_stream.share"   // ratio: that time over those streams' spans
	MetricEventWaitMainStreamID              = "event_wait.main_stream.id"         // stream: the main compute stream: the stream with the most compute-kernel time
	MetricEventWaitMainStreamUs              = "event_wait.main_stream.time_us"    // µs: EVENT_WAIT time on the main compute stream
	MetricEventWaitMainStreamShare           = "event_wait.main_stream.share"      // ratio: that time over the main compute stream's span

)

// EventWaitPass measures EVENT_WAIT tasks per stream.
var EventWaitPass = &Pass{
	Name: "eventwait",
	Doc: `EVENT_WAIT time per stream and the ops that follow the longest waits

event_wait.time_us/.count sum device tasks of type EVENT_WAIT_SQE (named
EVENT_WAIT) on all streams; event_wait.stream.<id>.* per stream;
event_wait.compute_stream.share is the waits on streams that carry compute
kernels over those streams' spans. event_wait.main_stream.* are the main
compute stream's (the stream with the most compute-kernel time): a side
stream that waits little pools down the compute streams' share, not the
main stream's. Needs the timeline: kernel_details.csv
does not list EVENT_WAIT tasks.`,
	Metrics: eventwaitMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		if !r.Have.Timeline {
			why := r.Path + " has none"
			if r.Have.TimelineNote != "" {
				why = r.Have.TimelineNote
			}
			ctx.Unavailable("EVENT_WAIT tasks are only in the device timeline (trace_view.json): "+why, MetricEventWaitUs, MetricEventWaitCount)
			return (*EventWaitResult)(nil), nil
		}
		if r.Have.SyncNote != "" {
			ctx.Unavailable(r.Have.SyncNote, MetricEventWaitUs, MetricEventWaitCount)
			return (*EventWaitResult)(nil), nil
		}
		res := &EventWaitResult{}
		// per-stream state, found through a one-entry cache (tasks of one
		// stream come in runs) and a small map
		type streamState struct {
			sw          StreamWait
			first, last int64
			lastWait    int // index in waits of the stream's last task if it is a wait, else -1
		}
		var states []*streamState
		idx := map[int32]*streamState{}
		// streams 0..255 by their id, the others through idx: the tasks
		// alternate between streams thousands of times
		var small [256]*streamState
		var cur *streamState
		// every wait while scanning, compactly (a trace holds hundreds of
		// thousands): the task and the next task on its stream
		type waitRef struct{ task, next int32 }
		var waits []waitRef
		for i := range r.Tasks {
			t := &r.Tasks[i]
			stream, dur := r.Stream(t), r.Dur(t)
			if cur == nil || cur.sw.Stream != stream {
				if uint32(stream) < uint32(len(small)) {
					cur = small[stream]
				} else {
					cur = idx[stream]
				}
				if cur == nil {
					cur = &streamState{sw: StreamWait{Stream: stream}, first: t.Start, lastWait: -1}
					if uint32(stream) < uint32(len(small)) {
						small[stream] = cur
					} else {
						idx[stream] = cur
					}
					states = append(states, cur)
				}
			}
			if e := t.Start + dur; e > cur.last {
				cur.last = e
			}
			// the previous wait on this stream is followed by this task
			if cur.lastWait >= 0 {
				waits[cur.lastWait].next = int32(i)
				cur.lastWait = -1
			}
			sw := &cur.sw
			switch r.Class(t) {
			case model.ClassEventWait:
				sw.Wait.add(dur)
				res.Total.add(dur)
				cur.lastWait = len(waits)
				waits = append(waits, waitRef{task: int32(i), next: -1})
			case model.ClassCompute:
				sw.Compute = true
				sw.Busy += dur
				sw.ComputeTime += dur
			default:
				sw.Busy += dur
			}
		}
		res.Streams = make([]StreamWait, 0, len(states))
		for _, st := range states {
			sw := &st.sw
			sw.Span = st.last - st.first
			res.Streams = append(res.Streams, *sw)
			if sw.Compute {
				res.ComputeStreamWait += sw.Wait.Total
				res.ComputeStreamSpan += sw.Span
			}
		}
		sort.Slice(res.Streams, func(i, j int) bool { return res.Streams[i].Stream < res.Streams[j].Stream })
		res.Main = mainStream(res.Streams)
		type opKey struct {
			name   model.Sym
			stream int32
		}
		byOp := map[opKey]*Stat{}
		for _, w := range waits {
			if w.next < 0 {
				continue
			}
			n := &r.Tasks[w.next]
			if r.Class(n) != model.ClassCompute && r.Class(n) != model.ClassCommKernel && r.Class(n) != model.ClassMemcpy {
				continue
			}
			k := opKey{r.Name(n), r.Stream(n)}
			st := byOp[k]
			if st == nil {
				st = &Stat{}
				byOp[k] = st
			}
			st.add(r.Dur(&r.Tasks[w.task]))
		}
		res.WaitedOps = make([]WaitedOp, 0, len(byOp))
		for k, st := range byOp {
			res.WaitedOps = append(res.WaitedOps, WaitedOp{Name: keepName(r.Str(k.name)), Stream: k.stream, Wait: *st})
		}
		sort.Slice(res.WaitedOps, func(i, j int) bool {
			a, b := res.WaitedOps[i], res.WaitedOps[j]
			if a.Wait.Total != b.Wait.Total {
				return a.Wait.Total > b.Wait.Total
			}
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			return a.Stream < b.Stream
		})
		// the 20 longest, longest first, ties by task order (a total
		// order): kept by insertion while scanning, not by sorting all
		longer := func(x, y waitRef) bool {
			a, b := r.Dur(&r.Tasks[x.task]), r.Dur(&r.Tasks[y.task])
			if a != b {
				return a > b
			}
			return x.task < y.task
		}
		const keep = 20
		top := make([]waitRef, 0, keep)
		for _, w := range waits {
			if len(top) == keep && !longer(w, top[keep-1]) {
				continue
			}
			k := len(top)
			if k < keep {
				top = append(top, w)
			} else {
				k = keep - 1
			}
			for k > 0 && longer(w, top[k-1]) {
				top[k] = top[k-1]
				k--
			}
			top[k] = w
		}
		res.Longest = make([]Wait, 0, len(top))
		for _, ref := range top {
			t := &r.Tasks[ref.task]
			w := Wait{Task: int(ref.task), Next: int(ref.next), Stream: r.Stream(t), Start: t.Start, Dur: r.Dur(t)}
			if ref.next >= 0 {
				n := &r.Tasks[ref.next]
				w.NextName, w.NextDur, w.HasNext = keepName(r.Str(r.Name(n))), r.Dur(n), true
			}
			res.Longest = append(res.Longest, w)
		}
		ctx.SetUs(MetricEventWaitUs, res.Total.Total)
		ctx.SetCount(MetricEventWaitCount, res.Total.Count)
		for _, sw := range res.Streams {
			if sw.Wait.Count == 0 {
				continue
			}
			id := strconv.Itoa(int(sw.Stream))
			ctx.SetUs(FamilyEventWaitStreamUs.Of(id), sw.Wait.Total)
			ctx.SetCount(FamilyEventWaitStreamCount.Of(id), sw.Wait.Count)
		}
		ctx.SetUs(MetricEventWaitComputeStreamUs, res.ComputeStreamWait)
		if res.ComputeStreamSpan > 0 {
			ctx.Set(MetricEventWaitComputeStreamShare, float64(res.ComputeStreamWait)/float64(res.ComputeStreamSpan))
		} else {
			ctx.Unavailable("no stream carries compute kernels", MetricEventWaitComputeStreamShare)
		}
		setMainStream(ctx, res)
		return res, nil
	},
}

// EventWaitOf is the event_wait pass's result on a rank.
var EventWaitOf = RankResultOf[*EventWaitResult](EventWaitPass)

// mainStream is the index in streams of the one with the most
// compute-kernel time (ties: the lower id), -1 when none carries compute.
func mainStream(streams []StreamWait) int {
	m := -1
	for i, sw := range streams {
		if sw.Compute && (m < 0 || sw.ComputeTime > streams[m].ComputeTime) {
			m = i
		}
	}
	return m
}

// setMainStream records the event_wait.main_stream.* metrics.
func setMainStream(ctx *Context, res *EventWaitResult) {
	names := []string{MetricEventWaitMainStreamID, MetricEventWaitMainStreamUs, MetricEventWaitMainStreamShare}
	if res.Main < 0 {
		ctx.Unavailable("no stream carries compute kernels", names...)
		return
	}
	m := res.Streams[res.Main]
	ctx.SetCount(MetricEventWaitMainStreamID, int(m.Stream))
	ctx.SetUs(MetricEventWaitMainStreamUs, m.Wait.Total)
	if m.Span > 0 {
		ctx.Set(MetricEventWaitMainStreamShare, float64(m.Wait.Total)/float64(m.Span))
	} else {
		ctx.Unavailable("the main compute stream has a zero span", MetricEventWaitMainStreamShare)
	}
}

// MainStream is the main compute stream's id; false when no stream
// carries compute kernels.
func (r *EventWaitResult) MainStream() (int32, bool) {
	if r == nil || r.Main < 0 {
		return 0, false
	}
	return r.Streams[r.Main].Stream, true
}
