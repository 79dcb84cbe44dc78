package model

import "maps"

// TaskExtra is what a device task shares with many others: its op type,
// task type, input shapes and model id. A rank's hundreds of thousands of
// tasks take a few thousand distinct sets of them, so the rank's table
// (Rank.Extras) holds each once and a task holds its index
// (DeviceTask.Extra): 16 bytes less a task (48 to 32).
type TaskExtra struct {
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
}

// Extra is the index of a TaskExtra in its rank's table; 0 is always
// TaskExtra{} (no shapes, model id 0), so a zero DeviceTask needs no table.
type Extra uint32

// Extras is a table of TaskExtra values, each once, by Extra. The zero
// value is an empty table ready to use. Like Syms, only parsers add to
// it, from the one goroutine that fills the rank; passes only read it.
type Extras struct {
	list []TaskExtra // by Extra; list[0] is TaskExtra{} once anything was added
	ids  map[TaskExtra]Extra
	// recent ids by a hash of their value: a reader asks for the same
	// few values again and again, and a 16-byte key is a slow map key
	recent []Extra
}

// recentSlots is the size of Extras.recent (a power of two).
const recentSlots = 256

// slot is e's place in Extras.recent.
func (e *TaskExtra) slot() uint32 {
	h := uint32(e.OpType)*0x9E3779B1 ^ uint32(e.TaskType)*0x85EBCA77 ^ uint32(e.InputShapes)*0xC2B2AE3D ^ e.ModelID*0x27D4EB2F
	return h >> 24 // the top 8 bits: recentSlots
}

// ID returns the index of e, adding e when it is new.
func (x *Extras) ID(e TaskExtra) Extra {
	if x.recent == nil && e == (TaskExtra{}) {
		return 0
	}
	h := e.slot()
	if x.recent != nil {
		if id := x.recent[h]; x.list[id] == e {
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
		id = Extra(len(x.list))
		x.list = append(x.list, e)
		x.ids[e] = id
	}
	x.recent[h] = id
	return id
}

// Get returns the TaskExtra of id (TaskExtra{} for 0 or an id the table
// does not hold).
func (x *Extras) Get(id Extra) TaskExtra {
	if int(id) < len(x.list) {
		return x.list[id]
	}
	return TaskExtra{}
}

// Len returns the number of entries, TaskExtra{} included.
func (x *Extras) Len() int { return max(1, len(x.list)) }

// Clone returns an independent copy of the table.
func (x *Extras) Clone() Extras {
	c := Extras{list: append([]TaskExtra(nil), x.list...), recent: append([]Extra(nil), x.recent...)}
	c.ids = maps.Clone(x.ids)
	return c
}

// Extra returns task t's op type, task type, input shapes and model id.
func (r *Rank) Extra(t *DeviceTask) TaskExtra { return r.Extras.Get(t.Extra) }

// OpType is task t's op type (a symbol of r.Syms).
func (r *Rank) OpType(t *DeviceTask) Sym { return r.Extras.Get(t.Extra).OpType }

// TaskType is task t's task type (a symbol of r.Syms).
func (r *Rank) TaskType(t *DeviceTask) Sym { return r.Extras.Get(t.Extra).TaskType }

// InputShapes is task t's input shapes (a symbol of r.Syms).
func (r *Rank) InputShapes(t *DeviceTask) Sym { return r.Extras.Get(t.Extra).InputShapes }

// ModelID is task t's model id (4294967295 for single-op mode).
func (r *Rank) ModelID(t *DeviceTask) uint32 { return r.Extras.Get(t.Extra).ModelID }

// SetExtra sets task t's op type, task type, input shapes and model id.
func (r *Rank) SetExtra(t *DeviceTask, e TaskExtra) { t.Extra = r.Extras.ID(e) }
