package analysis

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Cause is one entry of the step-time ledger: what a nanosecond of a
// step's wall time was spent on, on the main compute stream.
type Cause uint8

// The ledger's causes, in their order in a LedgerStep.
const (
	CauseAttention       Cause = iota // an attention kernel ran
	CauseExperts                      // a MoE expert kernel (GroupedMatmul*) ran
	CauseRouting                      // gating, routing, permute or Cumsum kernels ran
	CauseDispatchCombine              // an MC2 dispatch/combine kernel did its exchange
	CauseAICPU                        // an AI_CPU kernel ran
	CauseComputeOther                 // any other kernel, copy or event task ran
	CauseCollective                   // the stream waited for a collective (not for a late peer)
	CausePeerWait                     // the stream waited for the slowest member of a collective or MC2 exchange
	CauseStreamWait                   // the stream waited for another stream of the device
	CauseHostGap                      // the stream idled while the host was still launching the next eager op
	CauseIdle                         // the stream idled inside the step, the host not seen late
	CauseBetweenSteps                 // before the step's first task and after its last: scheduler and host
	NumCauses
)

// CauseNames are the causes' names in metric names (ledger.<name>.time_us).
var CauseNames = [NumCauses]string{"compute.attention", "compute.moe_experts", "compute.routing",
	"compute.dispatch_combine", "compute.aicpu", "compute.other", "collective", "peer_wait",
	"stream_wait", "host_gap", "idle", "between_steps"}

func (c Cause) String() string {
	if c < NumCauses {
		return CauseNames[c]
	}
	return "cause(?)"
}

// LedgerStep is one step of one rank: its wall time [Start, End) split
// into causes that sum exactly to End-Start.
type LedgerStep struct {
	// Index is the step's ordinal on the rank (0-based); ID is
	// ProfilerStep#N's N, -1 for a step found from the layer period.
	Index, ID  int
	Start, End int64
	// Phase is decode, prefill or mixed from the attention kernels' first
	// input's leading dimension (the step's tokens: at most
	// DecodeMaxTokens is a decode, as for ranks[].steps[].phase), "" when
	// no attention kernel had a shape.
	Phase  string
	Causes [NumCauses]int64
	// Collectives split CauseCollective by "type@group"; Streams split
	// CauseStreamWait by the stream and kernel awaited; Peers split
	// CausePeerWait (set by the ledger cluster pass).
	Collectives []LedgerEntry
	Streams     []StreamWaitEntry
	Peers       []PeerWaitEntry
	// Sync are the step's collectives and MC2 exchanges (in start order),
	// what the cluster pass matches across ranks, encoded (SyncOps reads
	// them): per op uvarint(Label), a byte of Kernel and Late, and the
	// zigzag varints of Dur, Exposed, ExpFrom and ExpTo; ~9 bytes an op.
	Sync []byte
	// syncAt holds Sync when it was moved to a spill file
	// (RankResult.Spill; Sync is nil then).
	syncAt replay.Ref
}

// SyncOps returns the step's Sync decoded into buf.
func (s *LedgerStep) SyncOps(buf []SyncOp) []SyncOp {
	buf = buf[:0]
	b := s.Sync
	if s.syncAt.Spilled() {
		b = s.syncAt.Read(nil)
	}
	for len(b) > 0 {
		var op SyncOp
		l, n := binary.Uvarint(b)
		op.Label = uint16(l)
		op.Kernel, op.Late = b[n]&1 != 0, Cause(b[n]>>1)
		b = b[n+1:]
		var v [4]int64
		for i := range v {
			v[i], n = binary.Varint(b)
			b = b[n:]
		}
		op.Dur, op.Exposed, op.ExpFrom, op.ExpTo = v[0], int32(v[1]), int32(v[2]), int32(v[3])
		buf = append(buf, op)
	}
	return buf
}

// setSync encodes ops as the step's Sync.
func (s *LedgerStep) setSync(ops []SyncOp, buf []byte) []byte {
	b := buf[:0]
	for i := range ops {
		op := &ops[i]
		k := byte(op.Late) << 1
		if op.Kernel {
			k |= 1
		}
		b = append(binary.AppendUvarint(b, uint64(op.Label)), k)
		b = binary.AppendVarint(b, op.Dur)
		b = binary.AppendVarint(b, int64(op.Exposed))
		b = binary.AppendVarint(b, int64(op.ExpFrom))
		b = binary.AppendVarint(b, int64(op.ExpTo))
	}
	s.Sync = nil
	if len(b) > 0 {
		s.Sync = slices.Clone(b)
	}
	return b
}

// Ns is the step's wall time.
func (s *LedgerStep) Ns() int64 { return s.End - s.Start }

// LedgerEntry is the time of one named part of a cause.
type LedgerEntry struct {
	Name string
	Ns   int64
}

// StreamWaitEntry is the main stream's wait for one kernel (or copy) of
// another stream.
type StreamWaitEntry struct {
	Stream int32
	Kernel string
	Ns     int64
}

// PeerWaitEntry is the wait for the slowest member of one kind of
// exchange: who it was and what it was doing before it arrived.
type PeerWaitEntry struct {
	// Op is the exchange: "type@group" of a collective, the op type of
	// an MC2 kernel.
	Op string
	// Rank is the member that arrived last; Late the cause that took
	// most of its time since its previous exchange of the step.
	Rank int
	Late Cause
	Ns   int64
}

// SyncOp is one collective or MC2 dispatch/combine of a step (a rank
// keeps one per exchange until the cluster pass, encoded). A step's Sync
// holds its collectives in start order, then its MC2 kernels in start
// order: the same exchanges in the same order on every member.
type SyncOp struct {
	// Dur is the op's duration on the rank.
	Dur int64
	// Exposed is the ledger time the main stream spent in or waiting for
	// this op (under CauseCollective or CauseDispatchCombine), within
	// [ExpFrom, ExpTo) from the op's start; all three saturate at ±2.1 s
	// (what saturates is left out of the peer wait, never counted twice).
	Exposed, ExpFrom, ExpTo int32
	// Label indexes LedgerResult.Labels ("allgather@tp",
	// "MoeDistributeDispatchV2").
	Label uint16
	// Kernel: an MC2 kernel on the main stream (its group is the ep
	// group), else a collective.
	Kernel bool
	// Late is the cause that took most of the rank's time since its
	// previous op of the step (what it was doing before it arrived).
	Late Cause
}

// LedgerResult is one rank's step-time ledger.
type LedgerResult struct {
	// Stream is the main compute stream the ledger follows.
	Stream int32
	// StepsSource: ProfilerStep#N or the layer period.
	StepsSource string
	Steps       []LedgerStep
	// Labels are the SyncOp labels.
	Labels []string
}

// Metrics of the ledger pass.
const (
	MetricLedgerRankStepsCount = "ledger.rank.steps.count" // count: steps of the rank's step-time ledger (ProfilerStep#N, else the steps found from the layer period)
)

// LedgerPass splits each step of the rank into the disjoint causes of the
// step-time ledger.
var LedgerPass = &Pass{
	Name: "ledger",
	Doc: `the step-time ledger of each step of the rank

Each step runs from its start to the next step's start (ProfilerStep#N, else
the steps found from the layer period: from the first task after a step
boundary's longest idle; the last step ends with the stream's last task).
Every nanosecond of it is given to one cause by what the main compute
stream did: a kernel ran (compute by stage: attention, MoE experts,
routing, MC2 dispatch/combine, AI CPU, other), it waited (EVENT_WAIT) for a
collective or for another stream's kernel, or it idled: before the step's
first task and after its last (between steps), while a collective ran
(collective), before an eager kernel the host launched after the idle began
(host gap), else idle. The causes sum exactly to the step.
ledger.rank.steps.count counts the steps; the ledger cluster pass splits
the waits for the slowest peer off and takes the critical rank's ledger.`,
	Requires: []*Pass{TimelinePass, LayersPass, EventWaitPass, WaitPairPass},
	Metrics:  ledgerMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := TimelineOf(ctx)
		if !r.Have.Timeline || !tl.HaveCompute {
			ctx.UnavailableAll("the ledger follows the main compute stream on the device timeline (trace_view.json), which " + r.Path + " lacks")
			return (*LedgerResult)(nil), nil
		}
		main, ok := EventWaitOf(ctx).MainStream()
		if !ok {
			ctx.UnavailableAll("no stream carries compute kernels: no main compute stream")
			return (*LedgerResult)(nil), nil
		}
		spans, source := ledgerSpans(r, LayersOf(ctx), main)
		if len(spans) == 0 {
			ctx.UnavailableAll("no steps: no ProfilerStep#N and no step boundary in the layer period (needs at least two decode steps of two MoE layers or more)")
			return (*LedgerResult)(nil), nil
		}
		res := &LedgerResult{Stream: main, StepsSource: source, Steps: spans}
		newLedgerWalk(ctx, res).run()
		ctx.SetCount(MetricLedgerRankStepsCount, len(res.Steps))
		return res, nil
	},
}

// LedgerOf is the ledger pass's result on a rank.
var LedgerOf = RankResultOf[*LedgerResult](LedgerPass)

// ledgerSpans are the rank's steps, without causes: ProfilerStep#N (each
// to the next one's start, the last to its end), else the layer period's
// steps (stepStarts), the first from the main stream's first task and the
// last to its last task's end.
func ledgerSpans(r *model.Rank, layers *LayersResult, main int32) ([]LedgerStep, string) {
	if len(r.Steps) > 0 {
		out := make([]LedgerStep, 0, len(r.Steps))
		for i, s := range r.Steps {
			end := s.End
			if i+1 < len(r.Steps) {
				end = r.Steps[i+1].Start
			}
			if end > s.Start {
				out = append(out, LedgerStep{Index: len(out), ID: s.ID, Start: s.Start, End: end})
			}
		}
		return out, StepsFromProfiler
	}
	starts, _ := stepStarts(r, layers)
	if len(starts) == 0 {
		return nil, ""
	}
	first, last := int64(-1), int64(-1)
	for i := range r.Tasks {
		t := &r.Tasks[i]
		if r.Stream(t) != main {
			continue
		}
		if first < 0 {
			first = t.Start
		}
		last = max(last, r.End(t))
	}
	bounds := make([]int64, 0, len(starts)+2)
	bounds = append(bounds, first)
	for _, s := range starts {
		if s > bounds[len(bounds)-1] {
			bounds = append(bounds, s)
		}
	}
	if last > bounds[len(bounds)-1] {
		bounds = append(bounds, last)
	}
	out := make([]LedgerStep, 0, len(bounds)-1)
	for i := 0; i+1 < len(bounds); i++ {
		out = append(out, LedgerStep{Index: i, ID: -1, Start: bounds[i], End: bounds[i+1]})
	}
	return out, StepsFromPeriod
}

// ledgerWalk is one walk over the main stream's tasks, step by step, that
// gives each nanosecond of a step to a cause.
type ledgerWalk struct {
	r      *model.Rank
	res    *LedgerResult
	main   int32
	stages *nameOpMemo[Cause]
	labels *typeGroupLabels
	// waits are the main stream's EVENT_WAITs with what they waited for,
	// in task order (names: the awaited names); wi is the next to match.
	waits []mainWait
	names []string
	wi    int
	// launches are the rank's links with their ops' ends
	// (r.TaskLaunches) when their tasks are in order, else the main
	// stream's task links in task order; li is the next to match.
	launches model.Launches
	li       int
	// hccl is the next collective (r.HCCL is in start order) that may
	// overlap the walk's position.
	hccl  int
	eager bool // no Model IDs (a Kineto trace): every kernel is an eager launch
	// the step being walked
	st     *LedgerStep
	sync   int              // the step's next SyncOp whose arrival the walk has not passed
	since  [NumCauses]int64 // causes since the previous exchange of the step
	phases [2]bool          // decode, prefill seen in the step
	// syncOps are the step's SyncOps while the walk is in it (encoded
	// into its Sync at its end), enc the buffer they are encoded in
	syncOps     []SyncOp
	enc         []byte
	hstep, hend int // the step's collectives: r.HCCL[hstep:hend]
	// the last compute kernel's task type, and whether it is AI_CPU
	taskType model.Sym
	aicpu    bool
}

func newLedgerWalk(ctx *Context, res *LedgerResult) *ledgerWalk {
	r := ctx.Rank
	w := &ledgerWalk{r: r, res: res, main: res.Stream, stages: newNameOpMemo(r, ledgerStage), labels: newTypeGroupLabels(r),
		eager: r.Format == model.FormatTorchNPUChrome}
	if wp := WaitPairsOf(ctx); wp != nil {
		w.waits, w.names = wp.main, wp.names
	}
	w.launches = r.TaskLaunches()
	last := int32(-1)
	for i := range w.launches.Len() {
		t := w.launches.Task(i)
		if t < 0 {
			continue
		}
		if t < last {
			w.launches = mainLaunches(r, w.main, w.launches)
			break
		}
		last = t
	}
	return w
}

// mainLaunches are the launches of the main stream's tasks, in task
// order.
func mainLaunches(r *model.Rank, main int32, all model.Launches) model.Launches {
	type launch struct {
		task int32
		end  int64
	}
	var out []launch
	for i := range all.Len() {
		if t := all.Task(i); t >= 0 && r.Stream(&r.Tasks[t]) == main {
			out = append(out, launch{t, all.End(i)})
		}
	}
	// the host launches a stream's ops in order: nearly always sorted
	if byTask := func(a, b launch) int { return cmp.Compare(a.task, b.task) }; !slices.IsSortedFunc(out, byTask) {
		slices.SortFunc(out, byTask)
	}
	task, end := make([]int32, len(out)), make([]int64, len(out))
	for i, l := range out {
		task[i], end[i] = l.task, l.end
	}
	return model.Launched(task, end)
}

// ledgerStage is a compute kernel's cause by its stage. It reads only the
// task's extras (r.Name(t), r.OpType(t); nameOpMemo relies on it): the
// caller makes an AI_CPU kernel's cause CauseAICPU.
func ledgerStage(r *model.Rank, t *model.DeviceTask) Cause {
	s := r.Str(r.OpType(t))
	if s == "" {
		s = r.Str(r.Name(t))
	}
	switch moeRole(r, t) {
	case roleGMM:
		return CauseExperts
	case roleRouting, roleCumsum, roleGating, rolePermute:
		return CauseRouting
	case roleDispatchMC2, roleFusedMC2, roleDispatch:
		return CauseDispatchCombine
	case roleCombine:
		if strings.HasPrefix(s, "MoeTokenUnpermute") || strings.HasPrefix(s, "MoeFinalizeRouting") {
			return CauseRouting
		}
		return CauseDispatchCombine
	}
	if strings.Contains(s, "Attention") {
		return CauseAttention
	}
	return CauseComputeOther
}

func (w *ledgerWalk) run() {
	r := w.r
	i := 0 // next task of r.Tasks to look at
	prev := -1
	for si := range w.res.Steps {
		st := &w.res.Steps[si]
		w.beginStep(st)
		cur := st.Start
		first := true
		// a main-stream task begun in the previous step runs on into this one
		if prev >= 0 && r.End(&r.Tasks[prev]) > cur {
			first = false
			cur = w.task(prev, cur, st.End)
		}
		for ; i < len(r.Tasks) && r.Tasks[i].Start < st.End; i++ {
			t := &r.Tasks[i]
			if r.Stream(t) != w.main {
				continue
			}
			prev = i
			if t.Start < st.Start {
				// before the first step: only what runs on into it
				if r.End(t) > cur {
					first = false
					cur = w.task(i, cur, st.End)
				}
				continue
			}
			if t.Start > cur {
				if first {
					w.add(CauseBetweenSteps, cur, t.Start)
				} else {
					w.idle(cur, t.Start, i)
				}
			}
			first = false
			cur = w.task(i, max(cur, t.Start), st.End)
		}
		if cur < st.End {
			w.add(CauseBetweenSteps, cur, st.End)
		}
		w.endStep()
	}
}

func (w *ledgerWalk) beginStep(st *LedgerStep) {
	r := w.r
	w.st, w.sync, w.since, w.phases = st, 0, [NumCauses]int64{}, [2]bool{}
	// the step's collectives (its MC2 kernels follow as the walk meets them)
	for w.hstep < len(r.HCCL) && r.HCCL[w.hstep].Start < st.Start {
		w.hstep++
	}
	w.hend = w.hstep
	for h := w.hstep; h < len(r.HCCL) && r.HCCL[h].Start < st.End; h++ {
		w.hend = h + 1
		op := &r.HCCL[h]
		w.addSync(w.labels.of(op), false, op.Dur)
	}
}

// addSync appends a SyncOp to the step's.
func (w *ledgerWalk) addSync(label string, kernel bool, dur int64) int32 {
	w.syncOps = append(w.syncOps, SyncOp{Label: w.label(label), Kernel: kernel, Dur: dur})
	return int32(len(w.syncOps) - 1)
}

func (w *ledgerWalk) label(s string) uint16 {
	for k, x := range w.res.Labels {
		if x == s {
			return uint16(k)
		}
	}
	if len(w.res.Labels) == 1<<16-1 {
		return 1<<16 - 2 // (never: a rank runs a few kinds of exchange)
	}
	w.res.Labels = append(w.res.Labels, keepName(s))
	return uint16(len(w.res.Labels) - 1)
}

func (w *ledgerWalk) endStep() {
	st := w.st
	w.arrive(st.End) // the collectives that began after the stream's last task
	switch {
	case w.phases[0] && w.phases[1]:
		st.Phase = PhaseMixed
	case w.phases[0]:
		st.Phase = PhaseDecode
	case w.phases[1]:
		st.Phase = PhasePrefill
	}
	w.enc = st.setSync(w.syncOps, w.enc)
	w.syncOps = w.syncOps[:0]
}

// add gives [a, b) to cause c.
func (w *ledgerWalk) add(c Cause, a, b int64) {
	if b <= a {
		return
	}
	w.st.Causes[c] += b - a
	if c != CauseBetweenSteps {
		w.since[c] += b - a
	}
}

// arrive marks the ops the walk reached by time at: what the rank did
// since its previous exchange is what made it late to them.
func (w *ledgerWalk) arrive(at int64) {
	for w.sync < w.hend-w.hstep && w.r.HCCL[w.hstep+w.sync].Start <= at {
		w.syncOps[w.sync].Late = w.lateCause()
		w.sync++
	}
}

func (w *ledgerWalk) lateCause() Cause {
	best := CauseComputeOther
	for c := range NumCauses {
		if w.since[c] > w.since[best] {
			best = c
		}
	}
	w.since = [NumCauses]int64{}
	return best
}

// expose gives [a, b) to cause c as time spent in or waiting for sync op
// k, which started at start.
func (w *ledgerWalk) expose(c Cause, k int32, start, a, b int64) {
	if b <= a {
		return
	}
	w.add(c, a, b)
	// time in an exchange is not what made the rank late to the next
	w.since[c] -= b - a
	if k < 0 {
		return
	}
	op := &w.syncOps[k]
	from, to := offset32(a-start), offset32(b-start)
	if op.Exposed == 0 || from < op.ExpFrom {
		op.ExpFrom = from
	}
	if op.Exposed == 0 || to > op.ExpTo {
		op.ExpTo = to
	}
	op.Exposed = offset32(int64(op.Exposed) + b - a)
}

// offset32 is d saturated to an int32.
func offset32(d int64) int32 {
	return int32(min(max(d, -1<<31), 1<<31-1))
}

// addCollective gives [a, b) to the collective label.
func (w *ledgerWalk) addCollective(label string, k int32, a, b int64) {
	if b <= a {
		return
	}
	var start int64
	if k >= 0 {
		start = w.r.HCCL[w.hstep+int(k)].Start
	}
	w.expose(CauseCollective, k, start, a, b)
	st := w.st
	for j := range st.Collectives {
		if st.Collectives[j].Name == label {
			st.Collectives[j].Ns += b - a
			return
		}
	}
	st.Collectives = append(st.Collectives, LedgerEntry{Name: label, Ns: b - a})
}

// task gives the part [a, min(end, hi)) of task i to its cause and
// returns where it ends.
func (w *ledgerWalk) task(i int, a, hi int64) int64 {
	t := &w.r.Tasks[i]
	b := min(w.r.End(t), hi)
	if b <= a {
		return a
	}
	w.arrive(a)
	switch w.r.Class(t) {
	case model.ClassCompute:
		c := w.stages.get(t)
		if tt := w.r.TaskType(t); tt != w.taskType {
			w.taskType, w.aicpu = tt, w.r.Str(tt) == "AI_CPU"
		}
		if w.aicpu {
			c = CauseAICPU
		}
		switch c {
		case CauseAttention:
			w.phase(t)
		case CauseDispatchCombine:
			if t.Start >= w.st.Start {
				// an exchange: the cluster pass matches it across the ep group
				k := w.addSync(w.r.Str(w.opName(t)), true, w.r.Dur(t))
				w.syncOps[k].Late = w.lateCause()
				w.expose(c, k, t.Start, a, b)
				return b
			}
		}
		w.add(c, a, b)
	case model.ClassEventWait:
		w.wait(i, a, b)
	case model.ClassCommKernel:
		h, k := w.collectiveAt(a, b)
		label := "?@?"
		if h >= 0 {
			label = w.labels.of(&w.r.HCCL[h])
		}
		w.addCollective(label, k, a, b)
	default:
		w.add(CauseComputeOther, a, b)
	}
	return b
}

func (w *ledgerWalk) opName(t *model.DeviceTask) model.Sym {
	if op := w.r.OpType(t); w.r.Str(op) != "" {
		return op
	}
	return w.r.Name(t)
}

// wait gives the EVENT_WAIT i's [a, b) to what it waited for.
func (w *ledgerWalk) wait(i int, a, b int64) {
	for w.wi < len(w.waits) && int(w.waits[w.wi].task) < i {
		w.wi++
	}
	if w.wi == len(w.waits) || int(w.waits[w.wi].task) != i {
		w.add(CauseIdle, a, b)
		return
	}
	p := &w.waits[w.wi]
	name := w.names[p.name]
	switch awaitKinds[p.kind] {
	case AwaitCollective:
		_, k := w.collectiveAt(a, b+waitTolNs)
		w.addCollective(name, k, a, b)
	case AwaitKernel, AwaitMemcpy:
		w.add(CauseStreamWait, a, b)
		st := w.st
		for j := range st.Streams {
			if e := &st.Streams[j]; e.Stream == p.stream && e.Kernel == name {
				e.Ns += b - a
				return
			}
		}
		st.Streams = append(st.Streams, StreamWaitEntry{Stream: p.stream, Kernel: keepName(name), Ns: b - a})
	default:
		// no record on the device ended it
		w.add(CauseIdle, a, b)
	}
}

// collectiveAt is the collective that ends last within [a, b] among those
// that overlap it (else the one that overlaps it most), and its SyncOp in
// the step (-1 when it began before the step); -1, -1 when none overlaps.
func (w *ledgerWalk) collectiveAt(a, b int64) (int, int32) {
	r := w.r
	for w.hccl < len(r.HCCL) && r.HCCL[w.hccl].End() < a-waitTolNs {
		w.hccl++
	}
	best, bestEnd := -1, int64(-1)
	for h := w.hccl; h < len(r.HCCL) && r.HCCL[h].Start < b; h++ {
		op := &r.HCCL[h]
		if op.End() <= a {
			continue
		}
		if e := op.End(); e <= b && e > bestEnd {
			best, bestEnd = h, e
		}
	}
	if best < 0 {
		var most int64
		for h := w.hccl; h < len(r.HCCL) && r.HCCL[h].Start < b; h++ {
			op := &r.HCCL[h]
			if ov := min(op.End(), b) - max(op.Start, a); ov > most {
				best, most = h, ov
			}
		}
	}
	if best < 0 {
		return -1, -1
	}
	return best, w.syncOf(best)
}

// syncOf is collective h's SyncOp in the step, -1 when it began outside
// it (the step's collectives are its first SyncOps, in order).
func (w *ledgerWalk) syncOf(h int) int32 {
	if h < w.hstep || h >= w.hend {
		return -1
	}
	return int32(h - w.hstep)
}

// idle gives the main stream's idle [a, b) before task next: to the
// collectives that ran meanwhile, to the host when it launched the next
// eager kernel after the idle began, else to idle.
func (w *ledgerWalk) idle(a, b int64, next int) {
	r := w.r
	for w.hccl < len(r.HCCL) && r.HCCL[w.hccl].End() < a-waitTolNs {
		w.hccl++
	}
	for h := w.hccl; h < len(r.HCCL) && r.HCCL[h].Start < b && a < b; h++ {
		op := &r.HCCL[h]
		if op.End() <= a {
			continue
		}
		if op.Start > a {
			w.idleHost(a, op.Start, next)
			a = op.Start
		}
		e := min(op.End(), b)
		w.addCollective(w.labels.of(op), w.syncOf(h), a, e)
		a = e
	}
	w.idleHost(a, b, next)
}

func (w *ledgerWalk) idleHost(a, b int64, next int) {
	if b <= a {
		return
	}
	t := &w.r.Tasks[next]
	if w.eager || w.r.ModelID(t) == SingleOpModelID {
		for w.li < w.launches.Len() && int(w.launches.Task(w.li)) < next {
			w.li++
		}
		if w.li < w.launches.Len() && int(w.launches.Task(w.li)) == next && w.launches.End(w.li) > a {
			w.add(CauseHostGap, a, b)
			return
		}
	}
	w.add(CauseIdle, a, b)
}

// phase notes an attention kernel's phase from its first input's leading
// dimension, the tokens it attends for (stepPhases' rule).
func (w *ledgerWalk) phase(t *model.DeviceTask) {
	if !isDecodeAttention(w.r, t) {
		return
	}
	n, ok := model.FirstDim(w.r.Str(w.r.InputShapes(t)))
	switch {
	case !ok || n <= 0:
	case n <= DecodeMaxTokens:
		w.phases[0] = true
	default:
		w.phases[1] = true
	}
}
