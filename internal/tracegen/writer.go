package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Layer sort indexes of the packed device pids (docs/formats.md#device-pids, as in the
// S25 sample): pid = (python_pid << 10) | (index << 5) | device.
const (
	idxCANN     = 7
	idxHardware = 13
	idxFreq     = 14
	idxHCCL     = 15
	idxHBM      = 17
	idxOverlap  = 23
	numPlanes   = 4 // HCCL "Plane k" threads used by the small tasks
)

// rankInfo is the static identity of one rank's capture.
type rankInfo struct {
	rank     int
	pid      int64 // Python process id
	device   int
	dir      string        // *_ascend_pt folder name
	groups   []model.Group // parallel_group_info of this rank
	coll     [numCollGroups]*model.Group
	usedColl [numCollGroups]bool // groups that carry collectives
	collTid  [numCollGroups]int  // HCCL thread of each used group
	nColl    int
}

func (ri *rankInfo) packed(idx int) int64 { return ri.pid<<10 | int64(idx)<<5 | int64(ri.device) }

// opName is the HCCL big-op name `{opType}_{hash3}_{index}_{iteration}`.
func (ri *rankInfo) opName(t *devTask) string {
	return t.c.opType + "_" + ri.coll[t.c.group].HashSuffix + "_" + strconv.Itoa(t.hidx) + "_1"
}

// rankOut writes one rank's files while the passes run.
type rankOut struct {
	s    Scenario
	info *rankInfo
	acc  *truthAcc

	tw    *bufio.Writer // trace_view.json
	nEv   int
	b     []byte
	kd    *bufio.Writer // kernel_details.csv (nil: not written)
	cj    *bufio.Writer // communication.json (nil: not written)
	kb    []byte        // kernel_details row scratch
	kdN   int           // kernel_details rows written
	kdEnd int64         // end of the previous kernel_details row

	cjSteps int        // step blocks written to communication.json
	cjOps   int        // ops written in the open block
	cjTot   commTotals // totals of the open block
	shapes  map[shapeKey]shapes
	ev      []evRef
	ov      []ovEvent
	winSet  bool  // the first step's first task fixed the window start
	freeAt  int64 // end of the last computing∪communication segment
	lastEnd int64 // latest end of any device task so far
	lastPS  int64 // end of the last ProfilerStep (host)

	// Layout-specific outputs (layouts.go).
	lay        Layout
	hcclProc   string              // process name of the HCCL big ops
	tt         *bufio.Writer       // task_time_*.csv (msprof)
	commStat   map[string]*statAcc // communication_statistic by op type
	apiStat    map[string]*statAcc // api_statistic by API name
	db         *dbOut              // ascend_pytorch_profiler_{rank}.db
	sliceEvery int                 // msprof_slice_*: events per slice (0: one file)
	nextSlice  func() (io.Writer, error)
	inSlice    int   // events in the current slice
	err        error // first write error (slices)
}

type shapeKey struct {
	id, tokens, routed int
}

// evRef is one event of a step's device section, sorted by time.
type evRef struct {
	ts   int64
	seq  int32
	kind uint8
	i    int32
}

const (
	evTask uint8 = iota
	evOverlap
	evCounter
	evCANN
)

// ovEvent is one Overlap Analysis slice.
type ovEvent struct {
	tid        int
	start, dur int64
}

var overlapNames = [4]string{"Computing", "Communication", "Communication(Not Overlapped)", "Free"}

func newRankOut(s Scenario, info *rankInfo, trace io.Writer, kd, cj io.Writer) *rankOut {
	o := &rankOut{s: s, info: info, acc: newTruthAcc(info.rank, s), shapes: map[shapeKey]shapes{}, lay: LayoutTorchNPUText, hcclProc: "HCCL"}
	o.tw = bufio.NewWriterSize(trace, 1<<20)
	if kd != nil {
		o.kd = bufio.NewWriterSize(kd, 1<<18)
	}
	if cj != nil {
		o.cj = bufio.NewWriterSize(cj, 1<<18)
	}
	o.b = append(o.b, '[')
	return o
}

// ev starts a new trace event (separator handling).
func (o *rankOut) ev0() {
	if o.sliceEvery > 0 && o.inSlice >= o.sliceEvery {
		o.cutSlice()
	}
	if o.inSlice > 0 {
		o.b = append(o.b, ", "...)
	}
	o.nEv++
	o.inSlice++
}

// cutSlice closes the current msprof_slice_* file and starts the next.
func (o *rankOut) cutSlice() {
	o.b = append(o.b, ']')
	if _, err := o.tw.Write(o.b); err != nil && o.err == nil {
		o.err = err
	}
	if err := o.tw.Flush(); err != nil && o.err == nil {
		o.err = err
	}
	w, err := o.nextSlice()
	if err != nil {
		if o.err == nil {
			o.err = err
		}
		w = io.Discard
	}
	o.tw = bufio.NewWriterSize(w, 1<<20)
	o.b = append(o.b[:0], '[')
	o.inSlice = 0
}

// spill writes the buffered bytes once they exceed 64 KiB.
func (o *rankOut) spill() {
	if len(o.b) > 64<<10 {
		o.tw.Write(o.b)
		o.b = o.b[:0]
	}
}

func (o *rankOut) str(k, v string) {
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, `": "`...)
	o.b = append(o.b, v...)
	o.b = append(o.b, '"')
}

func (o *rankOut) num(k string, v int64) {
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, `": `...)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *rankOut) ts(k string, ns int64) {
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, `": "`...)
	o.b = appendTS(o.b, ns)
	o.b = append(o.b, '"')
}

func (o *rankOut) sep() { o.b = append(o.b, ", "...) }

// head starts an event: open (the opening brace, with any keys that come
// before the name), then name, pid and tid.
func (o *rankOut) head(open, name string, pid, tid int64) {
	o.ev0()
	o.b = append(o.b, open...)
	o.str("name", name)
	o.sep()
	o.num("pid", pid)
	o.sep()
	o.num("tid", tid)
}

// span appends the ts and dur keys of a complete ("X") event.
func (o *rankOut) span(ts, dur int64) {
	o.sep()
	o.ts("ts", ts)
	o.b = append(o.b, `, "dur": `...)
	o.b = appendDur(o.b, dur)
}

// ---------------------------------------------------------------- pass 1

// writeHost emits the Python cpu_op slices of one step (ProfilerStep#N
// first when enabled).
func (o *rankOut) writeHost(st *rankStep) {
	o.lastPS = st.psEnd
	if o.db != nil {
		o.db.host(st, o.s.ProfilerSteps)
	}
	if o.lay == LayoutMsprofText {
		return // msprof has no framework events
	}
	pid := o.info.pid
	if o.s.ProfilerSteps {
		o.cpuOp("ProfilerStep#"+strconv.Itoa(st.step), pid, st.psStart, st.psEnd-st.psStart)
	}
	for i := range st.host {
		h := &st.host[i]
		o.cpuOp(h.name, pid, h.ts, h.dur)
	}
	o.lastPS = st.psEnd
}

func (o *rankOut) cpuOp(name string, pid, ts, dur int64) {
	o.head(`{"ph": "X", `, name, pid, pid)
	o.span(ts, dur)
	o.b = append(o.b, `, "cat": "cpu_op", "args": {"Sequence number": -1, "Fwd thread id": 0}}`...)
	o.spill()
}

// writePythonMeta emits the Python process metadata (after its slices, as
// torch_npu does).
func (o *rankOut) writePythonMeta() {
	if o.lay == LayoutMsprofText {
		return
	}
	pid := o.info.pid
	o.metaPy("process_name", pid, 0, `"name": "Python"`)
	o.metaPy("process_labels", pid, 0, `"labels": "CPU"`)
	o.metaPy("process_sort_index", pid, 0, `"sort_index": 0`)
	o.metaPy("thread_name", pid, pid, `"name": "Thread `+strconv.FormatInt(pid, 10)+`"`)
	o.metaPy("thread_sort_index", pid, pid, `"sort_index": `+strconv.FormatInt(pid, 10))
}

func (o *rankOut) metaPy(name string, pid, tid int64, args string) {
	o.head(`{"ph": "M", `, name, pid, tid)
	o.b = append(o.b, `, "args": {`...)
	o.b = append(o.b, args...)
	o.b = append(o.b, "}}"...)
}

// ---------------------------------------------------------------- pass 2

// writeDevice emits one step's device section (Ascend Hardware, HCCL, CANN,
// Overlap Analysis, counters), its kernel_details rows and
// communication.json entries, and folds it into the ground truth.
func (o *rankOut) writeDevice(st *rankStep) error {
	win, compute, comm, err := o.foldTasks(st)
	if err != nil {
		return err
	}
	bd := breakdown(win, compute, comm)
	if err := o.foldStep(st, win, bd); err != nil {
		return err
	}
	o.overlapSlices(bd)
	o.sortEvents(st)
	o.emitEvents(st)
	if o.kd != nil {
		o.writeKernelRows(st)
	}
	o.addStats(st)
	if o.db != nil {
		o.db.device(o, st)
	}
	if o.cj != nil {
		o.writeComm(st)
	}
	return nil
}

// foldTasks adds the step's tasks to the ground truth and returns the
// step's device window (compute kernels and HCCL big ops) with their
// compute and communication intervals.
func (o *rankOut) foldTasks(st *rankStep) (win interval, compute, comm []interval, err error) {
	first := true
	for i := range st.tasks {
		t := &st.tasks[i]
		end := t.start + t.dur
		o.lastEnd = max(o.lastEnd, end)
		o.addTaskTruth(t)
		switch t.kind {
		case tkKernel:
			compute = append(compute, interval{t.start, end})
		case tkHCCL:
			comm = append(comm, interval{t.start, end})
		default:
			if o.s.extremesWindow() && t.kind != tkPlaceholder {
				// current msprof: every other task but the profiler's
				// PROFILING_ENABLE/DISABLE bounds the window too
				o.acc.window(t.start, end)
			}
			continue
		}
		// the device window spans compute kernels and HCCL big ops
		o.acc.kernel(t.start, end)
		if t.start < st.psStart || t.start >= st.psEnd {
			return win, nil, nil, fmt.Errorf("tracegen: internal error: rank %d step %d task starts outside its ProfilerStep", o.info.rank, st.step)
		}
		if first || t.start < win.Start {
			win.Start = t.start
		}
		if first || end > win.End {
			win.End = end
		}
		first = false
	}
	return win, compute, comm, nil
}

// addTaskTruth adds one task's time to the ground-truth metrics.
func (o *rankOut) addTaskTruth(t *devTask) {
	switch t.kind {
	case tkKernel:
		o.acc.add("kernel.compute", t.dur)
		if t.k.taskType == "AI_CPU" {
			o.acc.add("kernel.aicpu", t.dur)
		}
		switch t.k.role {
		case roleRouting:
			o.acc.add("moe.routing", t.dur)
		case roleGMM:
			o.acc.add("moe.gmm", t.dur)
		case roleMoECumsum:
			o.acc.add("moe.cumsum", t.dur)
			if t.k.taskType == "AI_CPU" {
				o.acc.add("moe.cumsum.aicpu", t.dur)
			}
		}
	case tkSubtask:
		// its twin on an HCCL plane thread: the text layouts write it with
		// its transport type (the db layout has no plane tasks)
		if o.lay != LayoutTorchNPUDB {
			sdma := int64(0)
			if _, transport, _, _, _ := o.planeArgs(t); transport == "SDMA" {
				sdma = 1
			}
			o.acc.counts[MetricHCCLPlaneSDMACount] += sdma // present (0) once a plane task is written
			o.acc.counts[MetricHCCLPlaneRDMACount] += 0    // one node: no RDMA
		}
	case tkHCCL:
		group := o.info.coll[t.c.group].Name
		o.acc.add("hccl.total", t.dur)
		o.acc.add("hccl."+t.c.metric, t.dur)
		o.acc.add("hccl.group."+group, t.dur)
		o.acc.add("hccl.group."+group+"."+t.c.metric, t.dur)
	case tkEventWait:
		if t.awaits != nil {
			o.acc.waits = append(o.acc.waits, WaitTruth{Stream: t.stream, StartNs: t.start, Awaited: t.awaits.metric + "@" + o.info.coll[t.awaits.group].Name})
		}
		if t.awaitsKernel != nil {
			o.acc.waits = append(o.acc.waits, WaitTruth{Stream: t.stream, StartNs: t.start, Awaited: t.awaitsKernel.opType})
			// the compute stream (the main one) waiting for the side stream
			o.acc.sums[MetricEventWaitMainStreamKernelUs] += t.dur
		}
		o.acc.add("event_wait", t.dur)
		o.acc.add("event_wait.stream."+strconv.Itoa(t.stream), t.dur)
	}
}

// foldStep adds the step's overlap breakdown to the ground truth and its
// step_trace_time row.
func (o *rankOut) foldStep(st *rankStep, win interval, bd overlapBreakdown) error {
	if err := o.acc.addStep(bd); err != nil {
		return err
	}
	prep := int64(0)
	if o.s.ProfilerSteps {
		o.acc.steps = append(o.acc.steps, StepTruth{Step: st.step, ComputingUs: us(bd.computeNs), CommunicationUs: us(bd.commNs),
			CommunicationNotOverlappedUs: us(bd.notOvNs), FreeUs: us(bd.freeNs())})
		prep = win.Start - st.psStart
	}
	o.acc.rows = append(o.acc.rows, stepRow{step: strconv.Itoa(st.step), compute: bd.computeNs, notOv: bd.notOvNs,
		comm: bd.commNs, free: bd.freeNs(), stage: win.End - win.Start, preparing: prep})
	return nil
}

// overlapSlices fills o.ov with the step's Overlap Analysis slices: its
// segments plus the Free gaps since the previous computing∪communication
// segment.
func (o *rankOut) overlapSlices(bd overlapBreakdown) {
	o.ov = o.ov[:0]
	for tid, segs := range [][]interval{bd.compute, bd.comm, bd.notOverlapped} {
		for _, s := range segs {
			o.ov = append(o.ov, ovEvent{tid, s.Start, s.End - s.Start})
		}
	}
	if !o.winSet {
		o.freeAt = o.acc.win.start
		o.winSet = true
	}
	all := append(append([]interval{}, bd.compute...), bd.comm...)
	for _, s := range unionSegments(all) {
		if s.Start > o.freeAt {
			o.ov = append(o.ov, ovEvent{3, o.freeAt, s.Start - o.freeAt})
		}
		o.freeAt = max(o.freeAt, s.End)
	}
}

// sortEvents fills o.ev with the step's device events sorted by time
// (ties in the order added: counters, tasks, overlap slices, CANN).
func (o *rankOut) sortEvents(st *rankStep) {
	tasks := st.tasks
	o.ev = o.ev[:0]
	seq := int32(0)
	add := func(ts int64, kind uint8, i int) {
		o.ev = append(o.ev, evRef{ts, seq, kind, int32(i)})
		seq++
	}
	if len(tasks) > 0 {
		minTS := tasks[0].start
		for i := range tasks {
			minTS = min(minTS, tasks[i].start)
		}
		add(minTS, evCounter, 0)
	}
	for i := range tasks {
		add(tasks[i].start, evTask, i)
	}
	for i := range o.ov {
		add(o.ov[i].start, evOverlap, i)
	}
	if st.syncDur > 0 {
		add(st.syncTS, evCANN, 0)
	}
	sort.Slice(o.ev, func(i, j int) bool {
		if o.ev[i].ts != o.ev[j].ts {
			return o.ev[i].ts < o.ev[j].ts
		}
		return o.ev[i].seq < o.ev[j].seq
	})
}

// emitEvents writes the events sortEvents ordered.
func (o *rankOut) emitEvents(st *rankStep) {
	for _, e := range o.ev {
		switch e.kind {
		case evTask:
			o.writeTask(&st.tasks[e.i])
			if o.tt != nil {
				o.writeTaskTime(&st.tasks[e.i])
			}
		case evOverlap:
			o.writeOverlap(&o.ov[e.i])
		case evCounter:
			o.writeCounters(e.ts, st.step)
		case evCANN:
			o.writeCANN(st)
		}
		o.spill()
	}
}

// writeTask emits one device task (and the HCCL plane twin of a subtask).
func (o *rankOut) writeTask(t *devTask) {
	if t.kind == tkHCCL {
		o.writeHCCLOp(t)
		return
	}
	o.writeHardwareTask(t)
	if t.kind == tkSubtask {
		o.writePlaneTask(t)
	}
}

// writeHCCLOp emits an HCCL big op on its group's communication thread.
func (o *rankOut) writeHCCLOp(t *devTask) {
	ri := o.info
	o.head("{", ri.opName(t), ri.packed(idxHCCL), int64(ri.collTid[t.c.group]))
	o.span(t.start, t.dur)
	o.b = append(o.b, `, "args": {`...)
	o.num("connection_id", int64(t.conn))
	o.b = append(o.b, `, "model id": 4294967295, `...)
	o.str("data_type", t.c.dtype)
	o.sep()
	o.str("alg_type", t.c.alg)
	o.sep()
	o.num("count", int64(t.count))
	o.b = append(o.b, `}, "ph": "X"}`...)
}

// writeHardwareTask emits a task on its Ascend Hardware stream.
func (o *rankOut) writeHardwareTask(t *devTask) {
	name, taskType := t.name, t.taskType
	mid := uint32(4294967295)
	if t.kind == tkKernel {
		name, taskType, mid = t.k.name, t.k.taskType, t.modelID
	}
	o.head("{", name, o.info.packed(idxHardware), int64(t.stream))
	o.span(t.start, t.dur)
	o.b = append(o.b, `, "args": {"Model Id": `...)
	o.b = strconv.AppendUint(o.b, uint64(mid), 10)
	o.b = append(o.b, `, `...)
	o.str("Task Type", taskType)
	o.sep()
	o.num("Physic Stream Id", int64(t.stream))
	o.sep()
	o.num("Task Id", int64(t.taskID))
	o.b = append(o.b, `, "Batch Id": 0, `...)
	o.num("Subtask Id", t.subID)
	o.sep()
	o.num("connection_id", int64(t.conn))
	o.b = append(o.b, `}, "ph": "X"}`...)
}

// writePlaneTask emits a subtask's twin on its HCCL plane thread (the same
// device work).
func (o *rankOut) writePlaneTask(t *devTask) {
	ri := o.info
	o.head("{", t.planeName, ri.packed(idxHCCL), int64(ri.nColl+t.plane))
	o.span(t.start, t.dur)
	o.b = append(o.b, `, "args": {`...)
	notify, transport, link, dtype, est := o.planeArgs(t)
	o.str("notify_id", notify)
	o.b = append(o.b, `, "duration estimated(us)": `...)
	o.b = append(o.b, est...)
	o.sep()
	o.num("stream id", int64(t.stream))
	o.sep()
	o.num("task id", int64(t.taskID))
	o.sep()
	o.num("context id", t.subID)
	o.sep()
	o.str("task type", t.planeName)
	o.sep()
	o.num("src rank", int64(ri.coll[t.c.group].Rank))
	o.sep()
	o.num("dst rank", int64(t.peer))
	o.sep()
	o.str("transport type", transport)
	o.sep()
	o.num("size(Byte)", t.size)
	o.sep()
	o.str("data type", dtype)
	o.sep()
	o.str("link type", link)
	o.b = append(o.b, `, "bandwidth(GB/s)": `...)
	bw := 0.0
	if t.size > 0 && t.dur > 0 {
		bw = float64(t.size) / float64(t.dur)
	}
	o.b = append(o.b, pyFloat(bw)...)
	o.b = append(o.b, `, "model id": 4294967295}, "ph": "X"}`...)
}

// planeArgs are the per-task-type args of a plane task: notify id,
// transport, link and data type, and the estimated duration.
func (o *rankOut) planeArgs(t *devTask) (notify, transport, link, dtype, est string) {
	notify = "18446744073709551615"
	transport, link, dtype = "SDMA", "HCCS", t.c.dtype
	switch t.planeName {
	case "Notify_Wait":
		return strconv.Itoa(60 + 8*t.peer), "LOCAL", "INVALID_TYPE", "INVALID_TYPE", "0.02"
	case "Notify_Record":
		return strconv.FormatInt(int64(t.peer)<<32|int64(64+t.peer), 10), transport, "INVALID_TYPE", "INVALID_TYPE", "1"
	case "Memcpy":
		if t.peer == o.info.coll[t.c.group].Rank {
			link = "ON_CHIP"
		}
		dtype = "INVALID_TYPE"
	}
	return notify, transport, link, dtype, pyFloat(float64(t.size) / 19e3)
}

func (o *rankOut) writeOverlap(e *ovEvent) {
	o.head("{", overlapNames[e.tid], o.info.packed(idxOverlap), int64(e.tid))
	o.span(e.start, e.dur)
	o.b = append(o.b, `, "ph": "X"}`...)
}

// writeCounters emits the counter samples parsers must skip.
func (o *rankOut) writeCounters(ts int64, step int) {
	counter := func(name string, idx int, args string) {
		o.ev0()
		o.b = append(o.b, '{')
		o.str("name", name)
		o.sep()
		o.ts("ts", ts)
		o.sep()
		o.num("pid", o.info.packed(idx))
		o.b = append(o.b, `, "tid": 0, "args": {`...)
		o.b = append(o.b, args...)
		o.b = append(o.b, `}, "ph": "C"}`...)
	}
	counter("AI Core Freq", idxFreq, `"MHz": 1800`)
	rd := 18000 + (ts/1000+int64(step)*37)%9000
	counter("HBM 0/Read", idxHBM, `"Read(MB/s)": `+strconv.FormatInt(rd, 10)+".0")
	counter("HBM 0/Write", idxHBM, `"Write(MB/s)": `+strconv.FormatInt(rd/3, 10)+".0")
}

// writeCANN emits the host-side stream synchronisation of the step.
func (o *rankOut) writeCANN(st *rankStep) {
	o.ev0()
	o.b = append(o.b, `{"name": "AscendCL@aclrtSynchronizeStream", `...)
	o.num("pid", o.info.packed(idxCANN))
	o.sep()
	o.num("tid", o.info.pid)
	o.span(st.syncTS, st.syncDur)
	o.b = append(o.b, `, "args": {`...)
	o.num("Thread Id", o.info.pid)
	o.b = append(o.b, `, "Mode": "ACL_RTS", "level": "acl", "id": "aclrtSynchronizeStream", "item_id": "0", `...)
	o.num("connection_id", int64(st.syncConn))
	o.b = append(o.b, `}, "ph": "X"}`...)
}

// finishDevice emits the trailing Free slice and, when meta is true, the
// device-side process and thread metadata after the device slices (see
// Scenario.DeviceMetaFirst).
func (o *rankOut) finishDevice(meta bool) {
	if o.winSet && o.acc.win.end > o.freeAt {
		o.writeOverlap(&ovEvent{3, o.freeAt, o.acc.win.end - o.freeAt})
		if o.db != nil {
			o.db.overlap(o, &ovEvent{3, o.freeAt, o.acc.win.end - o.freeAt})
		}
	}
	if meta {
		o.writeDeviceMeta()
	}
	o.spill()
}

// writeDeviceMeta emits the device-side process and thread metadata.
func (o *rankOut) writeDeviceMeta() {
	ri := o.info
	meta := func(pid, tid int64, name, args string) {
		o.head("{", name, pid, tid)
		o.b = append(o.b, `, "args": {`...)
		o.b = append(o.b, args...)
		o.b = append(o.b, `}, "ph": "M"}`...)
	}
	proc := func(idx int, name, label string) {
		pid := ri.packed(idx)
		meta(pid, 0, "process_name", `"name": "`+name+`"`)
		meta(pid, 0, "process_labels", `"labels": "`+label+`"`)
		meta(pid, 0, "process_sort_index", `"sort_index": `+strconv.Itoa(idx))
	}
	threads := func(idx int, tids []int64, names []string) {
		pid := ri.packed(idx)
		for i, t := range tids {
			meta(pid, t, "thread_name", `"name": "`+names[i]+`"`)
			meta(pid, t, "thread_sort_index", `"sort_index": `+strconv.FormatInt(t, 10))
		}
	}
	// Ascend Hardware: streams in use.
	hw := ri.packed(idxHardware)
	meta(hw, 0, "process_name", `"name": "Ascend Hardware"`)
	streams := []int64{streamPlaceholder, streamCompute, streamTP}
	if ri.usedColl[grpEP] {
		streams = append(streams, streamEP)
	}
	var sn []string
	for _, s := range streams {
		sn = append(sn, "Stream "+strconv.FormatInt(s, 10))
	}
	threads(idxHardware, streams, sn)
	meta(hw, 0, "process_labels", `"labels": "NPU"`)
	meta(hw, 0, "process_sort_index", `"sort_index": 13`)
	// HCCL: one "Group g Communication" thread per used group, then planes.
	var ht []int64
	var hn []string
	for g := 0; g < numCollGroups; g++ {
		if ri.usedColl[g] {
			ht = append(ht, int64(ri.collTid[g]))
			hn = append(hn, fmt.Sprintf("Group %d Communication", ri.collTid[g]))
		}
	}
	for p := 0; p < numPlanes; p++ {
		ht = append(ht, int64(ri.nColl+p))
		hn = append(hn, fmt.Sprintf("Plane %d", p))
	}
	proc(idxHCCL, o.hcclProc, "NPU")
	threads(idxHCCL, ht, hn)
	proc(idxCANN, "CANN", "CPU")
	threads(idxCANN, []int64{ri.pid}, []string{"Thread " + strconv.FormatInt(ri.pid, 10)})
	proc(idxFreq, "AI Core Freq", "NPU")
	proc(idxHBM, "HBM", "NPU")
	proc(idxOverlap, "Overlap Analysis", "NPU")
	threads(idxOverlap, []int64{0, 1, 2, 3}, overlapNames[:])
	o.spill()
}

// ---------------------------------------------------------------- pass 3

// writeFlows emits the torch_to_npu flow pairs of one step: `s` on the
// launching cpu_op, `f` on the device task (or HCCL big op); id = device
// start in ns.
func (o *rankOut) writeFlows(st *rankStep) {
	if o.lay == LayoutMsprofText {
		return
	}
	ri := o.info
	for i := range st.host {
		h := &st.host[i]
		if h.task < 0 {
			continue
		}
		t := &st.tasks[h.task]
		pid, tid := ri.packed(idxHardware), int64(t.stream)
		if t.kind == tkHCCL {
			pid, tid = ri.packed(idxHCCL), int64(ri.collTid[t.c.group])
		}
		for _, ph := range []string{"s", "f"} {
			o.ev0()
			o.b = append(o.b, `{"ph": "`...)
			o.b = append(o.b, ph...)
			o.b = append(o.b, `", "bp": "e", "name": "torch_to_npu", `...)
			o.num("id", t.start)
			o.sep()
			p, d, ts := pid, tid, t.start
			if ph == "s" {
				p, d, ts = ri.pid, ri.pid, h.ts
			}
			o.num("pid", p)
			o.sep()
			o.num("tid", d)
			o.sep()
			o.ts("ts", ts)
			o.b = append(o.b, `, "cat": "async_npu"}`...)
		}
		o.spill()
	}
}

// closeTrace ends the JSON array and flushes the writers.
func (o *rankOut) closeTrace() error {
	o.b = append(o.b, ']')
	if _, err := o.tw.Write(o.b); err != nil {
		return err
	}
	if o.err != nil {
		return o.err
	}
	o.b = o.b[:0]
	if err := o.tw.Flush(); err != nil {
		return err
	}
	if o.kd != nil {
		if err := o.kd.Flush(); err != nil {
			return err
		}
	}
	if o.cj != nil {
		o.closeComm()
		if err := o.cj.Flush(); err != nil {
			return err
		}
	}
	if o.tt != nil {
		o.writeProfilingDisable()
		if err := o.tt.Flush(); err != nil {
			return err
		}
	}
	return nil
}
