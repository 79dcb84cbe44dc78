package model

// TaskExtra is what a device task carries that few passes read: its input
// shapes and model id. A rank's hundreds of thousands of tasks share a few
// thousand distinct ones, so the rank's table (Rank.Extras) holds each
// once and a task holds its index (DeviceTask.Extra): 8 bytes less a
// task (48 to 40).
type TaskExtra struct {
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
	// the last value asked for and its id: neighbouring tasks mostly
	// share theirs
	last   TaskExtra
	lastID Extra
}

// ID returns the index of e, adding e when it is new.
func (x *Extras) ID(e TaskExtra) Extra {
	if e == x.last {
		return x.lastID
	}
	if e == (TaskExtra{}) {
		return 0
	}
	id, ok := x.ids[e]
	if !ok {
		if x.ids == nil {
			x.ids = make(map[TaskExtra]Extra, 64)
			x.list = append(x.list, TaskExtra{})
		}
		id = Extra(len(x.list))
		x.list = append(x.list, e)
		x.ids[e] = id
	}
	x.last, x.lastID = e, id
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
	c := Extras{list: append([]TaskExtra(nil), x.list...), last: x.last, lastID: x.lastID}
	if x.ids != nil {
		c.ids = make(map[TaskExtra]Extra, len(x.ids))
		for k, v := range x.ids {
			c.ids[k] = v
		}
	}
	return c
}

// InputShapes is task t's input shapes (a symbol of r.Syms).
func (r *Rank) InputShapes(t *DeviceTask) Sym { return r.Extras.Get(t.Extra).InputShapes }

// ModelID is task t's model id (4294967295 for single-op mode).
func (r *Rank) ModelID(t *DeviceTask) uint32 { return r.Extras.Get(t.Extra).ModelID }

// SetExtra sets task t's input shapes and model id.
func (r *Rank) SetExtra(t *DeviceTask, e TaskExtra) { t.Extra = r.Extras.ID(e) }
