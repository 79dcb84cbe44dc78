package model

import "maps"

// TaskExtra is what a device task shares with many others: its name,
// stream, class, device, op type, task type, input shapes and model id.
// A rank's hundreds of thousands of tasks take a few thousand distinct sets
// of them, so the rank's table (Rank.Extras) holds each once and a task
// holds its index (DeviceTask.Extra) beside its start and duration: a task
// is 16 bytes.
type TaskExtra struct {
	// Name is the op/kernel name (e.g. aclnnCumsum_CumsumAiCpu_Cumsum) or,
	// for tasks without an op, the host task type (EVENT_WAIT, MEMCPY_ASYNC).
	Name Sym
	// OpType is the op type (kernel_details `Type`, e.g. Cumsum,
	// MoeInitRoutingCustom). When only the timeline exists it is derived
	// from the aclnn name pattern {api}_{impl}_{opType}.
	OpType Sym
	// TaskType is the hardware task type (`Task Type` in the trace,
	// `Accelerator Core` in kernel_details): AI_CORE, AI_CPU, EVENT_WAIT_SQE...
	TaskType Sym
	// InputShapes is the raw `Input Shapes` value without its outer
	// quotes ("25,4096;25,8"), 0 ("") when unknown.
	InputShapes Sym
	// ModelID is the graph (model) id, 4294967295 for single-op mode.
	ModelID uint32
	Stream  int32 // physical stream id, -1 when unknown
	Class   TaskClass
	// Device is the task's device in a file that holds several
	// (Rank.Devices), 0 otherwise; SplitDevices makes a rank of each.
	Device int16
}

// Extra is the index of a TaskExtra in its rank's table (Index) with, in
// its top 3 bits, the entry's class (Class), which the passes' loops read
// most: r.Class(t) reads the task alone. 0 is always TaskExtra{} (no name,
// stream 0, class other, model id 0), so a zero DeviceTask needs no table.
type Extra uint32

// classShift places a class in an Extra; there are 8 classes.
const (
	classShift = 29
	indexMask  = 1<<classShift - 1
)

// every class fits in the 3 bits above classShift
var _ [8 - len(classNames)]struct{}

// Index is the entry's index in the table.
func (e Extra) Index() int { return int(e & indexMask) }

// Class is the class of the entry.
func (e Extra) Class() TaskClass { return TaskClass(e >> classShift) }

// Extras is a table of TaskExtra values, each once, by Extra, and of the
// durations a task cannot hold itself (see DeviceTask). The zero value is
// an empty table ready to use. Like Syms, only parsers add to it, from the
// one goroutine that fills the rank; passes only read it.
type Extras struct {
	list []TaskExtra // by Extra; list[0] is TaskExtra{} once anything was added
	ids  map[TaskExtra]Extra
	// recent ids by a hash of their value: a reader asks for the same
	// few values again and again, and a 28-byte key is a slow map key
	recent []Extra
	// long durations (negative, or 2^31 ns and longer), each once
	long    []int64
	longIDs map[int64]uint32
}

// recentSlots is the size of Extras.recent (a power of two).
const recentSlots = 256

// slot is e's place in Extras.recent.
func (e *TaskExtra) slot() uint32 {
	h := uint32(e.OpType)*0x9E3779B1 ^ uint32(e.TaskType)*0x85EBCA77 ^ uint32(e.InputShapes)*0xC2B2AE3D ^ e.ModelID*0x27D4EB2F ^
		uint32(e.Name)*0x165667B1 ^ uint32(e.Stream)*0xD3A2646C ^ (uint32(e.Class)|uint32(uint16(e.Device))<<8)*0xFD7046C5
	return h >> 24 // the top 8 bits: recentSlots
}

// ID returns the index of e, adding e when it is new.
func (x *Extras) ID(e TaskExtra) Extra {
	if x.recent == nil && e == (TaskExtra{}) {
		return 0
	}
	h := e.slot()
	if x.recent != nil {
		if id := x.recent[h]; x.list[id.Index()] == e {
			return id
		}
	}
	if e == (TaskExtra{}) {
		return 0
	}
	id, ok := x.ids[e]
	if !ok {
		if x.ids == nil {
			x.ids = make(map[TaskExtra]Extra, 64)
			x.list = append(x.list, TaskExtra{})
			x.recent = make([]Extra, recentSlots)
		}
		// (an index past indexMask would need 2^29 distinct sets: more
		// than any rank's tasks)
		id = Extra(len(x.list)) | Extra(e.Class)<<classShift
		x.list = append(x.list, e)
		x.ids[e] = id
	}
	x.recent[h] = id
	return id
}

// Get returns the TaskExtra of id (TaskExtra{} for 0 or an id the table
// does not hold).
func (x *Extras) Get(id Extra) TaskExtra {
	if i := id.Index(); i < len(x.list) {
		return x.list[i]
	}
	return TaskExtra{}
}

// Len returns the number of entries, TaskExtra{} included.
func (x *Extras) Len() int { return max(1, len(x.list)) }

// Clone returns an independent copy of the table.
func (x *Extras) Clone() Extras {
	c := Extras{list: append([]TaskExtra(nil), x.list...), recent: append([]Extra(nil), x.recent...),
		long: append([]int64(nil), x.long...)}
	c.ids = maps.Clone(x.ids)
	c.longIDs = maps.Clone(x.longIDs)
	return c
}

// longDur marks DeviceTask.dur as an index into Extras.long.
const longDur = 1 << 31

// dur is what a task holds of duration d: d itself when it is in [0,
// 2^31), else longDur | the index of d in the table of long durations.
func (x *Extras) dur(d int64) uint32 {
	if uint64(d) < longDur {
		return uint32(d)
	}
	id, ok := x.longIDs[d]
	if !ok {
		if x.longIDs == nil {
			x.longIDs = make(map[int64]uint32)
		}
		id = uint32(len(x.long))
		x.long = append(x.long, d)
		x.longIDs[d] = id
	}
	return longDur | id
}

// longOf is the duration a task holds as v|longDur.
func (x *Extras) longOf(v uint32) int64 {
	if i := int(v &^ longDur); i < len(x.long) {
		return x.long[i]
	}
	return 0
}

// NewTask returns a task of this rank from start for dur ns, described by e.
func (r *Rank) NewTask(start, dur int64, e TaskExtra) DeviceTask {
	return DeviceTask{Start: start, dur: r.Extras.dur(dur), Extra: r.Extras.ID(e)}
}

// Dur is task t's duration, ns.
func (r *Rank) Dur(t *DeviceTask) int64 {
	if t.dur < longDur {
		return int64(t.dur)
	}
	return r.Extras.longOf(t.dur)
}

// End is task t's end, Start + Dur.
func (r *Rank) End(t *DeviceTask) int64 { return t.Start + r.Dur(t) }

// SetDur sets task t's duration.
func (r *Rank) SetDur(t *DeviceTask, dur int64) { t.dur = r.Extras.dur(dur) }

// noExtra is what at gives a task whose entry the table does not hold
// (a zero task of a rank that made none); never written.
var noExtra TaskExtra

// at is task t's entry, read in place: the accessors of one field
// (r.Name(t), ...) read that field alone, not a copy of the whole entry.
func (r *Rank) at(t *DeviceTask) *TaskExtra {
	if l, i := r.Extras.list, t.Extra.Index(); i < len(l) {
		return &l[i]
	}
	return &noExtra
}

// Extra returns what task t shares with others (name, stream, class,
// device, op type, task type, input shapes, model id).
func (r *Rank) Extra(t *DeviceTask) TaskExtra { return r.Extras.Get(t.Extra) }

// Name is task t's name (a symbol of r.Syms).
func (r *Rank) Name(t *DeviceTask) Sym { return r.at(t).Name }

// Stream is task t's physical stream id, -1 when unknown.
func (r *Rank) Stream(t *DeviceTask) int32 { return r.at(t).Stream }

// Class is task t's class.
func (r *Rank) Class(t *DeviceTask) TaskClass { return t.Extra.Class() }

// TaskDevice is task t's device in a file that holds several, 0 otherwise.
func (r *Rank) TaskDevice(t *DeviceTask) int16 { return r.at(t).Device }

// OpType is task t's op type (a symbol of r.Syms).
func (r *Rank) OpType(t *DeviceTask) Sym { return r.at(t).OpType }

// TaskType is task t's task type (a symbol of r.Syms).
func (r *Rank) TaskType(t *DeviceTask) Sym { return r.at(t).TaskType }

// InputShapes is task t's input shapes (a symbol of r.Syms).
func (r *Rank) InputShapes(t *DeviceTask) Sym { return r.at(t).InputShapes }

// ModelID is task t's model id (4294967295 for single-op mode).
func (r *Rank) ModelID(t *DeviceTask) uint32 { return r.at(t).ModelID }

// SetExtra sets what task t shares with others.
func (r *Rank) SetExtra(t *DeviceTask, e TaskExtra) { t.Extra = r.Extras.ID(e) }

// ClearTaskDevices sets every task's device to 0 (a file that turned out to
// hold one device).
func (r *Rank) ClearTaskDevices() {
	to := make([]Extra, r.Extras.Len()) // old index -> new id + 1, 0 unknown yet
	for i := range r.Tasks {
		t := &r.Tasks[i]
		if i := t.Extra.Index(); i < len(to) && to[i] != 0 {
			t.Extra = to[i] - 1
			continue
		}
		old := t.Extra
		x := r.Extra(t)
		x.Device = 0
		r.SetExtra(t, x)
		if i := old.Index(); i < len(to) {
			to[i] = t.Extra + 1
		}
	}
}

// CompactExtras drops the table entries no task uses (a reader that sets a
// task's fields one column at a time makes one for each step), renumbering
// the tasks' extras in their order of first use.
func (r *Rank) CompactExtras() {
	to := make([]Extra, len(r.Extras.list)) // old index -> new id + 1, 0 unused yet
	c := Extras{long: r.Extras.long, longIDs: r.Extras.longIDs}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		k := t.Extra.Index()
		if k >= len(to) {
			t.Extra = 0 // an entry the table does not hold reads as TaskExtra{}
			continue
		}
		if to[k] == 0 {
			to[k] = c.ID(r.Extras.list[k]) + 1
		}
		t.Extra = to[k] - 1
	}
	r.Extras = c
}
