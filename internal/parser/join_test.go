package parser

import (
	"math/rand"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// The merge join finds, for every start, exactly the compute tasks a scan
// of all tasks finds: tasks in start order or not, rows in order, out of
// order or repeated, starts with no task, other tasks at the same start.
func TestTaskIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 200; round++ {
		n := rng.Intn(60)
		r := model.NewRank("x")
		tasks := make([]model.DeviceTask, n)
		start := int64(0)
		for i := range tasks {
			start += int64(rng.Intn(3)) // ties are common
			c := model.ClassCompute
			if rng.Intn(4) == 0 {
				c = model.ClassEventWait
			}
			tasks[i] = r.NewTask(start, 0, model.TaskExtra{Class: c})
		}
		if round%2 == 1 {
			rng.Shuffle(n, func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
		}
		r.Tasks = tasks
		ti := newTaskIndex(r)
		// sorted tasks are searched in place
		sorted := true
		for i := 1; i < n; i++ {
			sorted = sorted && tasks[i].Start >= tasks[i-1].Start
		}
		if sorted != (ti.idx == nil) {
			t.Fatalf("round %d: sorted %v, index %v", round, sorted, ti.idx)
		}
		for q := 0; q < 80; q++ {
			s := int64(rng.Intn(int(start)+4)) - 1
			if q > 0 && rng.Intn(3) > 0 {
				s = int64(q) * start / 80 // mostly in order
			}
			want := map[*model.DeviceTask]bool{}
			for i := range tasks {
				if tasks[i].Start == s && r.Class(&tasks[i]) == model.ClassCompute {
					want[&tasks[i]] = true
				}
			}
			lo, hi := ti.matches(s)
			got := map[*model.DeviceTask]bool{}
			for i := lo; i < hi; i++ {
				if ti.start(i) != s {
					t.Fatalf("round %d: start %d: position %d starts at %d", round, s, i, ti.start(i))
				}
				if p := ti.task(i); p != nil {
					got[p] = true
				}
			}
			if len(got) != len(want) {
				t.Fatalf("round %d: start %d: %d tasks, want %d", round, s, len(got), len(want))
			}
			for p := range want {
				if !got[p] {
					t.Fatalf("round %d: start %d: a task is missing", round, s)
				}
			}
		}
	}
}

// kernelJoin gives a row's op type and shapes to every compute task with
// its start and name, the last row winning, interns only what a task
// takes, and leaves other tasks alone.
func TestKernelJoin(t *testing.T) {
	r := model.NewRank("x")
	a, b, ev := r.Intern("a"), r.Intern("b"), r.Intern("EVENT_WAIT")
	task := func(start int64, name model.Sym, c model.TaskClass) model.DeviceTask {
		return r.NewTask(start, 0, model.TaskExtra{Name: name, Class: c})
	}
	r.Tasks = []model.DeviceTask{
		task(20, a, model.ClassCompute),
		task(10, a, model.ClassCompute),
		task(10, a, model.ClassCompute), // a duplicate: both get the row
		task(10, b, model.ClassCompute),
		task(10, a, model.ClassEventWait),
		task(30, ev, model.ClassCompute),
	}
	j := newKernelJoin(r)
	n0 := r.Syms.Len()
	j.row(5, 1, "a", 1, "T0", 1, "s0")   // no task starts at 5
	j.row(10, 2, "zz", 1, "T0", 1, "s0") // a name the trace never had
	if r.Syms.Len() != n0 {
		t.Fatalf("unmatched rows interned %d strings", r.Syms.Len()-n0)
	}
	j.row(20, 1, "a", 2, "T1", 2, "s1")
	j.row(10, 1, "a", 1, "T0", 0, "") // out of order, no shapes
	j.row(10, 3, "b", 0, "", 2, "s1")
	j.row(10, 1, "a", 2, "T1", 0, "")  // the last row wins
	j.row(30, 0, "", 1, "T0", 1, "s0") // no name: no task named ""
	want := []struct{ op, shapes string }{{"T1", "s1"}, {"T1", ""}, {"T1", ""}, {"", "s1"}, {"", ""}, {"", ""}}
	for i, w := range want {
		tk := r.Tasks[i]
		if r.Str(r.OpType(&tk)) != w.op || r.Str(r.InputShapes(&tk)) != w.shapes {
			t.Errorf("task %d: op type %q shapes %q, want %q %q", i, r.Str(r.OpType(&tk)), r.Str(r.InputShapes(&tk)), w.op, w.shapes)
		}
	}
}
