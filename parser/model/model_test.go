package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDropDuplicates(t *testing.T) {
	mm := func(start, dur int64, stream int32) DeviceTask {
		return DeviceTask{Start: start, Dur: dur, Name: "mm", OpType: "MatMul", TaskType: "AI_CORE", Stream: stream, Class: ClassCompute, ModelID: 4294967295}
	}
	r := NewRank("x")
	r.Tasks = []DeviceTask{mm(10, 5, 2), mm(10, 5, 2), mm(10, 6, 2), mm(10, 5, 3), mm(20, 1, 2), mm(10, 5, 2)}
	r.HCCL = []HCCLOp{{Start: 1, Dur: 2, Name: "hcom_allReduce__586_0_1", Type: "allreduce"}, {Start: 1, Dur: 2, Name: "hcom_allReduce__586_0_1", Type: "allreduce"}}
	r.FrameworkOps = []FrameworkOp{{Start: 0, Dur: 1, Name: "aten::mm"}}
	// links to both copies of the duplicate, and to the HCCL copies
	r.Links = []Link{{Op: 0, Task: 0, HCCL: -1}, {Op: 0, Task: 1, HCCL: -1}, {Op: 0, Task: 4, HCCL: -1}, {Op: 0, Task: -1, HCCL: 1}}
	r.Steps = []Step{{ID: 2, Start: 0, End: 30}, {ID: 2, Start: 0, End: 30}, {ID: 3, Start: 0, End: 40}}
	r.SortTasks()
	require.NoError(t, r.Validate())
	d := r.DropDuplicates()
	require.Equal(t, Duplicates{Tasks: 2, HCCL: 1, Steps: 1, FirstStart: 0}, d)
	require.Len(t, r.FrameworkOps, 1)
	// a different duration or stream is not a duplicate
	require.Equal(t, []DeviceTask{mm(10, 5, 2), mm(10, 6, 2), mm(10, 5, 3), mm(20, 1, 2)}, r.Tasks)
	require.Len(t, r.HCCL, 1)
	require.Equal(t, []Step{{ID: 2, Start: 0, End: 30}, {ID: 3, Start: 0, End: 40}}, r.Steps)
	// links follow the kept copy and collapse
	require.Equal(t, []Link{{Op: 0, Task: 0, HCCL: -1}, {Op: 0, Task: 3, HCCL: -1}, {Op: 0, Task: -1, HCCL: 0}}, r.Links)
	require.NoError(t, r.Validate())
	require.Zero(t, r.DropDuplicates().Total(), "idempotent")
}

// A long run of tasks with the same start, stream and name (hostile input)
// stays linear: the run switches to a map.
func TestDropDuplicatesLongRun(t *testing.T) {
	r := NewRank("x")
	const n = 50000
	for i := 0; i < n; i++ {
		r.Tasks = append(r.Tasks, DeviceTask{Start: 7, Dur: int64(i % (n / 2)), Name: "k", Stream: 1})
	}
	r.SortTasks()
	d := r.DropDuplicates()
	require.Equal(t, n/2, d.Tasks)
	require.Len(t, r.Tasks, n/2)
	seen := map[int64]bool{}
	for _, x := range r.Tasks {
		require.False(t, seen[x.Dur])
		seen[x.Dur] = true
	}
}

func TestValidateRejectsOverflow(t *testing.T) {
	r := NewRank("x")
	r.Tasks = []DeviceTask{{Start: 1 << 62, Dur: 1<<62 - 1}}
	require.NoError(t, r.Validate())
	r.Tasks[0].Dur = 1<<63 - 1
	require.ErrorContains(t, r.Validate(), "out-of-range duration")
	r.Tasks = nil
	r.Links = []Link{{Op: 0, Task: -1, HCCL: -1}}
	r.FrameworkOps = []FrameworkOp{{}}
	require.ErrorContains(t, r.Validate(), "link out of range")
}
