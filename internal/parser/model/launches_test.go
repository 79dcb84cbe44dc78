package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TaskLaunches and CountOpNames read the same before and after
// ReduceFramework, which drops the ops and links; HCCL links have no
// launch. A task that starts more than 2.1 s after its op ended makes
// the reduction keep the ends themselves.
func TestReduceFramework(t *testing.T) {
	for _, start := range []int64{0, 5e9} {
		testReduceFramework(t, start)
	}
}

func testReduceFramework(t *testing.T, start int64) {
	r := NewRank("x")
	a, b := r.Intern("aten::add"), r.Intern("aten::mul")
	r.Tasks = make([]DeviceTask, 3)
	r.Tasks[0].Start = start
	r.HCCL = make([]HCCLOp, 1)
	r.FrameworkOps = []FrameworkOp{{Start: 10, Dur: 5, Name: a}, {Start: 20, Dur: 1, Name: b}, {Start: 30, Dur: 2, Name: a}}
	r.Links = []Link{{Op: 2, Task: 2, HCCL: -1}, {Op: 1, Task: -1, HCCL: 0}, {Op: 0, Task: 0, HCCL: -1}}
	r.Have.Framework = true
	// the task links, in order, with their ops' ends
	launches := func() (task []int32, end []int64) {
		v := r.TaskLaunches()
		for i := range v.Len() {
			if v.Task(i) >= 0 {
				task, end = append(task, v.Task(i)), append(end, v.End(i))
			}
		}
		return task, end
	}
	task, end := launches()
	require.Equal(t, []int32{2, 0}, task)
	require.Equal(t, []int64{32, 15}, end)
	v := r.TaskLaunches()
	require.Equal(t, 3, v.Len(), "the HCCL link is in the view before the reduction")
	counts := make([]int32, r.Syms.Len())
	r.CountOpNames(counts)
	require.Equal(t, int32(2), counts[a])
	require.Equal(t, int32(1), counts[b])
	for range 2 { // a second reduction changes nothing
		r.ReduceFramework()
		require.Equal(t, start == 0, r.launched.before != nil)
		require.Equal(t, start != 0, r.launched.end != nil)
		require.Nil(t, r.FrameworkOps)
		require.Nil(t, r.Links)
		require.True(t, r.Have.Framework)
		v := r.TaskLaunches()
		require.Equal(t, 2, v.Len(), "the task links alone after it")
		t2, e2 := launches()
		require.Equal(t, task, t2)
		require.Equal(t, end, e2)
		c2 := make([]int32, r.Syms.Len())
		r.CountOpNames(c2)
		require.Equal(t, counts, c2)
		short := make([]int32, int(b)) // names past its end are skipped
		r.CountOpNames(short)
		require.Equal(t, counts[:b], short)
	}
}

// ReduceFrameworkEarly, then SortTasks and DropDuplicates, gives the
// launches, op name counts and duplicate counts that SortTasks,
// DropDuplicates and then ReduceFramework give, from the links or from
// the task links alone as pairs (SetTaskLinks), on ranks with exact
// duplicate tasks, ops and links, out of order, whose duplicate tasks'
// launches by one op become one link; and each way splits by device
// alike.
func TestReduceFrameworkEarly(t *testing.T) {
	same, dropped := 0, 0
	for seed := uint64(0); seed < 300; seed++ {
		mk := func() *Rank {
			rng := rand.New(rand.NewPCG(seed, 13))
			r := NewRank("x")
			for _, s := range []string{"op1", "op0", "k2", "k1", "k0"} {
				r.Intern(s)
			}
			far := int64(0)
			if seed%5 == 0 {
				far = 3e9 // an op ending more than 2.1 s before its task
			}
			dev := seed%3 == 0
			for i := 0; i < 1+rng.IntN(50); i++ {
				x := TaskExtra{Stream: int32(rng.IntN(3)), Name: r.Intern(fmt.Sprint("k", rng.IntN(3)))}
				if dev {
					x.Device = int16(rng.IntN(2))
					r.AddDevice(int(x.Device))
				}
				r.Tasks = append(r.Tasks, r.NewTask(far+int64(rng.IntN(15)), int64(rng.IntN(3)), x))
			}
			for i := 0; i < 1+rng.IntN(30); i++ {
				r.FrameworkOps = append(r.FrameworkOps, FrameworkOp{Start: int64(rng.IntN(8)), Thread: r.Threads.ID(int64(rng.IntN(2))), Name: r.Intern(fmt.Sprint("op", rng.IntN(2))), Dur: int64(rng.IntN(2))})
			}
			r.HCCL = []HCCLOp{{Start: 3, Name: r.Intern("h")}}
			for i := 0; i < rng.IntN(40); i++ {
				op := int32(rng.IntN(len(r.FrameworkOps)))
				switch rng.IntN(6) {
				case 0:
					r.Links = append(r.Links, Link{Op: op, Task: -1, HCCL: 0})
				case 1:
					if len(r.Links) > 0 { // a link twice
						r.Links = append(r.Links, r.Links[rng.IntN(len(r.Links))])
					}
				default:
					r.Links = append(r.Links, Link{Op: op, Task: int32(rng.IntN(len(r.Tasks))), HCCL: -1})
				}
			}
			// exact copies of tasks and ops, launched by their original's
			// op or another
			for i := 0; i < rng.IntN(6); i++ {
				k := rng.IntN(len(r.Tasks))
				r.Tasks = append(r.Tasks, r.Tasks[k])
				for _, l := range r.Links {
					if l.Task == int32(k) && rng.IntN(2) == 0 {
						r.Links = append(r.Links, Link{Op: l.Op, Task: int32(len(r.Tasks) - 1), HCCL: -1})
					}
				}
			}
			for i := 0; i < rng.IntN(6); i++ {
				k := rng.IntN(len(r.FrameworkOps))
				r.FrameworkOps = append(r.FrameworkOps, r.FrameworkOps[k])
				for _, l := range r.Links {
					if l.Op == int32(k) && rng.IntN(2) == 0 {
						r.Links = append(r.Links, Link{Op: int32(len(r.FrameworkOps) - 1), Task: l.Task, HCCL: l.HCCL})
					}
				}
			}
			r.Have.Framework = true
			return r
		}
		want, got := mk(), mk()
		want.SortTasks()
		dw := want.DropDuplicates()
		want.ReduceFramework()
		if seed%2 == 1 {
			// a reader that keeps the task links alone, as pairs
			var pairs []OpTask
			for _, l := range got.Links {
				if l.Task >= 0 {
					pairs = append(pairs, OpTask{l.Op, l.Task})
				}
			}
			got.Links = nil
			got.SetTaskLinks(pairs)
			if seed%4 == 3 {
				summarize(got)
			}
		}
		got.ReduceFrameworkEarly()
		require.NotNil(t, got.launched, "seed %d", seed)
		require.Nil(t, got.FrameworkOps)
		if len(got.launched.pending.same) > 0 {
			same++
		}
		n := len(got.launched.task)
		got.SortTasks()
		dg := got.DropDuplicates()
		require.Nil(t, got.launched.pending, "DropDuplicates is done with it")
		if len(got.launched.task) < n && dg.Tasks == 0 {
			dropped++ // links that were one twice, dropped
		}
		require.Equal(t, dw, dg, "seed %d", seed)
		require.NoError(t, got.Validate())
		requireSameLaunches(t, want, got, seed)
		ws, gs := want.SplitDevices(), got.SplitDevices()
		require.Len(t, gs, len(ws))
		for k := range ws {
			require.Equal(t, ws[k].Have.Framework, gs[k].Have.Framework)
			requireSameLaunches(t, ws[k], gs[k], seed)
		}
	}
	require.Positive(t, same, "launches that a duplicate could make one")
	require.Positive(t, dropped, "links that were one twice")
}

// summarize replaces r's framework ops by their summary, as a reader
// that never makes them does: the exact duplicates dropped and counted,
// the distinct ops numbered, the task links' ops those numbers.
func summarize(r *Rank) {
	s := &OpSummary{Names: make([]int32, r.Syms.Len())}
	key := map[FrameworkOp]int32{}
	keys := make([]int32, len(r.FrameworkOps))
	for i, o := range r.FrameworkOps {
		k, ok := key[o]
		if ok {
			if s.Dups == 0 || o.Start < s.FirstDup {
				s.FirstDup = o.Start
			}
			s.Dups++
		} else {
			k = int32(len(s.Ends))
			key[o] = k
			s.Ends = append(s.Ends, o.Start+o.Dur)
			s.Names[o.Name]++
		}
		keys[i] = k
	}
	for i := range r.opTasks {
		r.opTasks[i].Op = keys[r.opTasks[i].Op]
	}
	r.FrameworkOps = nil
	r.SetOpSummary(s)
}

func requireSameLaunches(t *testing.T, want, got *Rank, seed uint64) {
	t.Helper()
	v, w := want.TaskLaunches(), got.TaskLaunches()
	require.Equal(t, v.Len(), w.Len(), "seed %d", seed)
	for i := range v.Len() {
		require.Equal(t, v.Task(i), w.Task(i), "seed %d launch %d", seed, i)
		require.Equal(t, v.End(i), w.End(i), "seed %d launch %d", seed, i)
	}
	cw, cg := make([]int32, want.Syms.Len()), make([]int32, got.Syms.Len())
	want.CountOpNames(cw)
	got.CountOpNames(cg)
	require.Equal(t, cw, cg, "seed %d", seed)
}

// A link out of range is left for Validate to say: no early reduction.
func TestReduceFrameworkEarlyBadLink(t *testing.T) {
	r := NewRank("x")
	r.Tasks = make([]DeviceTask, 1)
	r.FrameworkOps = []FrameworkOp{{Start: 1}}
	r.Links = []Link{{Op: 1, Task: 0, HCCL: -1}}
	r.ReduceFrameworkEarly()
	require.Nil(t, r.launched)
	require.ErrorContains(t, r.Validate(), "link out of range")
	// the same link as a pair goes back to Links for Validate
	r.Links = nil
	r.WillReduceEarly()
	require.True(t, r.TaskLinksOnly())
	r.SetTaskLinks([]OpTask{{Op: 0, Task: 0}, {Op: 0, Task: 1}})
	r.ReduceFrameworkEarly()
	require.Nil(t, r.launched)
	require.Nil(t, r.opTasks)
	require.Equal(t, []Link{{Op: 0, Task: 0, HCCL: -1}, {Op: 0, Task: 1, HCCL: -1}}, r.Links)
	require.ErrorContains(t, r.Validate(), "link out of range")
}
