package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// sortReference is the straightforward SortTasks: sort copies, remap links.
func sortReference(r *Rank) {
	ti := make([]int, len(r.Tasks))
	for i := range ti {
		ti[i] = i
	}
	sort.SliceStable(ti, func(a, b int) bool {
		x, y := r.Tasks[ti[a]], r.Tasks[ti[b]]
		if x.Start != y.Start {
			return x.Start < y.Start
		}
		if r.Stream(&x) != r.Stream(&y) {
			return r.Stream(&x) < r.Stream(&y)
		}
		return r.Str(r.Name(&x)) < r.Str(r.Name(&y))
	})
	hi := make([]int, len(r.HCCL))
	for i := range hi {
		hi[i] = i
	}
	sort.SliceStable(hi, func(a, b int) bool {
		x, y := r.HCCL[hi[a]], r.HCCL[hi[b]]
		if x.Start != y.Start {
			return x.Start < y.Start
		}
		return r.Str(x.Name) < r.Str(y.Name)
	})
	oi := make([]int, len(r.FrameworkOps))
	for i := range oi {
		oi[i] = i
	}
	sort.SliceStable(oi, func(a, b int) bool {
		x, y := r.FrameworkOps[oi[a]], r.FrameworkOps[oi[b]]
		if x.Start != y.Start {
			return x.Start < y.Start
		}
		if r.Tid(&x) != r.Tid(&y) {
			return r.Tid(&x) < r.Tid(&y)
		}
		return r.Str(x.Name) < r.Str(y.Name)
	})
	oinv := make([]int32, len(oi))
	ops := make([]FrameworkOp, len(oi))
	for n, o := range oi {
		oinv[o] = int32(n)
		ops[n] = r.FrameworkOps[o]
	}
	inv, hinv := make([]int32, len(ti)), make([]int32, len(hi))
	tasks, hccl := make([]DeviceTask, len(ti)), make([]HCCLOp, len(hi))
	for n, o := range ti {
		inv[o] = int32(n)
		tasks[n] = r.Tasks[o]
	}
	for n, o := range hi {
		hinv[o] = int32(n)
		hccl[n] = r.HCCL[o]
	}
	for i := range r.Links {
		if l := &r.Links[i]; int(l.Op) < len(oinv) {
			l.Op = oinv[l.Op]
		}
		if l := &r.Links[i]; l.Task >= 0 {
			l.Task = inv[l.Task]
		} else {
			l.HCCL = hinv[l.HCCL]
		}
	}
	if len(tasks) > 0 {
		r.Tasks = tasks
	}
	if len(ops) > 0 {
		r.FrameworkOps = ops
	}
	if len(hccl) > 0 {
		r.HCCL = hccl
	}
	sort.SliceStable(r.Steps, func(a, b int) bool { return r.Steps[a].Start < r.Steps[b].Start })
}

func TestSortTasksMatchesReference(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		mk := func() *Rank {
			rng := rand.New(rand.NewPCG(seed, 7))
			r := NewRank("x")
			// symbols in the reverse of their strings' order: sorting
			// must compare strings, not symbols
			for _, s := range []string{"op1", "op0", "k2", "k1", "k0", "h1", "h0"} {
				r.Intern(s)
			}
			n := rng.IntN(60)
			sorted := seed%4 == 0
			for i := 0; i < n; i++ {
				st := int64(rng.IntN(20))
				if sorted {
					st = int64(i)
				}
				r.Tasks = append(r.Tasks, r.NewTask(st, int64(i), TaskExtra{Stream: int32(rng.IntN(3)), Name: r.Intern(fmt.Sprint("k", rng.IntN(3)))}))
			}
			for i := 0; i < rng.IntN(40); i++ {
				r.FrameworkOps = append(r.FrameworkOps, FrameworkOp{Start: int64(rng.IntN(10)), Thread: r.Threads.ID(int64(rng.IntN(3))), Name: r.Intern(fmt.Sprint("op", rng.IntN(2))), Dur: int64(i)})
			}
			for i := 0; i < rng.IntN(20); i++ {
				r.HCCL = append(r.HCCL, HCCLOp{Start: int64(rng.IntN(10)), Name: r.Intern(fmt.Sprint("h", rng.IntN(2))), Dur: int64(i)})
			}
			for i := 0; i < rng.IntN(30); i++ {
				if rng.IntN(2) == 0 && len(r.Tasks) > 0 {
					r.Links = append(r.Links, Link{Op: int32(rng.IntN(len(r.FrameworkOps) + 1)), Task: int32(rng.IntN(len(r.Tasks))), HCCL: -1})
				} else if len(r.HCCL) > 0 {
					r.Links = append(r.Links, Link{Op: int32(rng.IntN(len(r.FrameworkOps) + 1)), Task: -1, HCCL: int32(rng.IntN(len(r.HCCL)))})
				}
			}
			return r
		}
		_ = rng
		want, got := mk(), mk()
		sortReference(want)
		got.SortTasks()
		require.Equal(t, want, got, "seed %d", seed)
	}
}

// TestSortTasksNearlySorted covers settle's insertion sort (a few tasks
// late, as the readers leave them), its budget and the fallback after it:
// the moves of both steps compose to the reference order and link remap.
func TestSortTasksNearlySorted(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		mk := func() *Rank {
			rng := rand.New(rand.NewPCG(seed, 11))
			r := NewRank("x")
			for _, s := range []string{"k2", "k1", "k0"} {
				r.Intern(s)
			}
			n := 100 + rng.IntN(400)
			for i := 0; i < n; i++ {
				r.Tasks = append(r.Tasks, r.NewTask(int64(i/2), int64(i), TaskExtra{Stream: int32(rng.IntN(2)), Name: r.Intern(fmt.Sprint("k", rng.IntN(3)))}))
			}
			// a few tasks late by up to 3 places, or (seed%3 == 0) a
			// stretch far out of place past the insertion budget
			for k := 0; k < 1+rng.IntN(8); k++ {
				i := 3 + rng.IntN(n-3)
				j := i - 1 - rng.IntN(3)
				r.Tasks[i], r.Tasks[j] = r.Tasks[j], r.Tasks[i]
			}
			if seed%3 == 0 {
				slices.Reverse(r.Tasks[n/2:])
			}
			for i := 0; i < n/2; i++ {
				r.Links = append(r.Links, Link{Op: 0, Task: int32(rng.IntN(n)), HCCL: -1})
			}
			r.FrameworkOps = []FrameworkOp{{Start: 1}}
			return r
		}
		want, got := mk(), mk()
		sortReference(want)
		got.SortTasks()
		require.Equal(t, want, got, "seed %d", seed)
	}
}

func TestInvert(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for n := 0; n < 50; n++ {
		p := make([]int32, n)
		for i := range p {
			p[i] = int32(i)
		}
		rng.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
		want := make([]int32, n)
		for newI, oldI := range p {
			want[oldI] = int32(newI)
		}
		invert(p)
		require.Equal(t, want, p)
	}
}
