package parser

import (
	"slices"

	"github.com/npuprof/npuprof/parser/model"
)

// taskIndex finds a rank's compute tasks by (start, name), to join
// kernel_details.csv rows onto the timeline. It holds 4 bytes per compute
// task (indexes sorted by start) instead of a map of keys with their names:
// for a 200 MB trace that is 1 MB instead of about 10 MB.
type taskIndex struct {
	tasks []model.DeviceTask
	idx   []int32
}

func newTaskIndex(tasks []model.DeviceTask) *taskIndex {
	ti := &taskIndex{tasks: tasks}
	for i := range tasks {
		if tasks[i].Class == model.ClassCompute {
			ti.idx = append(ti.idx, int32(i))
		}
	}
	slices.SortStableFunc(ti.idx, func(a, b int32) int {
		x, y := tasks[a].Start, tasks[b].Start
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return ti
}

// matches returns the positions [lo, hi) in ti.idx of the compute tasks
// that start at start; the caller checks names (no callback: a closure per
// kernel_details row would escape to the heap).
func (ti *taskIndex) matches(start int64) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(ti.idx, start, func(j int32, s int64) int {
		x := ti.tasks[j].Start
		switch {
		case x < s:
			return -1
		case x > s:
			return 1
		}
		return 0
	})
	hi = lo
	for hi < len(ti.idx) && ti.tasks[ti.idx[hi]].Start == start {
		hi++
	}
	return lo, hi
}
