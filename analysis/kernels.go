package analysis

import (
	"reflect"
	"sort"

	"github.com/npuprof/npuprof/parser/model"
	"gonum.org/v1/gonum/stat"
)

// KernelStat summarizes one kernel name.
type KernelStat struct {
	Name, OpType, Core string
	Count              int
	Total              int64 // ns
	Mean, P50, P99     float64
}

// KernelsResult holds compute-kernel totals and the top kernels.
type KernelsResult struct {
	Total Stat
	// Top kernels by total time (at most TopKernels).
	Top []KernelStat
	// Distinct is the number of distinct kernel names.
	Distinct int
}

// TopKernels is how many kernels KernelsPass keeps.
const TopKernels = 50

// KernelsPass sums compute kernels and ranks them by total time.
var KernelsPass = &Pass{
	Name: "kernels",
	Doc: `compute-kernel totals and top kernels

kernel.compute.time_us/.count are the sum of durations and the count of
compute kernels (the set whose union is overlap.computing.time_us). The top
kernels table gives count, total, mean, p50 and p99 per kernel name.`,
	Requires:   []*Pass{TimelinePass},
	ResultType: reflect.TypeOf((*KernelsResult)(nil)),
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := ctx.ResultOf[TimelinePass].(*Timeline)
		if !tl.HaveCompute {
			ctx.Unavailable(noDeviceData(ctx), "kernel.compute.time_us", "kernel.compute.count")
			return (*KernelsResult)(nil), nil
		}
		res := &KernelsResult{}
		type acc struct {
			name, op, core string
			durs           []float64
			total          int64
		}
		by := map[model.Sym]*acc{}
		for _, i := range tl.ComputeTasks {
			t := &r.Tasks[i]
			res.Total.add(t.Dur)
			a := by[t.Name]
			if a == nil {
				a = &acc{name: r.Str(t.Name), op: r.Str(t.OpType), core: r.Str(t.TaskType)}
				by[t.Name] = a
			}
			a.durs = append(a.durs, float64(t.Dur)/1000)
			a.total += t.Dur
		}
		ctx.SetUs("kernel.compute.time_us", res.Total.Total)
		ctx.SetCount("kernel.compute.count", res.Total.Count)
		all := make([]*acc, 0, len(by))
		for _, a := range by {
			all = append(all, a)
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].total != all[j].total {
				return all[i].total > all[j].total
			}
			return all[i].name < all[j].name
		})
		res.Distinct = len(all)
		if len(all) > TopKernels {
			all = all[:TopKernels]
		}
		for _, a := range all {
			sort.Float64s(a.durs)
			res.Top = append(res.Top, KernelStat{
				Name: a.name, OpType: a.op, Core: a.core, Count: len(a.durs), Total: a.total,
				Mean: float64(a.total) / 1000 / float64(len(a.durs)),
				P50:  stat.Quantile(0.5, stat.Empirical, a.durs, nil),
				P99:  stat.Quantile(0.99, stat.Empirical, a.durs, nil),
			})
		}
		return res, nil
	},
}
