package tracegen

import (
	"fmt"
	"strings"
)

// role marks kernels the ground truth tracks separately.
type role uint8

const (
	roleNone          role = iota
	roleRouting            // MoeInitRouting*
	roleMoECumsum          // Cumsum in the MoE routing path
	roleGMM                // GroupedMatmul*
	roleSamplerCumsum      // top-p Cumsum of the sampler (not MoE)
	roleDispatch           // MC2 dispatch (an exchange across the EP group)
	roleCombine            // MC2 combine
)

// tokKind selects which token count a kernel works on.
type tokKind uint8

const (
	tokFull   tokKind = iota // all tokens of the step (padded to TP with FC1)
	tokLocal                 // this rank's sequence-parallel shard (FC1), else all
	tokRouted                // token-expert pairs routed to this rank's experts
	tokExpert                // number of local experts (Cumsum over group_list)
)

// kernelSpec is a compute kernel template (docs/formats.md#moe-kernels; the naming:
// {aclnnApi}_{kernelImpl}_{opType}).
type kernelSpec struct {
	id       int
	name     string // kernel name (trace Name / kernel_details Name)
	opType   string // kernel_details Type
	taskType string // Task Type / Accelerator Core
	torchOp  string // launching framework op (Python cpu_op)
	baseNs   int64  // duration at zero tokens
	perTokNs int64  // extra ns per token of tok kind
	jitter   float64
	tok      tokKind
	block    int // Block Dim
	mixBlock int // Mix Block Dim
	role     role
	// sync: the kernel exchanges tokens across the EP group, so it ends
	// on every rank when the last has arrived (MC2 dispatch/combine)
	sync bool
	// shard: how the kernel's weights split over the TP group
	// (Scenario.TPRef scales its duration with the TP size)
	shard shardKind
	shape func(c shapeCtx) shapes
}

// shardKind is how a kernel's work per rank depends on the TP size.
type shardKind uint8

const (
	shardNone shardKind = iota // replicated, or set by the KV heads (attention)
	shardCols                  // weights split by TP: o_proj, lm_head (1/TP)
	shardQKV                   // the QKV projection: query heads split, KV heads replicated past TP 4
)

// shapeCtx carries the numbers kernel shapes are built from.
type shapeCtx struct {
	t, routed, experts, interm, tokens int
}

// shapes is the six shape/type/format cells of one kernel_details row
// (each the raw value; quoting is done by the CSV writer).
type shapes struct {
	inShapes, inTypes, inFormats, outShapes, outTypes, outFormats string
}

// nd is the format list of n ND tensors ("ND;ND;ND").
func nd(n int) string { return strings.TrimSuffix(strings.Repeat("ND;", n), ";") }

// shp builds a shapes value with ND formats.
func shp(in, inT, out, outT string) shapes {
	return shapes{in, inT, nd(strings.Count(in, ";") + 1), out, outT, nd(strings.Count(out, ";") + 1)}
}

// matmul is an aten::mm kernel (MatMulV2): tokens x k times n x k, into
// tokens x n, in BF16.
func matmul(ks kernelSpec, n, k int) *kernelSpec {
	ks.name, ks.opType, ks.taskType, ks.torchOp = "aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", "aten::mm"
	ks.shape = func(c shapeCtx) shapes {
		return shp(fmt.Sprintf("%d,%d;%d,%d", c.tokens, k, n, k), "BF16;BF16", fmt.Sprintf("%d,%d", c.tokens, n), "BF16")
	}
	return spec(ks)
}

var nextSpecID int

// torchNPUGating is k launched by torch_npu's npu_moe_gating_top_k.
func torchNPUGating(k kernelSpec) *kernelSpec {
	k.torchOp = "npu::npu_moe_gating_top_k"
	return spec(k)
}

func spec(k kernelSpec) *kernelSpec {
	nextSpecID++
	k.id = nextSpecID
	if k.jitter == 0 {
		k.jitter = 0.08
	}
	return &k
}

// The kernels of a Qwen3-MoE decode step (vllm-ascend.md §5.2), durations
// roughly those of an Atlas A2 at TP8 and batch 25.
var (
	kEmbedding = spec(kernelSpec{name: "aclnnEmbedding_GatherV2AiCore_GatherV2", opType: "GatherV2", taskType: "AI_VECTOR_CORE",
		torchOp: "aten::embedding", baseNs: 5200, perTokNs: 40, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,%d;%d", vocabSize/maxTP, hiddenSize, c.tokens), "BF16;INT32", fmt.Sprintf("%d,%d", c.tokens, hiddenSize), "BF16")
		}})
	kAddRmsNorm = spec(kernelSpec{name: "aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm", opType: "AddRmsNorm", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_add_rms_norm", baseNs: 4300, perTokNs: 30, tok: tokLocal, block: 40,
		shape: func(c shapeCtx) shapes {
			h := fmt.Sprintf("%d,%d", c.tokens, hiddenSize)
			return shp(h+";"+h+";4096", "BF16;BF16;BF16", h+";"+fmt.Sprintf("%d,1", c.tokens)+";"+h, "BF16;FLOAT;BF16")
		}})
	kQKV   = matmul(kernelSpec{baseNs: 9400, perTokNs: 60, tok: tokFull, block: 20, shard: shardQKV}, 1280, 4096)
	kQNorm = spec(kernelSpec{name: "aclnnRmsNorm_RmsNorm_RmsNorm", opType: "RmsNorm", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_rms_norm", baseNs: 3100, perTokNs: 20, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,8,128;128", c.tokens), "BF16;BF16", fmt.Sprintf("%d,8,128;%d,8,1", c.tokens, c.tokens), "BF16;FLOAT")
		}})
	kKNorm = spec(kernelSpec{name: "aclnnRmsNorm_RmsNorm_RmsNorm", opType: "RmsNorm", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_rms_norm", baseNs: 2900, perTokNs: 10, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,1,128;128", c.tokens), "BF16;BF16", fmt.Sprintf("%d,1,128;%d,1,1", c.tokens, c.tokens), "BF16;FLOAT")
		}})
	kRope = spec(kernelSpec{name: "aclnnApplyRotaryPosEmb_ApplyRotaryPosEmb_ApplyRotaryPosEmb", opType: "ApplyRotaryPosEmb", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_apply_rotary_pos_emb", baseNs: 3900, perTokNs: 20, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,1,8,128;%d,1,1,128;%d,1,1,128;%d,1,1,128", t, t, t, t), "BF16;BF16;BF16;BF16",
				fmt.Sprintf("%d,1,8,128;%d,1,1,128", t, t), "BF16;BF16")
		}})
	kCache = spec(kernelSpec{name: "aclnnReshapeAndCache_ReshapeAndCache_ReshapeAndCache", opType: "ReshapeAndCache", taskType: "AI_VECTOR_CORE",
		torchOp: "atb::_npu_reshape_and_cache", baseNs: 3600, perTokNs: 15, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,1,128;%d,1,128;2048,128,1,128;2048,128,1,128;%d", t, t, t), "BF16;BF16;BF16;BF16;INT32",
				"2048,128,1,128;2048,128,1,128", "BF16;BF16")
		}})
	kFIA = spec(kernelSpec{name: "aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore", opType: "FusedInferAttentionScore", taskType: "MIX_AIC",
		torchOp: "npu::npu_fused_infer_attention_score", baseNs: 26500, perTokNs: 160, jitter: 0.12, tok: tokFull, block: 24, mixBlock: 48,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,1,1024;2048,128,128;2048,128,128;%d,64;%d", t, t, t), "BF16;BF16;BF16;INT32;INT64",
				fmt.Sprintf("%d,1,1024;%d,8,1", t, t), "BF16;FLOAT")
		}})
	kOProj = matmul(kernelSpec{baseNs: 7800, perTokNs: 50, tok: tokFull, block: 20, shard: shardCols}, 4096, 1024)
	kGate  = matmul(kernelSpec{baseNs: 3900, perTokNs: 15, tok: tokLocal, block: 8}, 128, 4096)
	kTopK  = spec(kernelSpec{name: "aclnnMoeGatingTopK_MoeGatingTopK_MoeGatingTopK", opType: "MoeGatingTopK", taskType: "AI_VECTOR_CORE",
		torchOp: "_C_ascend::moe_gating_top_k", baseNs: 5400, perTokNs: 30, tok: tokLocal, block: 40,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,128;128", t), "BF16;FLOAT", fmt.Sprintf("%d,8;%d,8;%d,128", t, t, t), "BF16;INT32;FLOAT")
		}})
	// kTopKTorchNPU is the same gating kernel launched by torch_npu's
	// npu_moe_gating_top_k, which vLLM-Ascend used before v0.13.0rc2's
	// custom moe_gating_top_k (vllm-ascend.md §5.2, #5579)
	kTopKTorchNPU = torchNPUGating(*kTopK)
	kRouting      = spec(kernelSpec{name: "aclnnMoeInitRoutingCustom_MoeInitRoutingCustom_MoeInitRoutingCustom", opType: "MoeInitRoutingCustom", taskType: "AI_VECTOR_CORE",
		torchOp: "_C_ascend::npu_moe_init_routing_custom", baseNs: 10800, perTokNs: 25, tok: tokFull, block: 40, role: roleRouting,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,4096;%d,8", t, t), "BF16;INT32",
				fmt.Sprintf("%d,4096;%d;%d", c.routed, t*topK, c.experts), "BF16;INT32;INT64")
		}})
	kCumsumAicpu = spec(kernelSpec{name: "aclnnCumsum_CumsumAiCpu_Cumsum", opType: "Cumsum", taskType: "AI_CPU",
		torchOp: "aten::cumsum", baseNs: 34000, jitter: 0.12, tok: tokExpert, block: 1, role: roleMoECumsum,
		shape: func(c shapeCtx) shapes {
			e := fmt.Sprint(c.experts)
			return shapes{e + ";", "INT64;INT64", "ND;ND", e, "INT64", "ND"}
		}})
	kGMM1 = spec(kernelSpec{name: "aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", opType: "GroupedMatmul", taskType: "AI_CORE",
		torchOp: "npu::npu_grouped_matmul", baseNs: 112000, perTokNs: 900, jitter: 0.06, tok: tokRouted, block: 24, role: roleGMM,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,4096;%d,4096,%d;%d", c.routed, c.experts, 2*c.interm, c.experts), "BF16;BF16;INT64",
				fmt.Sprintf("%d,%d", c.routed, 2*c.interm), "BF16")
		}})
	kSwiGlu = spec(kernelSpec{name: "aclnnSwiGlu_SwiGlu_SwiGlu", opType: "SwiGlu", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_swiglu", baseNs: 3400, perTokNs: 15, tok: tokRouted, block: 40,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,%d", c.routed, 2*c.interm), "BF16", fmt.Sprintf("%d,%d", c.routed, c.interm), "BF16")
		}})
	kGMM2 = spec(kernelSpec{name: "aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", opType: "GroupedMatmul", taskType: "AI_CORE",
		torchOp: "npu::npu_grouped_matmul", baseNs: 58000, perTokNs: 450, jitter: 0.06, tok: tokRouted, block: 24, role: roleGMM,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,%d;%d,%d,4096;%d", c.routed, c.interm, c.experts, c.interm, c.experts), "BF16;BF16;INT64",
				fmt.Sprintf("%d,4096", c.routed), "BF16")
		}})
	kUnpermute = spec(kernelSpec{name: "aclnnMoeTokenUnpermute_MoeTokenUnpermute_MoeTokenUnpermute", opType: "MoeTokenUnpermute", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_moe_token_unpermute", baseNs: 6800, perTokNs: 25, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,4096;%d;%d,8", c.routed, t*topK, t), "BF16;INT32;BF16", fmt.Sprintf("%d,4096", t), "BF16")
		}})
	kDispatchMC2 = spec(kernelSpec{name: "aclnnMoeDistributeDispatchV2_MoeDistributeDispatchV2_MoeDistributeDispatchV2", opType: "MoeDistributeDispatchV2", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_moe_distribute_dispatch_v2", baseNs: 42000, perTokNs: 60, jitter: 0.1, tok: tokFull, block: 48, role: roleDispatch, sync: true,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,4096;%d,8", t, t), "BF16;INT32", fmt.Sprintf("%d,4096;%d", c.routed, c.experts), "BF16;INT64")
		}})
	kCombineMC2 = spec(kernelSpec{name: "aclnnMoeDistributeCombineV2_MoeDistributeCombineV2_MoeDistributeCombineV2", opType: "MoeDistributeCombineV2", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_moe_distribute_combine_v2", baseNs: 38000, perTokNs: 60, jitter: 0.1, tok: tokFull, block: 48, role: roleCombine, sync: true,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,4096;%d,8", c.routed, t), "BF16;INT32", fmt.Sprintf("%d,4096", t), "BF16")
		}})
	kFusedMC2 = spec(kernelSpec{name: "aclnnDispatchFFNCombine_DispatchFFNCombine_DispatchFFNCombine", opType: "DispatchFFNCombine", taskType: "MIX_AIC",
		torchOp: "_C_ascend::dispatch_ffn_combine", baseNs: 190000, perTokNs: 1200, jitter: 0.06, tok: tokRouted, block: 24, mixBlock: 48,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,4096;%d,8", t, t), "INT8;INT32", fmt.Sprintf("%d,4096", t), "BF16")
		}})
	kPermute = spec(kernelSpec{name: "aclnnMoeTokenPermute_MoeTokenPermute_MoeTokenPermute", opType: "MoeTokenPermute", taskType: "AI_VECTOR_CORE",
		torchOp: "npu::npu_moe_token_permute", baseNs: 7200, perTokNs: 25, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			t := c.tokens
			return shp(fmt.Sprintf("%d,4096;%d,8", t, t), "BF16;INT32", fmt.Sprintf("%d,4096;%d", t*topK, t*topK), "BF16;INT32")
		}})
	kZeros = spec(kernelSpec{name: "aclnnInplaceZero_ZerosLikeAiCore_ZerosLike", opType: "ZerosLike", taskType: "AI_VECTOR_CORE",
		torchOp: "aten::zero_", baseNs: 2400, perTokNs: 10, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,4096", c.tokens), "BF16", fmt.Sprintf("%d,4096", c.tokens), "BF16")
		}})
	kLMHead = matmul(kernelSpec{baseNs: 94000, perTokNs: 300, jitter: 0.04, tok: tokFull, block: 20, shard: shardCols}, vocabSize/maxTP, 4096)
	kDiv    = spec(kernelSpec{name: "aclnnDiv_RealDiv_RealDiv", opType: "RealDiv", taskType: "AI_VECTOR_CORE",
		torchOp: "aten::div", baseNs: 8200, perTokNs: 60, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			v := fmt.Sprintf("%d,%d", c.tokens, vocabSize)
			return shp(fmt.Sprintf("%s;%d,1", v, c.tokens), "FLOAT;FLOAT", v, "FLOAT")
		}})
	kSort = spec(kernelSpec{name: "aclnnSort_Sort_Sort", opType: "Sort", taskType: "MIX_AIV",
		torchOp: "aten::sort", baseNs: 23000, perTokNs: 200, tok: tokFull, block: 24, mixBlock: 48,
		shape: func(c shapeCtx) shapes {
			v := fmt.Sprintf("%d,%d", c.tokens, vocabSize)
			return shp(v, "FLOAT", v+";"+v, "FLOAT;INT64")
		}})
	kSoftmax = spec(kernelSpec{name: "aclnnSoftmax_SoftmaxV2_SoftmaxV2", opType: "SoftmaxV2", taskType: "AI_VECTOR_CORE",
		torchOp: "aten::softmax", baseNs: 11000, perTokNs: 80, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			v := fmt.Sprintf("%d,%d", c.tokens, vocabSize)
			return shp(v, "FLOAT", v, "FLOAT")
		}})
	kSamplerCumsum = spec(kernelSpec{name: "aclnnCumsum_CumsumAiCore_Cumsum", opType: "Cumsum", taskType: "AI_VECTOR_CORE",
		torchOp: "aten::cumsum", baseNs: 13500, perTokNs: 70, tok: tokFull, block: 40, role: roleSamplerCumsum,
		shape: func(c shapeCtx) shapes {
			v := fmt.Sprintf("%d,%d", c.tokens, vocabSize)
			return shapes{v + ";", "FLOAT;INT64", "ND;ND", v, "FLOAT", "ND"}
		}})
	kArgMax = spec(kernelSpec{name: "aclnnArgMax_ArgMaxV2_ArgMaxV2", opType: "ArgMaxV2", taskType: "AI_VECTOR_CORE",
		torchOp: "aten::argmax", baseNs: 6600, perTokNs: 40, tok: tokFull, block: 40,
		shape: func(c shapeCtx) shapes {
			return shp(fmt.Sprintf("%d,%d", c.tokens, vocabSize), "FLOAT", fmt.Sprint(c.tokens), "INT64")
		}})
)

// collSpec is a collective template.
type collSpec struct {
	opType   string // hcom_allReduce_ ... (ends with '_')
	metric   string // lower-case type for metric names
	aivName  string // kernel name in AIV mode
	aivType  string // its Task Type
	torchOp  string
	group    int     // grpTP / grpEP
	baseNs   int64   // transfer time once every rank has arrived
	jitter   float64 // relative, common to all ranks
	elems    func(t, local, tp int) int
	dtype    string
	alg      string
	noAiv    bool // never run in AIV mode (large message)
	reduce   bool // small tasks include Reduce_Inline
	waitNext bool // the compute stream waits for this op before the next kernel
	overlap  []*kernelSpec
}

var (
	cTPAllReduce = &collSpec{opType: "hcom_allReduce_", metric: "allreduce", aivName: "allreduceAivKernel", aivType: "MIX_AIV",
		torchOp: "c10d::allreduce_", group: grpTP, baseNs: 27000, jitter: 0.15, dtype: "BFP16", alg: "MESH-RING", reduce: true, waitNext: true,
		elems: func(t, _, _ int) int { return t * hiddenSize }}
	cTPAllReduceMoE = &collSpec{opType: "hcom_allReduce_", metric: "allreduce", aivName: "allreduceAivKernel", aivType: "MIX_AIV",
		torchOp: "c10d::allreduce_", group: grpTP, baseNs: 28000, jitter: 0.15, dtype: "BFP16", alg: "MESH-RING", reduce: true, waitNext: true,
		elems: func(t, _, _ int) int { return t * hiddenSize }, overlap: []*kernelSpec{kZeros}}
	cTPReduceScatter = &collSpec{opType: "hcom_reduceScatter_", metric: "reducescatter", aivName: "reduce_scatterAivKernel", aivType: "AI_VECTOR_CORE",
		torchOp: "c10d::_reduce_scatter_base_", group: grpTP, baseNs: 19000, jitter: 0.15, dtype: "BFP16", alg: "MESH", reduce: true, waitNext: true,
		elems: func(_, l, _ int) int { return l * hiddenSize }}
	cTPAllGather = &collSpec{opType: "hcom_allGather_", metric: "allgather", aivName: "allgatherAivKernel", aivType: "AI_VECTOR_CORE",
		torchOp: "c10d::_allgather_base_", group: grpTP, baseNs: 17000, jitter: 0.15, dtype: "BFP16", alg: "MESH", waitNext: true,
		elems: func(_, l, _ int) int { return l * hiddenSize }}
	cEPAllGatherHidden = &collSpec{opType: "hcom_allGather_", metric: "allgather",
		torchOp: "c10d::_allgather_base_", group: grpEP, baseNs: 23000, jitter: 0.2, dtype: "BFP16", alg: "MESH",
		elems: func(_, l, _ int) int { return l * hiddenSize }}
	cEPAllGatherRouter = &collSpec{opType: "hcom_allGather_", metric: "allgather",
		torchOp: "c10d::_allgather_base_", group: grpEP, baseNs: 13000, jitter: 0.2, dtype: "FP32", alg: "MESH", waitNext: true,
		elems: func(_, l, _ int) int { return l * numExperts }}
	cEPReduceScatter = &collSpec{opType: "hcom_reduceScatter_", metric: "reducescatter",
		torchOp: "c10d::_reduce_scatter_base_", group: grpEP, baseNs: 25000, jitter: 0.2, dtype: "BFP16", alg: "MESH", reduce: true, waitNext: true,
		elems: func(_, l, _ int) int { return l * hiddenSize }, overlap: []*kernelSpec{kZeros}}
	cEPAllToAllV = &collSpec{opType: "hcom_alltoallv_", metric: "alltoallv",
		torchOp: "c10d::alltoall_base_", group: grpEP, baseNs: 31000, jitter: 0.2, dtype: "BFP16", alg: "MESH", waitNext: true,
		elems: func(t, _, _ int) int { return t * topK * hiddenSize }}
	cLogitsAllGather = &collSpec{opType: "hcom_allGather_", metric: "allgather",
		torchOp: "c10d::_allgather_base_", group: grpTP, baseNs: 72000, jitter: 0.1, dtype: "BFP16", alg: "MESH", noAiv: true, waitNext: true,
		elems: func(t, _, _ int) int { return t * (vocabSize / maxTP) }}
)

// itemKind is the kind of one program step.
type itemKind uint8

const (
	itKernel itemKind = iota
	itColl
	itMemcpyH2D
	itMemcpyD2H
	itSide // a kernel on the side stream the compute stream waits for
)

// item is one launch of the per-step program.
type item struct {
	kind itemKind
	k    *kernelSpec
	c    *collSpec
}

func kern(k *kernelSpec) item { return item{kind: itKernel, k: k} }
func coll(c *collSpec) item   { return item{kind: itColl, c: c} }

// program is the launch sequence of one decode step.
type program struct {
	head, layer, tail []item
}

// buildProgram lays out one decode step per vllm-ascend.md §1.3 / §5.2.
func buildProgram(s Scenario) program {
	var p program
	p.head = []item{{kind: itMemcpyH2D}, kern(kEmbedding)}

	// Attention block.
	if s.FlashComm1 {
		p.layer = append(p.layer, kern(kAddRmsNorm), coll(cTPAllGather))
	} else {
		p.layer = append(p.layer, kern(kAddRmsNorm))
	}
	p.layer = append(p.layer, kern(kQKV), kern(kQNorm), kern(kKNorm), kern(kRope), kern(kCache), kern(kFIA), kern(kOProj))
	if s.FlashComm1 {
		p.layer = append(p.layer, coll(cTPReduceScatter))
	} else {
		p.layer = append(p.layer, coll(cTPAllReduce))
	}
	// MoE block.
	gate := kern(kGate)
	if s.SideStream {
		gate = item{kind: itSide, k: kGate}
	}
	topk := kTopK
	if s.TorchNPUGating {
		topk = kTopKTorchNPU
	}
	p.layer = append(p.layer, kern(kAddRmsNorm), gate, kern(topk))
	if moe := dispatcherBlock(s.Dispatcher); moe != nil {
		p.layer = append(p.layer, moe...)
	} else {
		p.layer = append(p.layer, allGatherBlock(s)...)
	}

	// Tail: final norm, lm_head, logits all-gather, sampler, D2H copy.
	p.tail = []item{kern(kAddRmsNorm), kern(kLMHead), coll(cLogitsAllGather), kern(kDiv), kern(kSort), kern(kSoftmax)}
	if s.SamplerCumsum {
		p.tail = append(p.tail, kern(kSamplerCumsum))
	}
	p.tail = append(p.tail, kern(kArgMax), item{kind: itMemcpyD2H})
	return p
}

// allGatherBlock is the MoE block after the gating on the AllGather path.
func allGatherBlock(s Scenario) []item {
	var b []item
	if s.FlashComm1 {
		b = append(b, coll(cEPAllGatherHidden), coll(cEPAllGatherRouter))
	}
	b = append(b, kern(kRouting))
	if s.Cumsum {
		b = append(b, kern(kCumsumAicpu))
	}
	b = append(b, kern(kGMM1), kern(kSwiGlu), kern(kGMM2), kern(kUnpermute))
	if s.FlashComm1 {
		return append(b, coll(cEPReduceScatter))
	}
	return append(b, coll(cTPAllReduceMoE))
}

// dispatcherBlock is the MoE block after the gating on the MC2, fused MC2
// and All2All paths (vllm-ascend.md §1.3); nil for the AllGather path.
func dispatcherBlock(d string) []item {
	switch d {
	case "mc2":
		return []item{kern(kDispatchMC2), kern(kGMM1), kern(kSwiGlu), kern(kGMM2), kern(kCombineMC2), coll(cTPAllGather)}
	case "fused_mc2":
		return []item{kern(kFusedMC2), coll(cTPAllGather)}
	case "alltoall":
		return []item{kern(kPermute), coll(cEPAllToAllV), kern(kGMM1), kern(kSwiGlu), kern(kGMM2), coll(cEPAllToAllV), kern(kUnpermute)}
	}
	return nil
}
