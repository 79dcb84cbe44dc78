package traceview

import "github.com/npuprof/npuprof/internal/parser/model"

// opSummer summarizes the framework ops as build decodes the Python logs,
// for a rank that takes their summary in place of them
// (model.Rank.SetOpSummary): each op's name counted, its exact duplicates
// (same thread, start, name and duration: model.Rank.DropDuplicates's)
// dropped and counted, and the ops that flows start at numbered, with
// their ends, for the task links. It needs each thread's ops in time
// order, as the file writes them, to see a duplicate among the ops of
// its thread and start: a thread that goes back in time stops it, and
// build makes the ops instead.
type opSummer struct {
	sum model.OpSummary
	// runs are, by tid index, the ops at the thread's latest start
	runs []opRun
}

type opRun struct {
	ts  int64
	set bool
	ops []runOp
}

type runOp struct {
	name uint32
	key  int32 // the op's number in sum.Ends, -1: none yet
	dur  int64
}

func newOpSummer(nNames, nTids int) *opSummer {
	return &opSummer{sum: model.OpSummary{Names: make([]int32, nNames)}, runs: make([]opRun, nTids)}
}

// op summarizes the op s; at says that flows start at its place. It
// returns the op's number (-1 when not at), and false when s's thread
// went back in time.
func (o *opSummer) op(s *slice, at bool) (int32, bool) {
	r := &o.runs[s.tid]
	switch {
	case r.set && s.ts < r.ts:
		return -1, false
	case !r.set || s.ts > r.ts:
		r.ts, r.set, r.ops = s.ts, true, r.ops[:0]
	}
	for i := range r.ops {
		if x := &r.ops[i]; x.name == s.name && x.dur == s.dur {
			// an exact duplicate: counted, and the kept op's number
			if o.sum.Dups == 0 || s.ts < o.sum.FirstDup {
				o.sum.FirstDup = s.ts
			}
			o.sum.Dups++
			if x.key < 0 && at {
				x.key = o.number(s)
			}
			return x.key, true
		}
	}
	o.sum.Names[s.name]++
	key := int32(-1)
	if at {
		key = o.number(s)
	}
	r.ops = append(r.ops, runOp{name: s.name, key: key, dur: s.dur})
	return key, true
}

// number numbers the op s, keeping its end.
func (o *opSummer) number(s *slice) int32 {
	o.sum.Ends = append(o.sum.Ends, s.ts+s.dur)
	return int32(len(o.sum.Ends) - 1)
}
