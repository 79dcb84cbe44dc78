package model

import (
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
