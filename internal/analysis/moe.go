package analysis

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// MoE kernel roles, matched on the op type (kernel_details `Type`) or,
// failing that, on the kernel name.
const (
	roleNone = iota
	roleRouting
	roleCumsum
	roleGMM
	roleGating
	roleDispatch
	roleCombine
	// layer openers besides roleRouting (each also a dispatch kernel)
	roleDispatchMC2 // MoeDistributeDispatch*
	roleFusedMC2    // DispatchFFNCombine, DispatchGmmCombineDecode
	rolePermute     // MoeTokenPermute
)

// MoE dispatcher paths (vllm-ascend.md §1.2–1.3): the moe.dispatcher fact.
const (
	DispatcherAllGather = "allgather"
	DispatcherMC2       = "mc2"
	DispatcherFusedMC2  = "fused_mc2"
	DispatcherAllToAll  = "alltoall"
)

// openerPath is the dispatcher path of a kernel that opens a MoE layer.
var openerPath = map[int]string{roleRouting: DispatcherAllGather, roleDispatchMC2: DispatcherMC2, roleFusedMC2: DispatcherFusedMC2, rolePermute: DispatcherAllToAll}

// moeRole reads only the task's extras (r.Name(t), r.OpType(t)):
// nameOpMemo relies on it.
func moeRole(r *model.Rank, t *model.DeviceTask) int {
	name := r.Str(r.Name(t))
	s := r.Str(r.OpType(t))
	if s == "" {
		s = name
	}
	switch {
	case strings.HasPrefix(s, "MoeInitRouting") || strings.Contains(name, "MoeInitRouting"):
		return roleRouting
	case s == "Cumsum" || s == "CumSum" || strings.Contains(name, "Cumsum") || strings.Contains(name, "CumSum"):
		// CumSum: MindSpore's primitive name (Default/.../CumSum-op3)
		return roleCumsum
	case strings.HasPrefix(s, "GroupedMatmul") || strings.Contains(name, "GroupedMatmul"):
		return roleGMM
	case strings.HasPrefix(s, "MoeGatingTopK") || strings.Contains(name, "MoeGatingTopK"):
		return roleGating
	case strings.HasPrefix(s, "MoeDistributeDispatch"):
		return roleDispatchMC2
	case strings.HasPrefix(s, "MoeTokenPermute"):
		return rolePermute
	case strings.HasPrefix(s, "MoeDispatchNormal") || strings.HasPrefix(s, "DispatchLayout"):
		return roleDispatch
	case strings.HasPrefix(s, "MoeDistributeCombine") || strings.HasPrefix(s, "MoeTokenUnpermute") || strings.HasPrefix(s, "MoeFinalizeRouting") || strings.HasPrefix(s, "MoeCombineNormal"):
		return roleCombine
	case strings.HasPrefix(s, "DispatchFFNCombine") || strings.HasPrefix(s, "DispatchGmmCombine"):
		return roleFusedMC2
	}
	return roleNone
}

// MoELayer is one MoE layer executed once, opened by the kernel of its
// dispatcher path (Path): MoeInitRouting* (allgather),
// MoeDistributeDispatch* (mc2), DispatchFFNCombine/DispatchGmmCombineDecode
// (fused_mc2) or MoeTokenPermute with hcom_alltoallv_ (alltoall).
// Its other kernels are MoEResult.LayerCumsum, LayerGMM and LayerCombine.
type MoELayer struct {
	Stream int32
	// Routing is the opening kernel, an index into Rank.Tasks.
	Routing int32
	Path    string
}

// layerKernels are kernels by MoE layer, all in one array: layer l's are
// idx[at[l]:at[l+1]] (4 bytes a kernel and a layer, not a slice of its
// own per layer).
type layerKernels struct{ at, idx []int32 }

// of returns layer l's kernels (nil when it has none).
func (k *layerKernels) of(l int) []int32 {
	if k.at == nil || k.at[l] == k.at[l+1] {
		return nil
	}
	return k.idx[k.at[l]:k.at[l+1]:k.at[l+1]]
}

// layerKernel is a kernel of a layer while the layers are scanned.
type layerKernel struct{ layer, task int32 }

// newLayerKernels groups ks by layer (of n), each layer's in ks' order.
func newLayerKernels(n int, ks []layerKernel) layerKernels {
	if len(ks) == 0 {
		return layerKernels{}
	}
	at := make([]int32, n+1)
	for _, k := range ks {
		at[k.layer+1]++
	}
	for l := 1; l <= n; l++ {
		at[l] += at[l-1]
	}
	idx := make([]int32, len(ks))
	next := slices.Clone(at[:n])
	for _, k := range ks {
		idx[next[k.layer]] = k.task
		next[k.layer]++
	}
	return layerKernels{at: at, idx: idx}
}

// LayerCumsum are the MoE-routing Cumsum kernels that followed layer l's
// opener (indexes into Rank.Tasks).
func (m *MoEResult) LayerCumsum(l int) []int32 { return m.cumsum.of(l) }

// LayerGMM are layer l's GroupedMatmul kernels.
func (m *MoEResult) LayerGMM(l int) []int32 { return m.gmm.of(l) }

// LayerCombine are layer l's combine kernels (MoeDistributeCombine*,
// MoeTokenUnpermute, ...: after the opener, before the next one, same
// stream).
func (m *MoEResult) LayerCombine(l int) []int32 { return m.combine.of(l) }

// MoEResult describes the MoE routing path.
type MoEResult struct {
	Routing, Cumsum, CumsumAICPU, GMM, Gating, Dispatch, Combine Stat
	// CumsumUndecided counts the MoE Cumsum kernels whose core neither
	// their task type nor their name tells (OnAICPU): then CumsumAICPU is
	// not measured.
	CumsumUndecided int
	// cumsumUnknownCore is the task type of the first of them.
	cumsumUnknownCore string
	// OtherCumsum are Cumsum kernels outside the routing path (sampler).
	OtherCumsum Stat
	// Layers index into the model's tasks: RankResult.ReleaseModel drops them with the
	// model (Positions keeps what renderers draw), and their kernels.
	Layers               []MoELayer
	cumsum, gmm, combine layerKernels
	// Positions are the MoE layers by position: the n-th MoeInitRouting*
	// of a profiler step (of the capture when there are no steps) is layer
	// position n. At most MoEMaxPositions; PositionsCapped says that later
	// positions were left out.
	Positions       []MoEPosition
	PositionsCapped bool
	// GMMTokens sums the first dim of each GroupedMatmul's first input,
	// when shapes are known (HaveShapes).
	GMMTokens  int64
	HaveShapes bool
	// CumsumCores counts MoE Cumsum kernels per task type (AI_CPU, ...).
	CumsumCores map[string]int
	// Dispatcher is the path that opened the most layers ("" with no
	// layer); PathLayers counts the layers each path opened and
	// DispatcherEvidence names the kernels that say so.
	Dispatcher         string
	PathLayers         map[string]int
	DispatcherEvidence string
}

// MoEPosition is one MoE layer position: the means, over its occurrences
// (steps), of the MoeInitRouting* kernel's duration and of the summed
// routing-path Cumsum durations, in µs.
type MoEPosition struct {
	RoutingUs, CumsumUs float64
	Count               int
}

// MoEMaxPositions caps MoEResult.Positions (Qwen3-235B has 94 MoE layers).
const MoEMaxPositions = 256

// Metrics of the moe pass.
const (
	MetricMoERoutingUs        = "moe.routing.time_us"            // µs: MoeInitRouting* kernels (Custom, V2, V3)
	MetricMoERoutingCount     = "moe.routing.count"              // count: number of MoeInitRouting* kernels (one per MoE layer executed)
	MetricMoECumsumUs         = "moe.cumsum.time_us"             // µs: Cumsum kernels in the MoE routing path (after MoeInitRouting*, before the next GroupedMatmul*, same stream)
	MetricMoECumsumCount      = "moe.cumsum.count"               // count: number of MoE routing-path Cumsum kernels
	MetricMoECumsumAICPUUs    = "moe.cumsum.aicpu.time_us"       // µs: MoE routing-path Cumsum kernels that ran on the AI CPU (the test of kernel.aicpu.*: core, else name)
	MetricMoECumsumAICPUCount = "moe.cumsum.aicpu.count"         // count: number of those
	MetricMoEGMMUs            = "moe.gmm.time_us"                // µs: GroupedMatmul* kernels
	MetricMoEGMMCount         = "moe.gmm.count"                  // count: number of GroupedMatmul* kernels
	MetricMoEGMMTokens        = "moe.gmm.tokens"                 // tokens: sum of the first dimension of each GroupedMatmul's first input (tokens routed to this rank's experts)
	MetricMoEGatingUs         = "moe.gating.time_us"             // µs: MoeGatingTopK* kernels
	MetricMoEGatingCount      = "moe.gating.count"               // count: number of MoeGatingTopK* kernels
	MetricMoEDispatchUs       = "moe.dispatch.time_us"           // µs: dispatch kernels (MoeDistributeDispatch*, MoeTokenPermute, ...)
	MetricMoEDispatchCount    = "moe.dispatch.count"             // count: number of dispatch kernels
	MetricMoECombineUs        = "moe.combine.time_us"            // µs: combine kernels (MoeDistributeCombine*, MoeTokenUnpermute, MoeFinalizeRouting*)
	MetricMoECombineCount     = "moe.combine.count"              // count: number of combine kernels
	MetricMoEDispatchLayerUs  = "moe.dispatch.per_layer.time_us" // µs: dispatch time per MoE layer executed (moe.dispatch.time_us over the layers; MoeDistributeDispatch* on MC2: the token exchange and the wait for the slowest EP rank)
	MetricMoECombineLayerUs   = "moe.combine.per_layer.time_us"  // µs: combine time per MoE layer executed
	MetricMoEGMMLayerUs       = "moe.gmm.per_layer.time_us"      // µs: GroupedMatmul time per MoE layer executed (the experts' compute)
	MetricMoEDispatchShare    = "moe.dispatch_combine.share"     // ratio: dispatch + combine over the MoE kernels' time (routing, Cumsum, gating, GroupedMatmul, dispatch, combine)
	MetricCumsumOtherUs       = "cumsum.other.time_us"           // µs: Cumsum kernels outside the MoE routing path (e.g. the sampler's top-p)
	MetricCumsumOtherCount    = "cumsum.other.count"             // count: number of those
)

// MoEPass finds the MoE routing kernels and the Cumsum kernels in the
// routing path.
var MoEPass = &Pass{
	Name: "moe",
	Doc: `MoE routing, routing-path Cumsum, GroupedMatmul, dispatch/combine

moe.routing.* are MoeInitRouting* kernels (Custom, V2, V3). moe.cumsum.*
are Cumsum kernels in the routing path: after a MoeInitRouting* kernel on
the same stream and before the next GroupedMatmul* kernel. A Cumsum
elsewhere (the sampler's top-p) is not MoE routing. moe.cumsum.aicpu.* are
those that ran on the AI CPU. moe.gmm.* are GroupedMatmul* kernels.
moe.dispatch.per_layer.time_us, moe.combine.per_layer.time_us and
moe.gmm.per_layer.time_us divide by the MoE layers executed (on any
dispatcher path); moe.dispatch_combine.share is dispatch + combine over
every MoE kernel's time.`,
	Requires: []*Pass{TimelinePass},
	Metrics:  moeMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := TimelineOf(ctx)
		names := []string{MetricMoERoutingUs, MetricMoERoutingCount, MetricMoECumsumUs, MetricMoECumsumCount,
			MetricMoECumsumAICPUUs, MetricMoECumsumAICPUCount, MetricMoEGMMUs, MetricMoEGMMCount,
			MetricMoEGatingUs, MetricMoEGatingCount, MetricMoEDispatchUs, MetricMoEDispatchCount,
			MetricMoECombineUs, MetricMoECombineCount, MetricCumsumOtherUs, MetricCumsumOtherCount}
		if !tl.HaveCompute {
			ctx.Unavailable(noDeviceData(ctx), names...)
			return (*MoEResult)(nil), nil
		}
		res := scanMoE(r, tl)
		res.Positions, res.PositionsCapped = moePositions(r, res)
		set := func(us, count string, s Stat) {
			ctx.SetUs(us, s.Total)
			ctx.SetCount(count, s.Count)
		}
		set(MetricMoERoutingUs, MetricMoERoutingCount, res.Routing)
		set(MetricMoECumsumUs, MetricMoECumsumCount, res.Cumsum)
		if res.CumsumUndecided > 0 {
			ctx.Unavailable(fmt.Sprintf("the core of %d of %d MoE Cumsum kernels is unknown (%s) and their names do not say AI CPU or AI Core", res.CumsumUndecided, res.Cumsum.Count, unknownCoreWhy(r.Have.Timeline, res.cumsumUnknownCore, tl.ComputeSource)), MetricMoECumsumAICPUUs, MetricMoECumsumAICPUCount)
		} else {
			set(MetricMoECumsumAICPUUs, MetricMoECumsumAICPUCount, res.CumsumAICPU)
		}
		set(MetricMoEGMMUs, MetricMoEGMMCount, res.GMM)
		set(MetricMoEGatingUs, MetricMoEGatingCount, res.Gating)
		set(MetricMoEDispatchUs, MetricMoEDispatchCount, res.Dispatch)
		set(MetricMoECombineUs, MetricMoECombineCount, res.Combine)
		set(MetricCumsumOtherUs, MetricCumsumOtherCount, res.OtherCumsum)
		setMoEPerLayer(ctx, res)
		if res.GMM.Count > 0 {
			if res.HaveShapes {
				ctx.SetCount(MetricMoEGMMTokens, int(res.GMMTokens))
			} else if ctx.Rank.Have.KernelNote != "" {
				ctx.Unavailable("GroupedMatmul input shapes are not recorded: "+kernelDetailsUnusable(ctx.Rank), MetricMoEGMMTokens)
			} else {
				ctx.Unavailable("GroupedMatmul input shapes are not recorded (no kernel_details.csv Input Shapes)", MetricMoEGMMTokens)
			}
		}
		return res, nil
	},
}

// MoEOf is the moe pass's result on a rank.
var MoEOf = RankResultOf[*MoEResult](MoEPass)

// moePositions averages routing and Cumsum durations by layer position:
// the n-th layer (routing kernel) of a profiler step is position n.
func moePositions(r *model.Rank, m *MoEResult) ([]MoEPosition, bool) {
	type acc struct {
		r, c float64
		n    int
	}
	var pos []acc
	capped := false
	si, inStep := 0, map[int]int{}
	for li, l := range m.Layers {
		if l.Path != DispatcherAllGather {
			continue // positions chart the MoeInitRouting* kernels
		}
		t := r.Tasks[l.Routing]
		step := -1
		for si < len(r.Steps) && r.Steps[si].End <= t.Start {
			si++
		}
		if si < len(r.Steps) && t.Start >= r.Steps[si].Start {
			step = si
		}
		p := inStep[step]
		inStep[step]++
		if p >= MoEMaxPositions {
			capped = true
			continue
		}
		for len(pos) <= p {
			pos = append(pos, acc{})
		}
		pos[p].r += float64(r.Dur(&t)) / 1000
		for _, ci := range m.LayerCumsum(li) {
			pos[p].c += float64(r.Dur(&r.Tasks[ci])) / 1000
		}
		pos[p].n++
	}
	out := make([]MoEPosition, len(pos))
	for i, a := range pos {
		out[i] = MoEPosition{RoutingUs: math.NaN(), CumsumUs: math.NaN(), Count: a.n}
		if a.n > 0 {
			out[i].RoutingUs, out[i].CumsumUs = a.r/float64(a.n), a.c/float64(a.n)
		}
	}
	return out, capped
}

// scanMoE walks the compute kernels once: the MoE kernel stats and the MoE
// layers, each opened by its dispatcher path's kernel.
func scanMoE(r *model.Rank, tl *Timeline) *MoEResult {
	res := &MoEResult{CumsumCores: map[string]int{}, PathLayers: map[string]int{}}
	opener := map[string]string{} // path -> op type of its first opening kernel
	a2a := hasAllToAllV(r)
	// Per-stream state: the open MoE layer (after routing, before GMM).
	open := map[int32]int{} // stream -> index into res.Layers, or absent
	cur := map[int32]int{}  // stream -> last layer seen (for GMM attribution)
	res.HaveShapes = true
	roles := newNameOpMemo(r, moeRole)
	shapes := &shapeMemo{r: r}
	var cumsum, gmm, combine []layerKernel
	for _, i := range tl.ComputeTasks {
		t := &r.Tasks[i]
		switch roles.get(t) {
		case roleRouting, roleDispatchMC2, roleFusedMC2, rolePermute:
			role := roles.get(t)
			if role == roleRouting {
				res.Routing.add(r.Dur(t))
			} else {
				res.Dispatch.add(r.Dur(t))
			}
			if role == rolePermute && !a2a {
				continue // an AllGather-path permute: no alltoallv
			}
			path := openerPath[role]
			res.Layers = append(res.Layers, MoELayer{Stream: r.Stream(t), Path: path, Routing: i})
			if res.PathLayers[path] == 0 {
				opener[path] = r.Str(r.OpType(t))
				if opener[path] == "" {
					opener[path] = r.Str(r.Name(t))
				}
			}
			res.PathLayers[path]++
			if role == roleRouting {
				open[r.Stream(t)] = len(res.Layers) - 1
			}
			cur[r.Stream(t)] = len(res.Layers) - 1
		case roleCumsum:
			if li, ok := open[r.Stream(t)]; ok {
				res.Cumsum.add(r.Dur(t))
				cumsum = append(cumsum, layerKernel{int32(li), i})
				tt := r.Str(r.TaskType(t))
				core := tt
				if core == "" {
					core = "unknown"
				}
				res.CumsumCores[core]++
				switch on, known := OnAICPU(tt, r.Str(r.Name(t))); {
				case !known:
					if res.CumsumUndecided == 0 {
						res.cumsumUnknownCore = tt
					}
					res.CumsumUndecided++
				case on:
					res.CumsumAICPU.add(r.Dur(t))
				}
			} else {
				res.OtherCumsum.add(r.Dur(t))
			}
		case roleGMM:
			res.GMM.add(r.Dur(t))
			delete(open, r.Stream(t))
			if li, ok := cur[r.Stream(t)]; ok {
				gmm = append(gmm, layerKernel{int32(li), i})
			}
			if n, ok := shapes.firstDim(r.InputShapes(t)); ok {
				res.GMMTokens += n
			} else {
				res.HaveShapes = false
			}
		case roleGating:
			res.Gating.add(r.Dur(t))
		case roleDispatch:
			res.Dispatch.add(r.Dur(t))
		case roleCombine:
			res.Combine.add(r.Dur(t))
			if li, ok := cur[r.Stream(t)]; ok {
				combine = append(combine, layerKernel{int32(li), i})
			}
		}
	}
	res.cumsum, res.gmm, res.combine = newLayerKernels(len(res.Layers), cumsum), newLayerKernels(len(res.Layers), gmm), newLayerKernels(len(res.Layers), combine)
	setDispatcher(res, opener)
	return res
}

// hasAllToAllV says whether the rank ran an hcom_alltoallv_ (the All2All
// dispatcher's token exchange).
func hasAllToAllV(r *model.Rank) bool {
	for i := range r.HCCL {
		if r.Str(r.HCCL[i].Type) == "alltoallv" {
			return true
		}
	}
	return false
}

// setDispatcher picks the path that opened the most MoE layers (ties by
// name) and writes its evidence: every path's layers and opening kernel.
func setDispatcher(res *MoEResult, opener map[string]string) {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(res.PathLayers)) {
		n := res.PathLayers[p]
		if n > res.PathLayers[res.Dispatcher] || res.Dispatcher == "" {
			res.Dispatcher = p
		}
		what := fmt.Sprintf("%d MoE layers opened by %s (%s)", n, opener[p], p)
		if p == DispatcherAllToAll {
			what += " with hcom_alltoallv_"
		}
		parts = append(parts, what)
	}
	res.DispatcherEvidence = strings.Join(parts, "; ")
}

// setMoEPerLayer sets the per-layer dispatch, combine and GroupedMatmul
// times and the dispatch + combine share of the MoE kernels.
func setMoEPerLayer(ctx *Context, res *MoEResult) {
	all := res.Routing.Total + res.Cumsum.Total + res.Gating.Total + res.GMM.Total + res.Dispatch.Total + res.Combine.Total
	if all > 0 {
		ctx.Set(MetricMoEDispatchShare, float64(res.Dispatch.Total+res.Combine.Total)/float64(all))
	} else {
		ctx.Unavailable("no MoE kernel (routing, gating, GroupedMatmul, dispatch, combine)", MetricMoEDispatchShare)
	}
	names := []string{MetricMoEDispatchLayerUs, MetricMoECombineLayerUs, MetricMoEGMMLayerUs}
	n := int64(len(res.Layers))
	if n == 0 {
		ctx.Unavailable(noMoELayer, names...)
		return
	}
	ctx.SetUs(MetricMoEDispatchLayerUs, res.Dispatch.Total/n)
	ctx.SetUs(MetricMoECombineLayerUs, res.Combine.Total/n)
	ctx.SetUs(MetricMoEGMMLayerUs, res.GMM.Total/n)
}

// noMoELayer says why per-layer metrics are not measured.
const noMoELayer = "no kernel that opens a MoE layer (MoeInitRouting*, MoeDistributeDispatch*, DispatchFFNCombine, DispatchGmmCombineDecode, MoeTokenPermute with hcom_alltoallv_), so MoE layers cannot be delimited"
