package analysis

import (
	"fmt"
	"slices"
)

// Metrics of the engines cluster pass.
const (
	MetricEnginesCount          = "engines.count"              // count: engines: tp groups of parallel_group_info among the ranks analyzed
	MetricEnginesBusyCount      = "engines.busy.count"         // count: engines whose ranks ran the sampler (the others ran dummy steps only)
	MetricEnginesBusyBatch      = "engines.busy.decode_batch"  // tokens: sum over the busy engines of their largest decode.batch.observed: the requests in flight, at most
	MetricEnginesBusyStepUs     = "engines.busy.step.time_us"  // µs: mean decode.step.time_us over the busy engines' ranks
	MetricEnginesBusyDenseUs    = "engines.busy.dense.time_us" // µs: mean over the busy engines' ranks of the main compute stream's compute-kernel time outside the MoE kernels (gating, routing, Cumsum, dispatch, combine, GroupedMatmul): the attention block, dense matmuls, lm_head and sampler
	engineBusyWhyNoTP           = "no tp group in parallel_group_info (profiler_metadata.json): the engines (data-parallel replicas) cannot be told apart"
	engineBusyWhyNoSamplerCount = "no rank measured sampler.kernels.count (needs the device kernels)"
)

var engineNames = []string{MetricEnginesCount, MetricEnginesBusyCount, MetricEnginesBusyBatch, MetricEnginesBusyStepUs, MetricEnginesBusyDenseUs}

// Engine is one vLLM engine (a data-parallel replica): the ranks of one
// tp group.
type Engine struct {
	Ranks []int
	// Busy: its ranks ran the sampler (a replica that only ran dummy steps
	// for the others' expert-parallel exchanges did not).
	Busy bool
	// DecodeBatch is the largest decode.batch.observed of its ranks (0:
	// unknown); StepUs the mean decode.step.time_us of its ranks (NaN:
	// unknown).
	DecodeBatch int
	StepUs      float64
	HaveStep    bool
}

// EnginesResult lists the engines by their first rank.
type EnginesResult struct {
	Engines []Engine
}

// EnginesPass finds the TP x DP engines and tells the busy ones from the
// dummy ones.
var EnginesPass = &ClusterPass{
	Name: "engines",
	Doc: `vLLM engines (data-parallel replicas) and which of them served requests

An engine is the ranks of one tp group of parallel_group_info. With
expert parallel, an engine without requests still runs every MoE layer
(dummy steps) because the EP exchanges need every rank, but it runs no
sampler: an engine is busy when its ranks ran sampler kernels
(sampler.kernels.count). engines.busy.decode_batch sums the busy engines'
decode batches (the requests in flight, at most), engines.busy.step.time_us
is the mean decode step of their ranks.`,
	Metrics: enginesMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		res := &EnginesResult{}
		byKey := map[string]int{}
		for _, rr := range ctx.Ranks {
			for _, g := range rr.Groups {
				if g.Name != "tp" {
					continue
				}
				k := fmt.Sprint(g.GlobalRanks)
				i, ok := byKey[k]
				if !ok {
					i = len(res.Engines)
					byKey[k] = i
					res.Engines = append(res.Engines, Engine{})
				}
				res.Engines[i].Ranks = append(res.Engines[i].Ranks, rr.Rank)
			}
		}
		if len(res.Engines) == 0 {
			ctx.unavailable(engineBusyWhyNoTP, engineNames...)
			return res, nil
		}
		slices.SortFunc(res.Engines, func(a, b Engine) int { return slices.Min(a.Ranks) - slices.Min(b.Ranks) })
		byRank := map[int]*RankResult{}
		for _, rr := range ctx.Ranks {
			byRank[rr.Rank] = rr
		}
		ctx.setCount(MetricEnginesCount, len(res.Engines))
		if !engineBusy(res, byRank) {
			ctx.unavailable(engineBusyWhyNoSamplerCount, MetricEnginesBusyCount, MetricEnginesBusyBatch, MetricEnginesBusyStepUs, MetricEnginesBusyDenseUs)
			return res, nil
		}
		engineMetrics(ctx, res)
		busyDense(ctx, res, byRank)
		return res, nil
	},
}

// EnginesOf is the engines cluster pass's result.
var EnginesOf = ClusterResultOf[*EnginesResult](EnginesPass)

// engineBusy fills each engine's busy flag, decode batch and step time;
// false when no rank measured the sampler.
func engineBusy(res *EnginesResult, byRank map[int]*RankResult) bool {
	measured := false
	for i := range res.Engines {
		e := &res.Engines[i]
		slices.Sort(e.Ranks)
		var step float64
		n := 0
		for _, r := range e.Ranks {
			m := byRank[r].Metrics
			if v, ok := m[MetricSamplerKernelsCount]; ok {
				measured = true
				e.Busy = e.Busy || v > 0
			}
			e.DecodeBatch = max(e.DecodeBatch, int(m[MetricDecodeBatchObserved]))
			if v, ok := m[MetricDecodeStepUs]; ok {
				step += v
				n++
			}
		}
		if n > 0 {
			e.StepUs, e.HaveStep = step/float64(n), true
		}
	}
	return measured
}

// engineMetrics sets the busy engines' metrics.
func engineMetrics(ctx *ClusterContext, res *EnginesResult) {
	busy, batch, steps := 0, 0, []float64{}
	unknownBatch := false
	var used []int
	for _, e := range res.Engines {
		if !e.Busy {
			continue
		}
		busy++
		batch += e.DecodeBatch
		unknownBatch = unknownBatch || e.DecodeBatch == 0
		used = append(used, e.Ranks...)
		if e.HaveStep {
			steps = append(steps, e.StepUs)
		}
	}
	ctx.setCount(MetricEnginesBusyCount, busy)
	ctx.cluster.used(used, MetricEnginesBusyCount, MetricEnginesBusyBatch, MetricEnginesBusyStepUs)
	if busy == 0 {
		ctx.unavailable("no engine ran the sampler in this capture", MetricEnginesBusyBatch, MetricEnginesBusyStepUs, MetricEnginesBusyDenseUs)
		return
	}
	if unknownBatch {
		ctx.unavailable("a busy engine's ranks measured no decode.batch.observed", MetricEnginesBusyBatch)
	} else {
		ctx.setCount(MetricEnginesBusyBatch, batch)
	}
	if len(steps) == 0 {
		ctx.unavailable("no busy engine's rank measured "+MetricDecodeStepUs, MetricEnginesBusyStepUs)
		return
	}
	var sum float64
	for _, v := range steps {
		sum += v
	}
	ctx.set(MetricEnginesBusyStepUs, sum/float64(len(steps)))
}

// moeKernelMetrics are the MoE kernels' times a rank measures: what
// engines.busy.dense.time_us leaves out of the main stream's compute.
var moeKernelMetrics = []string{MetricMoEGatingUs, MetricMoERoutingUs, MetricMoECumsumUs, MetricMoEDispatchUs, MetricMoECombineUs, MetricMoEGMMUs}

// busyDense sets engines.busy.dense.time_us: over the busy engines'
// ranks, the mean of the main compute stream's compute-kernel time minus
// the MoE kernels' time (at least 0).
func busyDense(ctx *ClusterContext, res *EnginesResult, byRank map[int]*RankResult) {
	var sum float64
	var used []int
	for _, e := range res.Engines {
		if !e.Busy {
			continue
		}
		for _, r := range e.Ranks {
			rr := byRank[r]
			ew := EventWaitOf(rr)
			if ew == nil || ew.Main < 0 {
				continue
			}
			dense := float64(ew.Streams[ew.Main].ComputeTime) / 1000
			for _, m := range moeKernelMetrics {
				dense -= rr.Metrics[m]
			}
			sum += max(dense, 0)
			used = append(used, r)
		}
	}
	if len(used) == 0 {
		ctx.unavailable("no busy engine's rank has a main compute stream (needs the device timeline)", MetricEnginesBusyDenseUs)
		return
	}
	ctx.cluster.used(used, MetricEnginesBusyDenseUs)
	ctx.set(MetricEnginesBusyDenseUs, sum/float64(len(used)))
}
