package analysis

import (
	"math/rand"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// TestEmpiricalQuantileMatchesGonum: the selection gives exactly what
// sorting and stat.Quantile(Empirical) give, for every length up to 300
// and for few distinct values (many ties), at the kernels table's p50/p99
// and at the edges.
func TestEmpiricalQuantileMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for n := 1; n <= 300; n++ {
		for _, distinct := range []int{1, 3, 1000} {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.Intn(distinct)) / 8
			}
			sorted := slices.Clone(x)
			slices.Sort(sorted)
			for _, p := range []float64{0, 0.01, 0.25, 0.5, 0.99, 1} {
				want := stat.Quantile(p, stat.Empirical, sorted, nil)
				if got := empiricalQuantile(p, slices.Clone(x)); got != want {
					t.Fatalf("n=%d distinct=%d p=%v: got %v, gonum %v", n, distinct, p, got, want)
				}
			}
		}
	}
}

// TestNameOpMemoFollowsOpType: a name seen with two op types is classified
// by each task's own op type, as moeRole would per task.
func TestNameOpMemoFollowsOpType(t *testing.T) {
	r := model.NewRank("memo")
	name := r.Intern("aclnnFoo_1")
	tasks := []model.DeviceTask{
		r.NewTask(0, 0, model.TaskExtra{Name: name, OpType: r.Intern("Cumsum")}),
		r.NewTask(0, 0, model.TaskExtra{Name: name, OpType: r.Intern("GroupedMatmul")}),
		r.NewTask(0, 0, model.TaskExtra{Name: name, OpType: r.Intern("Cumsum")}),
		r.NewTask(0, 0, model.TaskExtra{Name: r.Intern("MoeInitRoutingCustom_7")}),
		r.NewTask(0, 0, model.TaskExtra{Name: name}),
	}
	m := newNameOpMemo(r, moeRole)
	for i := range tasks {
		if got, want := m.get(&tasks[i]), moeRole(r, &tasks[i]); got != want {
			t.Fatalf("task %d: memo %d, moeRole %d", i, got, want)
		}
	}
	if got := m.get(&tasks[1]); got != roleGMM {
		t.Fatalf("GroupedMatmul op type: role %d, want roleGMM", got)
	}
}
