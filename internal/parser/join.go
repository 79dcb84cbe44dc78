package parser

import (
	"slices"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// taskIndex finds a rank's compute tasks by start, to join
// kernel_details.csv rows onto the timeline. When the tasks are already in
// start order (the trace readers produce them so) it searches them in
// place and needs no memory; otherwise it holds 4 bytes per compute task
// (indexes sorted by start). Rows come mostly in start order too, so a
// search starts where the last one ended (a merge join) and falls back to
// a binary search for a row out of order.
type taskIndex struct {
	r     *model.Rank
	tasks []model.DeviceTask
	// idx are the compute tasks sorted by start; nil: tasks is in start
	// order and searched whole (the caller skips tasks not compute)
	idx []int32
	n   int // positions searched: len(idx) or len(tasks)
	cur int // where the last search found its first task
}

func newTaskIndex(r *model.Rank) *taskIndex {
	tasks := r.Tasks
	ti := &taskIndex{r: r, tasks: tasks, n: len(tasks)}
	sorted := true
	for i := 1; i < len(tasks); i++ {
		if tasks[i].Start < tasks[i-1].Start {
			sorted = false
			break
		}
	}
	if sorted {
		return ti
	}
	ti.idx = []int32{}
	for i := range tasks {
		if r.Class(&tasks[i]) == model.ClassCompute {
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
	ti.n = len(ti.idx)
	return ti
}

// start returns the start of the task at position i.
func (ti *taskIndex) start(i int) int64 {
	if ti.idx == nil {
		return ti.tasks[i].Start
	}
	return ti.tasks[ti.idx[i]].Start
}

// task returns the task at position i, nil when it is not a compute task.
func (ti *taskIndex) task(i int) *model.DeviceTask {
	if ti.idx == nil {
		t := &ti.tasks[i]
		if ti.r.Class(t) != model.ClassCompute {
			return nil
		}
		return t
	}
	return &ti.tasks[ti.idx[i]]
}

// matches returns the positions [lo, hi) of the tasks that start at start
// (ti.task(i) for each: nil for a task that is not compute); the caller
// checks names (no callback: a closure per kernel_details row would escape
// to the heap).
func (ti *taskIndex) matches(start int64) (lo, hi int) {
	c := ti.cur
	if c > 0 && ti.start(c-1) >= start {
		// out of order (or the first row): binary search before c
		lo = ti.search(0, c, start)
	} else {
		// every position before c starts earlier: gallop forward
		step, prev := 1, c
		for c < ti.n && ti.start(c) < start {
			prev = c + 1
			c += step
			step *= 2
		}
		lo = ti.search(prev, min(c, ti.n), start)
	}
	ti.cur = lo
	hi = lo
	for hi < ti.n && ti.start(hi) == start {
		hi++
	}
	return lo, hi
}

// search returns the first position in [lo, hi) whose task starts at or
// after start (hi if none), given that every position from hi on does.
func (ti *taskIndex) search(lo, hi int, start int64) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ti.start(m) < start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
