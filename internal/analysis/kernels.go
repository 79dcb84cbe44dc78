package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
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
	// AICPU are the kernels that ran on the AI CPU (Accelerator Core /
	// task type AI_CPU), by total time, with their sum.
	AICPU      []KernelStat
	AICPUTotal Stat
}

// TopKernels is how many kernels KernelsPass keeps.
const TopKernels = 50

// Metrics of the kernels pass.
const (
	MetricKernelComputeUs    = "kernel.compute.time_us" // µs: sum of compute-kernel durations
	MetricKernelComputeCount = "kernel.compute.count"   // count: number of compute kernels
	MetricKernelAICPUUs      = "kernel.aicpu.time_us"   // µs: compute kernels that ran on the AI CPU (task type AI_CPU; a name's AiCpu implementation where the core is N/A); unavailable when the core of a compute kernel is unknown and its name does not decide
	MetricKernelAICPUCount   = "kernel.aicpu.count"     // count: number of those
)

// KernelsPass sums compute kernels and ranks them by total time.
var KernelsPass = &Pass{
	Name: "kernels",
	Doc: `compute-kernel totals and top kernels

kernel.compute.time_us/.count are the sum of durations and the count of
compute kernels (the set whose union is overlap.computing.time_us). The top
kernels table gives count, total, mean, p50 and p99 per kernel name.
kernel.aicpu.time_us/.count sum the compute kernels that ran on the AI CPU
(task type AI_CPU; where the task type does not name the core, a name's
AiCpu implementation). They are unavailable when the core of any compute
kernel is unknown: neither its task type (N/A at Level0's kernel_details,
Other in old traces, none) nor its name tells.`,
	Requires: []*Pass{TimelinePass},
	Metrics:  kernelsMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := TimelineOf(ctx)
		if !tl.HaveCompute && len(r.OpStats) > 0 {
			return kernelsFromOpStats(ctx), nil
		}
		if !tl.HaveCompute {
			ctx.UnavailableAll(noDeviceData(ctx))
			return (*KernelsResult)(nil), nil
		}
		res := &KernelsResult{}
		type acc struct {
			name, op, core string
			count          int
			total          int64
			durs           []float64 // top kernels only, filled by the second walk
		}
		// First walk: count and total by name symbol (a slice: a map lookup
		// per task was most of the pass); the first task of a name gives its
		// op type and core.
		var by []*acc
		var all []*acc
		for _, i := range tl.ComputeTasks {
			t := &r.Tasks[i]
			name, dur := r.Name(t), r.Dur(t)
			res.Total.add(dur)
			if int(name) >= len(by) {
				by = append(by, make([]*acc, int(name)+1-len(by))...)
			}
			a := by[name]
			if a == nil {
				x := r.Extra(t)
				a = &acc{name: r.Str(name), op: r.Str(x.OpType), core: r.Str(x.TaskType)}
				by[name] = a
				all = append(all, a)
			}
			a.count++
			a.total += dur
		}
		ctx.SetUs(MetricKernelComputeUs, res.Total.Total)
		ctx.SetCount(MetricKernelComputeCount, res.Total.Count)
		var split aicpuSplit
		for _, a := range all {
			split.add(a.name, a.op, a.core, a.count, a.total)
		}
		if split.undecided > 0 {
			// a kernel whose core neither its task type nor its name
			// tells (Level0's kernel_details.csv writes N/A, old traces
			// Other, a trace may have none) may have run on the AI CPU:
			// a count without it, 0 included, would be a guess
			ctx.Unavailable(fmt.Sprintf("the core of %d of %d compute kernels is unknown (%s) and their names do not say AI CPU or AI Core", split.undecided, res.Total.Count, unknownCoreWhy(r.Have.Timeline, split.unknownCore, tl.ComputeSource)), MetricKernelAICPUUs, MetricKernelAICPUCount)
		} else {
			aicpuKernels(ctx, res, split.aic)
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].total != all[j].total {
				return all[i].total > all[j].total
			}
			return all[i].name < all[j].name
		})
		res.Distinct = len(all)
		if len(all) > TopKernels {
			for _, a := range all[TopKernels:] {
				a.count = -1 // not kept: the second walk skips it
			}
			all = all[:TopKernels]
		}
		// Second walk: the durations of the top kernels only, into one
		// array sized from the counts, for their percentiles.
		n := 0
		for _, a := range all {
			n += a.count
		}
		buf := make([]float64, 0, n)
		for _, a := range all {
			a.durs, buf = buf[:0:a.count], buf[a.count:a.count]
		}
		for _, i := range tl.ComputeTasks {
			t := &r.Tasks[i]
			if a := by[r.Name(t)]; a.count >= 0 {
				a.durs = append(a.durs, float64(r.Dur(t))/1000)
			}
		}
		res.Top = make([]KernelStat, 0, len(all))
		for _, a := range all {
			// by selection, not sorting: sorting the top kernels'
			// durations (most of the rank's tasks) was most of the pass
			p99 := empiricalQuantile(0.99, a.durs)
			p50 := empiricalQuantile(0.5, a.durs)
			res.Top = append(res.Top, KernelStat{
				Name: keepName(a.name), OpType: keepName(a.op), Core: keepName(a.core), Count: a.count, Total: a.total,
				Mean: float64(a.total) / 1000 / float64(a.count),
				P50:  p50,
				P99:  p99,
			})
		}
		return res, nil
	},
}

// KernelsOf is the kernels pass's result on a rank.
var KernelsOf = RankResultOf[*KernelsResult](KernelsPass)

// OnAICPU is the one test of whether a compute kernel ran on the AI CPU,
// for every metric that asks (kernel.aicpu.*, moe.cumsum.aicpu.*): its
// core (task type) decides when known; otherwise its name, when the
// kernel implementation it names says AiCpu or AiCore
// (aclnnCumsum_CumsumAiCpu_Cumsum); known is false when neither does.
func OnAICPU(core, name string) (on, known bool) {
	if knownCore(core) {
		return core == "AI_CPU", true
	}
	switch {
	case strings.Contains(name, "AiCpu"):
		return true, true
	case strings.Contains(name, "AiCore"):
		return false, true
	}
	return false, false
}

// knownCore reports whether a task type names the core (a placeholder,
// model.PlaceholderTaskType, does not).
func knownCore(core string) bool {
	return !model.PlaceholderTaskType(core)
}

// unknownCoreWhy says why a kernel's core is unknown: what its source
// (the rank's timeline, else kernel_details.csv or op_summary, whose N/A
// is read as "") gives in place of it.
func unknownCoreWhy(timeline bool, core, source string) string {
	switch {
	case core == "N/A" || core == "" && !timeline:
		return fmt.Sprintf("%s names none: Accelerator Core is N/A, as Level0 writes it", source)
	case core == "":
		return fmt.Sprintf("%s names none: the kernels have no Task Type", source)
	}
	return fmt.Sprintf("%s names none: the Task Type is %q", source, core)
}

// aicpuSplit picks the AI CPU kernels (OnAICPU) out of a rank's kernels,
// counting the calls of those whose core neither the core nor the name
// says.
type aicpuSplit struct {
	aic         []KernelStat
	undecided   int
	unknownCore string // the core of the first undecided kernel
}

// add is one kernel name's calls.
func (s *aicpuSplit) add(name, op, core string, count int, total int64) {
	switch on, known := OnAICPU(core, name); {
	case !known:
		if s.undecided == 0 {
			s.unknownCore = core
		}
		s.undecided += count
	case on:
		s.aic = append(s.aic, KernelStat{Name: keepName(name), OpType: keepName(op), Core: keepName(core), Count: count, Total: total})
	}
}

// aicpuKernels records the AI_CPU kernels, by total time.
func aicpuKernels(ctx *Context, res *KernelsResult, all []KernelStat) {
	sort.Slice(all, func(i, j int) bool {
		if all[i].Total != all[j].Total {
			return all[i].Total > all[j].Total
		}
		return all[i].Name < all[j].Name
	})
	for _, k := range all {
		k.Mean = float64(k.Total) / 1000 / float64(k.Count)
		res.AICPU = append(res.AICPU, k)
		res.AICPUTotal.Count += k.Count
		res.AICPUTotal.Total += k.Total
	}
	if len(res.AICPU) > TopKernels {
		res.AICPU = res.AICPU[:TopKernels]
	}
	ctx.SetUs(MetricKernelAICPUUs, res.AICPUTotal.Total)
	ctx.SetCount(MetricKernelAICPUCount, res.AICPUTotal.Count)
}
