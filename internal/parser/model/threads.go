package model

import "maps"

// Thread is the index of a thread id in its rank's table (Rank.Threads).
// A rank's framework ops run on a handful of host threads, so an op holds
// 4 bytes instead of its 8-byte tid.
type Thread uint32

// Threads is a table of thread ids, each once, by Thread. The zero value
// is an empty table ready to use. Like Syms, only parsers add to it.
type Threads struct {
	list []int64
	ids  map[int64]Thread
	// the last tid asked for and its index: neighbouring ops mostly
	// share their thread
	last   int64
	lastID Thread
	set    bool
}

// ID returns the index of tid, adding tid when it is new.
func (x *Threads) ID(tid int64) Thread {
	if x.set && tid == x.last {
		return x.lastID
	}
	id, ok := x.ids[tid]
	if !ok {
		if x.ids == nil {
			x.ids = make(map[int64]Thread, 8)
		}
		id = Thread(len(x.list))
		x.list = append(x.list, tid)
		x.ids[tid] = id
	}
	x.last, x.lastID, x.set = tid, id, true
	return id
}

// Tid returns the thread id of id (0 for an id the table does not hold).
func (x *Threads) Tid(id Thread) int64 {
	if int(id) < len(x.list) {
		return x.list[id]
	}
	return 0
}

// Clone returns an independent copy of the table.
func (x *Threads) Clone() Threads {
	c := Threads{list: append([]int64(nil), x.list...), last: x.last, lastID: x.lastID, set: x.set}
	c.ids = maps.Clone(x.ids)
	return c
}

// Tid is framework op o's thread id.
func (r *Rank) Tid(o *FrameworkOp) int64 { return r.Threads.Tid(o.Thread) }
