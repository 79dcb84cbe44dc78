// Package model is npuprof's normalized, per-rank view of an Ascend profile.
//
// Parsers (package parser and its readers) fill a Rank; analysis passes read
// only Ranks. Nothing here reads files. All times are int64 nanoseconds since
// the Unix epoch (wall clock), parsed from the profiler's decimal text and
// never routed through float64.
package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Format names the kind of profiler output a rank was read from. The values
// appear in the JSON document (`input.formats`) and are a public contract.
type Format string

// Known input formats.
const (
	FormatTorchNPUText Format = "torch_npu_text"
	FormatTorchNPUDB   Format = "torch_npu_db"
	FormatMsprofText   Format = "msprof_text"
	FormatMsprofDB     Format = "msprof_db"
	// FormatMindSporeText is MindSpore 2.3+'s *_ascend_ms folder, whose
	// ASCEND_PROFILER_OUTPUT has torch_npu's text files (docs/formats.md).
	FormatMindSporeText Format = "mindspore_text"
	// FormatTorchNPUChrome is a Kineto Chrome trace of torch.profiler with
	// torch_npu ({worker}.{ns}.pt.trace.json, an object with traceEvents
	// whose device process is "NPU").
	FormatTorchNPUChrome Format = "torch_npu_chrome"
)

// TaskClass is npuprof's classification of a device task. Passes select
// tasks by class; the table that maps task types and names to classes lives
// in classify.go so parsers, the generator and tests share one definition.
type TaskClass uint8

// Task classes.
const (
	// ClassOther is a device task npuprof does not attribute (unknown type).
	ClassOther TaskClass = iota
	// ClassCompute is a task of a compute op: a row kernel_details.csv lists
	// that is not a collective (AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV,
	// AI_CPU, DSA_SQE, ...). These make up "Computing".
	ClassCompute
	// ClassCommKernel is a collective that runs as a kernel (names with
	// AicpuKernel / AivKernel). It is communication, never Computing.
	ClassCommKernel
	// ClassEventWait is an EVENT_WAIT task: the stream sat blocked.
	ClassEventWait
	// ClassEventRecord is an EVENT_RECORD task.
	ClassEventRecord
	// ClassMemcpy is a memory copy task (MEMCPY_ASYNC, PCIE_DMA_SQE, SDMA_SQE).
	ClassMemcpy
	// ClassCommSubtask is an HCCL hardware subtask (Notify Wait, Notify
	// Record, Write Value, SDMA): the same work as the HCCL big op, never
	// counted on top of it.
	ClassCommSubtask
	// ClassPlaceholder is a profiler or runtime placeholder
	// (PLACE_HOLDER_SQE, PROFILING_ENABLE/DISABLE).
	ClassPlaceholder
)

var classNames = [...]string{"other", "compute", "comm_kernel", "event_wait", "event_record", "memcpy", "comm_subtask", "placeholder"}

func (c TaskClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// DeviceTask is one task executed on the device (one X event of the
// "Ascend Hardware" process, one row of task_time.csv or DB TASK, or, when no
// timeline exists, one compute row of kernel_details.csv).
//
// It is 16 bytes and holds no pointers, so a rank's hundreds of thousands
// of tasks are never scanned by the garbage collector: its start, its
// duration (below 2^31 ns, 2.1 s, in the task; a longer or negative one in
// the rank's table, which the task indexes), and the index of what it
// shares with many others (name, stream, class, device, op type, task
// type, shapes, model id) in the rank's table of their distinct sets,
// Rank.Extras. Read them through the rank: r.Dur(t), r.End(t),
// r.Name(t), r.Stream(t), r.Class(t), r.Extra(t); make one with
// r.NewTask.
type DeviceTask struct {
	Start int64 // ns since the Unix epoch
	// dur is the duration (ns) when below longDur, else longDur | its
	// index in Extras.long (r.Dur(t))
	dur uint32
	// Extra indexes the task's name, stream, class, device, op type, task
	// type, input shapes and model id in the rank's table (r.Extra(t)).
	Extra Extra
}

// HCCLOp is one collective "big op" (the unit of time in HCCL). Plane tasks
// and hardware subtasks are never HCCLOps. Its strings are symbols of the
// rank's table (r.Str(h.Type)); like DeviceTask it holds no pointers.
type HCCLOp struct {
	Start int64
	Dur   int64
	// Name is the full op name, e.g. hcom_allReduce__586_0_1.
	Name Sym
	// Type is the lower-case collective type: allreduce, allgather,
	// reducescatter, alltoall, alltoallv, broadcast, send, receive,
	// batchsendrecv, reduce, scatter, ... ("unknown" when not derivable).
	Type Sym
	// HashSuffix is the 3-character group-hash token from the name ("586"),
	// empty when the name carries none.
	HashSuffix Sym
	// Group is the human group name (tp, ep, dp, ...) resolved through
	// parallel_group_info, empty when unknown.
	Group Sym
	// Variant is "" for ordinary ops, "aicpu" for AicpuKernel-unfolded ops,
	// "aiv" for AivKernel ops.
	Variant Sym
	// Device is the op's device in a file that holds several
	// (Rank.Devices), 0 otherwise.
	Device int16
}

// End returns Start+Dur.
func (h *HCCLOp) End() int64 { return h.Start + h.Dur }

// cmpSym orders two symbols of the table by their strings.
func (t *Syms) cmpSym(a, b Sym) int {
	if a == b {
		return 0
	}
	return strings.Compare(t.Str(a), t.Str(b))
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// FrameworkOp is a host-side torch op (Python process, cat cpu_op). Name
// is a symbol of the rank's table (r.Str(op.Name)); Thread is its thread,
// an index into the rank's table of thread ids (r.Tid(op)), so an op is
// 24 bytes.
type FrameworkOp struct {
	Start  int64
	Dur    int64
	Name   Sym
	Thread Thread
}

// Link ties a framework op to the device task or HCCL op it launched
// (torch_to_npu flows). Exactly one of Task/HCCL is >= 0.
type Link struct {
	Op   int32 // index into Rank.FrameworkOps
	Task int32 // index into Rank.Tasks, or -1
	HCCL int32 // index into Rank.HCCL, or -1
}

// OpTask is a task link without its HCCL index (8 bytes where a Link is
// 12): what ReduceFrameworkEarly reads of the links (SetTaskLinks).
type OpTask struct {
	Op   int32 // index into Rank.FrameworkOps
	Task int32 // index into Rank.Tasks
}

// Step is one profiler step (ProfilerStep#N) with its host-side bounds.
type Step struct {
	ID    int
	Start int64
	End   int64
}

// Group is one HCCL communicator from parallel_group_info.
type Group struct {
	Comm        string // communicator name (parallel_group_info key)
	Name        string // group_name: tp, ep, dp, default_group, ...
	Rank        int    // group_rank, -1 when absent
	GlobalRanks []int
	// Hash is double_hash(Comm) as decimal text; HashSuffix its last 3 chars.
	Hash       string
	HashSuffix string
}

// StepTraceRow is one row of the profiler's own step_trace_time.csv, kept
// for cross-checks; npuprof's own per-step numbers come from the timeline.
type StepTraceRow struct {
	Step                       string
	Computing                  float64
	CommunicationNotOverlapped float64
	Overlapped                 float64
	Communication              float64
	Free                       float64
	Stage                      float64
	Bubble                     float64
	Preparing                  float64
	HasPreparing               bool
	// NoOverlapped: the row has no Overlapped value (the header has no
	// Overlapped column, or the cell is empty or not a number): Overlapped
	// is 0, not measured.
	NoOverlapped bool
	// Device is the row's Device_id cell (new headers), "" when absent.
	Device string
}

// DevicePart is what a reader kept of one device of a file that holds
// several (Rank.Devices): its own Overlap Analysis and HCCL plane tasks,
// and its own steps where the steps are device bounds (kernel_details.csv's
// Step Id without a timeline; nil: the rank's Steps are every device's).
type DevicePart struct {
	Device     int
	OwnOverlap OwnOverlap
	HCCLPlane  PlaneTasks
	Steps      []Step
}

// OwnOverlap is the profiler's own Overlap Analysis of a capture (the
// "Overlap Analysis" process of msprof_*.json, a database's
// OVERLAP_ANALYSIS table; trace_view.json's only where the writer's
// version is CANN 8.5 or later or unknown, see traceview.ReadWithOverlap
// and docs/formats.md): the span of its slices and their sums per
// kind, ns, read from the rank's timeline file (Have.TimelineFile). Slices is 0 when the capture holds
// none (or only part of one: a cut timeline).
type OwnOverlap struct {
	Start, End int64
	// Computing, Communication, NotOverlapped and Free sum the slices of
	// each kind ("Computing", "Communication", "Communication(Not
	// Overlapped)", "Free").
	Computing, Communication, NotOverlapped, Free int64
	// Slices counts the slices read; 0: no Overlap Analysis.
	Slices int
	// IfDiffers: the capture names no writer version (a trace_view.json
	// without profiler_info's cann_version), so these figures stand only
	// where the window recomputed by the older rule differs from them by
	// more than the analysis's tolerance (a writer of the extremes rule);
	// otherwise the recomputation, which equals a pre-8.5 writer's, is kept.
	IfDiffers bool `json:",omitempty"`
}

// OverlapKind reports whether kind is one of the four kinds of the
// profiler's own overlap (Add's).
func OverlapKind(kind string) bool {
	switch kind {
	case "Computing", "Communication", "Communication(Not Overlapped)", "Free":
		return true
	}
	return false
}

// Add counts one slice of kind (its thread's name) from start for dur ns;
// a slice of another kind is ignored (false).
func (o *OwnOverlap) Add(kind string, start, dur int64) bool {
	switch kind {
	case "Computing":
		o.Computing += dur
	case "Communication":
		o.Communication += dur
	case "Communication(Not Overlapped)":
		o.NotOverlapped += dur
	case "Free":
		o.Free += dur
	default:
		return false
	}
	if o.Slices == 0 || start < o.Start {
		o.Start = start
	}
	if o.Slices == 0 || start+dur > o.End {
		o.End = start + dur
	}
	o.Slices++
	return true
}

// CommOpInfo is one op of communication.json ("Communication Time Info").
type CommOpInfo struct {
	Step      string
	Kind      string // collective | p2p
	Op        string // op name without the @hash suffix
	GroupHash string // the @hash suffix
	Start     int64  // ns, 0 when absent
	ElapseMs  float64
	TransitMs float64
	WaitMs    float64
	SyncMs    float64
	IdleMs    float64
}

// StatRow is one row of a profiler statistics table: msprof's
// communication_statistic (Name = collective op type, hcom_allReduce_) or
// api_statistic (Level acl/runtime/node/hccl, Name = API name).
type StatRow struct {
	Level string
	Name  string
	Count int
	Total int64 // ns
	// Max is the longest single call (api_statistic's Max(us)), ns; 0
	// when the file has no such column.
	Max int64
	// Device is the row's Device_id cell (op_statistic's new headers),
	// "" when absent.
	Device string
}

// Warning is a problem met while reading input that did not stop the read.
type Warning struct {
	File    string `json:"file"`
	Message string `json:"message"`
	Count   int    `json:"count,omitempty"`
	Lines   []int  `json:"lines,omitempty"`
}

// Text is the warning as one line, "FILE: MESSAGE", naming the file once:
// a reader's error often starts with its file already ("FILE: empty
// file, ...").
func (w Warning) Text() string {
	if w.File == "" || strings.HasPrefix(w.Message, w.File+": ") {
		return w.Message
	}
	return w.File + ": " + w.Message
}

// Availability says which inputs were present for a rank, so passes can say
// precisely why a metric is unavailable.
type Availability struct {
	// Timeline: a device timeline with every task type (trace_view.json,
	// msprof json, task_time or DB TASK). EVENT_WAIT needs it.
	Timeline bool
	// KernelDetails: kernel_details.csv (or op_summary) was read.
	KernelDetails bool
	// HCCL: collective big ops are known (timeline HCCL process or
	// kernel_details HCCL rows).
	HCCL bool
	// Framework: host torch ops were read.
	Framework bool
	// TimelineFile / KernelFile name the files the data came from.
	TimelineFile string
	KernelFile   string
	// HCCLFile names the file Rank.HCCL came from (the timeline or
	// kernel_details.csv), "" when HCCL is false.
	HCCLFile string
	// StepTraceFile, CommFile and OpStatFile name the files Rank.StepTrace
	// (step_trace_time.csv or analysis.db StepTraceTime), Rank.Communication
	// (communication.json or analysis.db CommAnalyzerTime) and Rank.OpStats
	// (op_statistic.csv) were read from, "" when not read.
	StepTraceFile string
	CommFile      string
	OpStatFile    string
	// APIStatFile names the first api_statistic file Rank.APIStats was
	// read from, "" when none.
	APIStatFile string
	// DeviceFile names what Rank.Device was read from, "" when unknown.
	DeviceFile string
	// DeviceNote says why DeviceFile is unknown although Device is known
	// (a Parquet export written before npuprof recorded it); "" otherwise.
	DeviceNote string
	// TimelinePartial: the timeline file was cut short (truncated); Tasks,
	// HCCL, FrameworkOps and Steps read from it cover only its complete
	// part, so every metric computed from them is partial.
	TimelinePartial bool
	// KernelPartial: kernel_details.csv was read only up to a problem.
	KernelPartial bool
	// PartialFiles are the summary files read only in part (cut inside
	// their last line, or with rows skipped): step_trace_time.csv,
	// op_statistic.csv, msprof's statistic CSVs. Every metric computed
	// from one (its source) is partial.
	PartialFiles []string
	// TimelineNote, HCCLNote and KernelNote say why that input is missing
	// or unusable when a file was there but could not be used (empty, not
	// a trace, truncated before its process metadata, bad header...).
	// Passes quote them in `unavailable` reasons; "" when nothing is known.
	TimelineNote string
	HCCLNote     string
	KernelNote   string
	// SyncNote says why a timeline holds no stream-sync tasks (EVENT_WAIT,
	// EVENT_RECORD): a Kineto trace records kernels and copies only; ""
	// for the profiler's own timelines.
	SyncNote string
	// GroupsNote says why parallel_group_info is unknown (no or unreadable
	// profiler_metadata.json, or no such key); "" when groups were read.
	GroupsNote string
}

// PlaneTasks counts HCCL plane tasks: every one, and those whose args name
// the SDMA transport (on-chip DMA within a node: HCCL expanded on the AI
// CPU or host, not on the AI Vector cores) or RDMA (between nodes).
type PlaneTasks struct {
	Tasks, SDMA, RDMA int
}

// Rank is everything npuprof knows about one rank's profile.
type Rank struct {
	Rank   int // -1 when unknown
	Device int // -1 when unknown
	// Path is the rank's root (the *_ascend_pt folder, PROF_* folder or file).
	Path   string
	Format Format
	// Dirname timestamp (ms precision text, e.g. 20250109153041123) used to
	// pick the newest of duplicate ranks; empty when unknown.
	DirTimestamp string

	ProfilerLevel   string // Level0, Level1, Level2, Level_none; "" unknown
	TorchNPUVersion string
	CANNVersion     string

	Have Availability

	// Syms holds the strings of Tasks, HCCL and FrameworkOps (see Sym).
	Syms Syms
	// Extras holds the tasks' input shapes and model ids (see TaskExtra).
	Extras Extras

	Tasks []DeviceTask
	HCCL  []HCCLOp
	// HCCLPlane counts the HCCL plane tasks of a Level1 trace_view.json
	// ("Plane k" threads of the HCCL process), by transport.
	HCCLPlane    PlaneTasks
	FrameworkOps []FrameworkOp
	// Threads holds the thread ids of FrameworkOps (see Thread).
	Threads Threads
	Links   []Link
	// opTasks are the task links a reader left in place of Links for
	// ReduceFrameworkEarly (SetTaskLinks); early says it will be called
	opTasks []OpTask
	early   bool
	// opSum is what a reader handed in place of FrameworkOps for
	// ReduceFrameworkEarly (SetOpSummary); opTasks' ops are its keys
	opSum *OpSummary
	// launched holds what the passes read of FrameworkOps and Links
	// once ReduceFramework dropped them (nil before).
	launched *launches
	Steps    []Step

	Groups []Group
	// WorldSize is the job's world size where the capture states it apart
	// from its groups (a Kineto trace's distributedInfo.world_size), 0
	// when not; WorldSizeFrom names where. World weighs it with the
	// groups and the metadata.
	WorldSize     int
	WorldSizeFrom string
	Env           map[string]string
	// Metadata holds the other profiler_metadata.json keys as raw JSON text.
	Metadata map[string]string

	// OwnOverlap is the capture's own Overlap Analysis (msprof_*.json, a
	// database's OVERLAP_ANALYSIS), when read.
	OwnOverlap OwnOverlap

	// Devices lists, ascending, the devices of a capture whose files
	// hold several (one process driving several devices: torch_npu's
	// pid_device_map, msprof's per-device loop), nil when it holds one.
	// Tasks, HCCL ops and step-trace rows then carry their device, and
	// PerDevice holds what the readers kept per device; SplitDevices
	// makes one rank of each device (internal/pipeline/gather does, after the
	// read).
	Devices   []int
	PerDevice []DevicePart
	// RankOfDevice maps a device to its rank where the capture says so
	// (the DB's RANK_DEVICE_MAP), nil otherwise.
	RankOfDevice map[int]int

	StepTrace     []StepTraceRow
	Communication []CommOpInfo
	// CommStats and APIStats are msprof's communication_statistic and
	// api_statistic tables, kept for cross-checks.
	CommStats []StatRow
	APIStats  []StatRow
	// OpStats is op_statistic.csv (Level = Core Type, Name = OP Type),
	// read when there is neither a timeline nor kernel_details.csv: it
	// then gives the compute-kernel totals.
	OpStats []StatRow

	Warnings      []Warning
	Partial       bool
	PartialReason string

	// Origin is set when the rank was read back from an npuprof Parquet
	// export (then Path is the capture's rank folder, absolute when the
	// export recorded it); zero otherwise.
	Origin Origin
}

// Origin says where a rank read back from an npuprof Parquet export came
// from: the export it was read from and the rank folder it was exported
// from, as given to `npuprof export` and absolute on the exporting host.
type Origin struct {
	// Export is the export folder the rank was read from, as given to
	// the reader (npuprof analyze OUTDIR).
	Export string
	// Path is the rank folder as the export was given it (possibly
	// relative to the export's working directory).
	Path string
	// AbsPath is Path made absolute at export time, "" in exports written
	// before schema npuprof.parquet/v1.1.
	AbsPath string
	// Host is the host name of the machine that ran the export, "" when
	// unknown (exports before v1.1).
	Host string
}

// World is the job's world size as the capture states it, and where: the
// largest of WorldSize, parallel_group_info's world or default group (its
// global ranks), the highest global rank of any group plus one, and
// profiler_metadata.json's distributed_args.world_size (Megatron's
// add_metadata); 0 and "" when nothing states it.
func (r *Rank) World() (size int, from string) {
	if r.WorldSize > 0 {
		size, from = r.WorldSize, r.WorldSizeFrom
	}
	// the world or default group first: another group names the size
	// only when it reaches past them
	for _, world := range []bool{true, false} {
		for _, g := range r.Groups {
			if isWorld := g.Name == "default_group" || g.Name == "world"; isWorld != world {
				continue
			}
			n := 0
			if world {
				n = len(g.GlobalRanks)
			}
			for _, gr := range g.GlobalRanks {
				n = max(n, gr+1)
			}
			if n > size {
				size, from = n, fmt.Sprintf("parallel_group_info (group %s)", g.Name)
			}
		}
	}
	if raw, ok := r.Metadata["distributed_args"]; ok {
		if n := jsonIntField(raw, "world_size"); n > size {
			size, from = n, "profiler_metadata.json distributed_args.world_size"
		}
	}
	return size, from
}

// jsonIntField is the non-negative integer value of key in the JSON
// object text raw, 0 when absent or not one.
func jsonIntField(raw, key string) int {
	var obj map[string]any
	if json.Unmarshal([]byte(raw), &obj) != nil {
		return 0
	}
	if v, ok := obj[key].(float64); ok && v > 0 && v < 1<<20 && v == float64(int(v)) {
		return int(v)
	}
	return 0
}

// NewRank returns an empty rank with unknown ids.
func NewRank(path string) *Rank {
	return &Rank{Rank: -1, Device: -1, Path: path}
}

// Str returns the string of a symbol of this rank (r.Str(r.Name(t))).
func (r *Rank) Str(s Sym) string { return r.Syms.Str(s) }

// Intern returns the symbol of s in this rank's table, adding s if new.
func (r *Rank) Intern(s string) Sym { return r.Syms.Intern(s) }

// NeedsCommOps reports whether the analysis needs the rank's communication
// ops (communication.json, or an export's comm_ops) even where it asks the
// readers to skip them (parser.Source.SkipCommunication): always from a
// database (its CommAnalyzerTime table), for msprof's text output when no
// other file gave the collectives, else also beside a rank without a
// timeline (the analysis cross-checks them with kernel_details.csv). The
// readers of the capture and of its export both ask it, so that the two
// analyses see the same input.
func (r *Rank) NeedsCommOps() bool {
	switch r.Format {
	case FormatTorchNPUDB, FormatMsprofDB:
		return true
	case FormatMsprofText:
		return !r.Have.HCCL
	}
	return !r.Have.HCCL || !r.Have.Timeline
}

// Warn records a non-fatal input problem.
func (r *Rank) Warn(file, format string, args ...any) {
	r.Warnings = append(r.Warnings, Warning{File: file, Message: fmt.Sprintf(format, args...)})
}

// SortTasks orders tasks by (start, stream, name), HCCL ops by (start,
// name) and framework ops by (start, tid, name) so every pass sees a
// deterministic order (and exact duplicates sit side by side), and remaps
// Links accordingly. It is stable, does nothing more than a check when the
// order is already right, moves the few elements out of place by
// insertion when it is nearly right (the readers produce that; see
// settle), and otherwise permutes in place (4 bytes per element of extra
// memory, not a second copy).
func (r *Rank) SortTasks() {
	taskCmp := func(x, y *DeviceTask) int {
		if x.Start != y.Start {
			return cmpInt(x.Start, y.Start)
		}
		if x.Extra == y.Extra {
			return 0
		}
		a, b := r.Extra(x), r.Extra(y)
		if a.Stream != b.Stream {
			return cmpInt(int64(a.Stream), int64(b.Stream))
		}
		return r.Syms.cmpSym(a.Name, b.Name)
	}
	hcclCmp := func(x, y *HCCLOp) int {
		if x.Start != y.Start {
			return cmpInt(x.Start, y.Start)
		}
		return r.Syms.cmpSym(x.Name, y.Name)
	}
	tm := settle(r.Tasks, taskCmp)
	hm := settle(r.HCCL, hcclCmp)
	om := settle(r.FrameworkOps, r.opCmp())
	if l := r.launched; l != nil && tm.moved() {
		// reduced while read (ReduceFrameworkEarly): its launches' tasks
		// move as the links' would
		for i := range l.task {
			l.task[i] = tm.of(l.task[i])
		}
	}
	if len(r.Links) > 0 && (tm.moved() || hm.moved() || om.moved()) {
		nOps := int32(len(r.FrameworkOps))
		for i := range r.Links {
			l := &r.Links[i]
			if om.moved() && l.Op >= 0 && l.Op < nOps {
				l.Op = om.of(l.Op)
			}
			if l.Task >= 0 {
				l.Task = tm.of(l.Task)
			} else if l.HCCL >= 0 {
				l.HCCL = hm.of(l.HCCL)
			}
		}
	}
	sort.SliceStable(r.Steps, func(a, b int) bool { return r.Steps[a].Start < r.Steps[b].Start })
}

// opCmp orders framework ops by (start, tid, name).
func (r *Rank) opCmp() func(a, b *FrameworkOp) int {
	return func(a, b *FrameworkOp) int {
		switch {
		case a.Start != b.Start:
			return cmpInt(a.Start, b.Start)
		case a.Thread != b.Thread:
			return cmpInt(r.Threads.Tid(a.Thread), r.Threads.Tid(b.Thread))
		}
		return r.Syms.cmpSym(a.Name, b.Name)
	}
}

// moves says where settle moved the elements of a slice: first the
// few an insertion sort moved (by old index), then, when that sort gave
// up, the permutation of the rest.
type moves struct {
	few []move  // sorted by old
	inv []int32 // after few: old -> new; nil when nothing more moved
}

type move struct{ old, new int32 }

func (m *moves) moved() bool { return len(m.few) > 0 || m.inv != nil }

// of is the new index of the element at old index i.
func (m *moves) of(i int32) int32 {
	if len(m.few) > 0 && i >= m.few[0].old && i <= m.few[len(m.few)-1].old {
		if k, ok := slices.BinarySearchFunc(m.few, i, func(x move, t int32) int { return cmpInt(int64(x.old), int64(t)) }); ok {
			i = m.few[k].new
		}
	}
	if m.inv != nil {
		i = m.inv[i]
	}
	return i
}

// settle sorts s stably by cmp, in place, and says where its elements
// went. The readers' arrays are in order or nearly (at 1 GB, 46 tasks
// of 1.34 M one place late): an insertion sort moves those, noting each
// move, with no array the size of s; past a budget of moved places it
// gives up and the rest is sorted through an index array (4 bytes an
// element), inverted in place for the remap.
func settle[T any](s []T, cmp func(a, b *T) int) moves {
	var m moves
	budget := 64 + len(s)/64
	var origin map[int32]int32 // position -> old index, where they differ or once did
	orig := func(p int) int32 {
		if o, ok := origin[int32(p)]; ok {
			return o
		}
		return int32(p)
	}
	i := 1
	for ; i < len(s); i++ {
		if cmp(&s[i-1], &s[i]) <= 0 {
			continue
		}
		k := i - 1
		for k > 0 && cmp(&s[k-1], &s[i]) > 0 && i-k <= budget {
			k--
		}
		if budget -= i - k; budget < 0 {
			break
		}
		if origin == nil {
			origin = make(map[int32]int32)
		}
		x, ox := s[i], orig(i)
		for j := i; j > k; j-- {
			s[j] = s[j-1]
			origin[int32(j)] = orig(j - 1)
		}
		s[k] = x
		origin[int32(k)] = ox
	}
	for p, o := range origin {
		if p != o {
			m.few = append(m.few, move{old: o, new: p})
		}
	}
	slices.SortFunc(m.few, func(a, b move) int { return cmpInt(int64(a.old), int64(b.old)) })
	if i < len(s) {
		idx := make([]int32, len(s))
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(a, b int32) int { return cmp(&s[a], &s[b]) })
		permute(s, idx)
		invert(idx)
		m.inv = idx
	}
	return m
}

// invert turns the permutation p (new -> old) into its inverse (old ->
// new) in place, following its cycles and marking visited entries by
// negating them.
func invert(p []int32) {
	for i := range p {
		if p[i] < 0 {
			continue
		}
		cur, next := int32(i), p[i]
		for {
			after := p[next]
			p[next] = ^cur
			if next == int32(i) {
				break
			}
			cur, next = next, after
		}
	}
	for i := range p {
		p[i] = ^p[i]
	}
}

// permute reorders s in place so that s[i] becomes the old s[p[i]]. It
// follows the permutation's cycles and marks visited entries by negating
// them, restoring p afterwards.
func permute[T any](s []T, p []int32) {
	for i := range p {
		if p[i] < 0 || int(p[i]) == i {
			continue
		}
		tmp := s[i]
		j := i
		for {
			k := int(p[j])
			p[j] = ^p[j]
			if k == i {
				s[j] = tmp
				break
			}
			s[j] = s[k]
			j = k
		}
	}
	for i := range p {
		if p[i] < 0 {
			p[i] = ^p[i]
		}
	}
}

// Duplicates counts exact duplicates DropDuplicates removed.
type Duplicates struct {
	Tasks, HCCL, Ops, Steps int
	// FirstStart is the start (ns) of the first duplicate, for the warning.
	FirstStart int64
}

// Total is the number of events dropped.
func (d Duplicates) Total() int { return d.Tasks + d.HCCL + d.Ops + d.Steps }

// DropDuplicates keeps one copy of events that are exact duplicates: device
// tasks equal in every field (start, duration, name, op type, task type,
// shapes, stream, class, model id -- in a trace, the same X event on the
// same pid/tid), HCCL ops and framework ops equal in every field, and
// steps with the same id and bounds. A profiler never records one task twice, so a duplicate
// is a copying or merging accident; counting it would inflate every
// metric. Call after SortTasks (duplicates then sit within runs of equal
// sort keys). Links to a dropped copy move to the kept one.
func (r *Rank) DropDuplicates() Duplicates {
	var d Duplicates
	note := func(start int64) {
		if d.Total() == 0 || start < d.FirstStart {
			d.FirstStart = start
		}
	}
	var taskMap, hcclMap, opMap []int32
	r.Tasks, taskMap = dedupRuns(r.Tasks, func(a, b *DeviceTask) bool {
		if a.Start != b.Start {
			return false
		}
		return a.Extra == b.Extra || r.Stream(a) == r.Stream(b) && r.Name(a) == r.Name(b)
	}, func(t *DeviceTask) { note(t.Start); d.Tasks++ })
	r.HCCL, hcclMap = dedupRuns(r.HCCL, func(a, b *HCCLOp) bool {
		return a.Start == b.Start && a.Name == b.Name
	}, func(h *HCCLOp) { note(h.Start); d.HCCL++ })
	r.FrameworkOps, opMap = r.dedupOps(func(o *FrameworkOp) { note(o.Start); d.Ops++ })
	var early *pending
	if r.launched != nil {
		// reduced while read: its ops' duplicates were dropped then
		early, r.launched.pending = r.launched.pending, nil
	}
	if early != nil && early.ops > 0 {
		note(early.first)
		d.Ops += early.ops
	}
	r.Steps, _ = dedupRuns(r.Steps, func(a, b *Step) bool { return a.Start == b.Start },
		func(s *Step) { note(s.Start); d.Steps++ })
	if d.Tasks+d.HCCL+d.Ops > 0 && len(r.Links) > 0 {
		seen := make(map[Link]bool, len(r.Links))
		links := r.Links[:0]
		for _, l := range r.Links {
			l.Op = remap(opMap, l.Op)
			if l.Task >= 0 {
				l.Task = remap(taskMap, l.Task)
			} else if l.HCCL >= 0 {
				l.HCCL = remap(hcclMap, l.HCCL)
			}
			if !seen[l] {
				seen[l] = true
				links = append(links, l)
			}
		}
		r.Links = links
	}
	if early != nil && d.Tasks+d.HCCL+d.Ops > 0 {
		r.launched.dropLinked(taskMap, early.same)
	}
	return d
}

// dedupOps drops the exact duplicates of the framework ops, sorted by
// opCmp, calling onDup with each (dedupRuns).
func (r *Rank) dedupOps(onDup func(*FrameworkOp)) ([]FrameworkOp, []int32) {
	return dedupRuns(r.FrameworkOps, func(a, b *FrameworkOp) bool {
		return a.Start == b.Start && a.Thread == b.Thread && a.Name == b.Name
	}, onDup)
}

// remap returns the new index of old index i (m nil: nothing moved).
func remap(m []int32, i int32) int32 {
	if m == nil {
		return i
	}
	return m[i]
}

// dedupRuns drops exact duplicates from xs, which is sorted so that equal
// elements lie within runs of neighbours with the same key. It returns the
// kept elements (in place) and, for every old index, its new index (nil
// when nothing was dropped: every index stays). Long runs switch from a
// linear scan to a map, so hostile input stays linear.
func dedupRuns[T comparable](xs []T, sameKey func(a, b *T) bool, onDup func(*T)) ([]T, []int32) {
	// idx is allocated at the first duplicate: until then every element
	// keeps its index
	var idx []int32
	kept := xs[:0]
	run := 0
	var inRun map[T]int32
	for i := range xs {
		x := xs[i]
		if len(kept) > 0 && !sameKey(&kept[len(kept)-1], &xs[i]) {
			run, inRun = len(kept), nil
		}
		if inRun == nil && len(kept)-run > 8 {
			inRun = make(map[T]int32, 16)
			for j := run; j < len(kept); j++ {
				inRun[kept[j]] = int32(j)
			}
		}
		dup := int32(-1)
		if inRun != nil {
			if j, ok := inRun[x]; ok {
				dup = j
			}
		} else {
			for j := run; j < len(kept); j++ {
				if kept[j] == x {
					dup = int32(j)
					break
				}
			}
		}
		if dup >= 0 {
			// &xs[i], not &x: x must stay on the stack (one heap copy per
			// element was most of the parse's allocations); xs[i] is not
			// overwritten before this point, kept only grows up to i
			onDup(&xs[i])
			if idx == nil {
				idx = make([]int32, len(xs))
				for j := range i {
					idx[j] = int32(j)
				}
			}
			idx[i] = dup
			continue
		}
		if idx != nil {
			idx[i] = int32(len(kept))
		}
		if inRun != nil {
			inRun[x] = int32(len(kept))
		}
		kept = append(kept, x)
	}
	return kept, idx
}

// Validate checks the model's invariants once, after any parser.
func (r *Rank) Validate() error {
	for i := range r.Tasks {
		// (a duration the task holds itself is in [0, 2^31))
		if t := &r.Tasks[i]; t.dur < longDur && t.Start+int64(t.dur) < t.Start || t.dur >= longDur && (r.Dur(t) < 0 || r.End(t) < t.Start) {
			return fmt.Errorf("rank %d: device task %q at %d has a negative or out-of-range duration %d", r.Rank, r.Str(r.Name(t)), t.Start, r.Dur(t))
		}
	}
	for i := range r.HCCL {
		if r.HCCL[i].Dur < 0 || r.HCCL[i].End() < r.HCCL[i].Start {
			return fmt.Errorf("rank %d: HCCL op %q has a negative or out-of-range duration", r.Rank, r.Str(r.HCCL[i].Name))
		}
	}
	for _, s := range r.Steps {
		if s.End < s.Start {
			return fmt.Errorf("rank %d: step %d ends before it starts", r.Rank, s.ID)
		}
	}
	if !r.linksInRange() {
		return fmt.Errorf("rank %d: link out of range", r.Rank)
	}
	return nil
}

// linksInRange says whether every link names an op and one task or HCCL
// op of the rank (a reduced rank's launches, a task).
func (r *Rank) linksInRange() bool {
	nOps := len(r.FrameworkOps)
	if r.opSum != nil {
		nOps = len(r.opSum.Ends)
	}
	for _, l := range r.opTasks {
		if l.Op < 0 || int(l.Op) >= nOps || l.Task < 0 || int(l.Task) >= len(r.Tasks) {
			return false
		}
	}
	for _, l := range r.Links {
		if l.Op < 0 || int(l.Op) >= len(r.FrameworkOps) || int(l.Task) >= len(r.Tasks) || int(l.HCCL) >= len(r.HCCL) || (l.Task < 0) == (l.HCCL < 0) {
			return false
		}
	}
	if r.launched != nil {
		for _, t := range r.launched.task {
			if t < 0 || int(t) >= len(r.Tasks) {
				return false
			}
		}
	}
	return true
}

// GroupByHashSuffix returns the group whose hash ends with suffix (the
// 3-char token in HCCL op names), or nil.
func (r *Rank) GroupByHashSuffix(suffix string) *Group {
	for i := range r.Groups {
		if r.Groups[i].HashSuffix == suffix {
			return &r.Groups[i]
		}
	}
	return nil
}
