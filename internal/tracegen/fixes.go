package tracegen

// FixPair is a capture before and after one fix of npuprof's built-in
// rules: the two scenarios differ only by what the fix changes (and the
// seed, so the after capture is a new run, not the same draws).
type FixPair struct {
	Name   string // e.g. "cumsum-off"
	Rule   string // the rule whose fix this is
	Before Scenario
	After  Scenario
}

// fieldBase is the first field report's deployment in small: Qwen3-MoE W8A8
// at TP8 on one A2 node, 25 concurrent requests, --max-num-seqs 32 with
// vLLM-Ascend's default capture sizes (1,2,4 and multiples of 8), so every
// 25-request decode step is replayed from the graph of size 32.
func fieldBase(name string, seed int64) Scenario {
	s := base(name)
	s.Steps, s.Seed = 6, seed
	s.MaxNumSeqs, s.CaptureSizes = 32, []int{1, 2, 4, 8, 16, 24, 32}
	s.AivComm = true
	return s
}

// FieldReport returns the first field report's captures in the order the
// fixes were applied: expert parallel + FLASHCOMM1 + the AI_CPU routing
// Cumsum (25 requests padded to a graph of 32), then EP and FLASHCOMM1
// off, then the Cumsum removed, then capture size 25.
func FieldReport() []Scenario {
	a := fieldBase("field-ep-fc1-cumsum", 21)
	a.ExpertParallel, a.FlashComm1, a.Cumsum = true, true, true
	b := fieldBase("field-cumsum", 22)
	b.Cumsum = true
	c := fieldBase("field-padded", 23)
	d := fieldBase("field-fixed", 24)
	d.CaptureSizes = []int{25}
	return []Scenario{a, b, c, d}
}

// FixPairs returns one before/after pair per single fix:
//
//   - ep-fc1-off (comm-ep-flashcomm): EP + FLASHCOMM1 off; capture sizes
//     stay multiples of TP, so both sides run 25 requests as a graph of 32.
//   - cumsum-off (moe-routing-cumsum): the routing Cumsum removed (EP +
//     FLASHCOMM1 on).
//   - eager-to-graph (graph-capture-sizes): 25 requests with capture sizes
//     1,2,4,8,16,24 run eager; with 25 captured they replay a graph.
//   - padding-32-to-25 (graph-capture-sizes): a graph of 32 for 25
//     requests becomes a graph of 25.
//   - eplb (expert-imbalance): two hot experts per MoE layer with expert
//     parallel, then a balanced placement.
//   - eplb-hot-rank (expert-imbalance): on the MC2 dispatcher one EP rank
//     (rank 5) hosts the three hottest experts of every MoE layer (its
//     GroupedMatmul 2-3x the others') and every peer waits for it inside
//     the next MC2 combine; then a balanced placement, where the waits go
//     with the skew.
func FixPairs() []FixPair {
	f := FieldReport()
	epOff := FixPair{Name: "ep-fc1-off", Rule: "comm-ep-flashcomm", Before: f[0], After: f[1]}
	epOff.Before.Cumsum, epOff.After.Cumsum = false, false
	epOff.Before.Name, epOff.After.Name = "ep-fc1-padded", "noep-padded"

	cum := FixPair{Name: "cumsum-off", Rule: "moe-routing-cumsum", Before: f[0]}
	cum.After = f[0]
	cum.After.Name, cum.After.Cumsum, cum.After.Seed = "field-ep-fc1", false, 31

	eager := fieldBase("eager-25", 32)
	eager.AivComm = false
	eager.MaxNumSeqs, eager.CaptureSizes = 25, []int{1, 2, 4, 8, 16, 24}
	graph := eager
	graph.Name, graph.CaptureSizes, graph.Seed = "graph-25", []int{25}, 33

	pad := FixPair{Name: "padding-32-to-25", Rule: "graph-capture-sizes", Before: f[2], After: f[3]}

	hot := fieldBase("hot-experts-ep", 34)
	hot.ExpertParallel, hot.HotExperts, hot.HotExpertFactor = true, 2, 40
	bal := hot
	bal.Name, bal.EPLB, bal.Seed = "eplb-balanced", true, 35

	hr := fieldBase("hot-rank-mc2", 36)
	hr.ExpertParallel, hr.Dispatcher = true, "mc2"
	hr.HotExperts, hr.HotExpertFactor, hr.HotExpertsRank = 3, 16, 6
	hr.Batch, hr.MaxNumSeqs, hr.CaptureSizes = 128, 128, []int{1, 2, 4, 8, 16, 32, 64, 128}
	hrBal := hr
	hrBal.Name, hrBal.EPLB, hrBal.Seed = "hot-rank-mc2-eplb", true, 37

	return []FixPair{
		epOff, cum,
		{Name: "eager-to-graph", Rule: "graph-capture-sizes", Before: eager, After: graph},
		pad,
		{Name: "eplb", Rule: "expert-imbalance", Before: hot, After: bal},
		{Name: "eplb-hot-rank", Rule: "expert-imbalance", Before: hr, After: hrBal},
	}
}

// a3Base is the second field report's deployment in small: Qwen3-VL-235B
// in BF16 on one Atlas 800I A3 (16 dies) as TP4 x DP4 with expert parallel
// over all 16, vLLM-Ascend v0.13.0rc1 (CANN 8.3.RC2, torch_npu 2.8.0), one
// request in flight, 4 decode steps of 8 MoE layers: decode batches take
// the MC2 dispatcher, the busy engine runs batch 1 and the three idle
// engines dummy steps (no sampler, no ProfilerStep#N), and the
// router gate runs on a side stream the compute stream waits on, with
// 100 µs per MoE layer of side-stream work. The gating kernel is
// torch_npu's (rc1); the TP-sharded matmuls' durations are TP4's.
func a3Base(name string, seed int64) Scenario {
	s := base(name)
	s.Ranks, s.TP, s.TPRef, s.Batch, s.Seed = 16, 4, 4, 1, seed
	s.Layers = 8
	s.ExpertParallel, s.Dispatcher = true, "mc2"
	s.DummyEngines, s.SideStream, s.AivComm, s.ProfilerSteps = true, true, true, true
	s.MoEScale, s.SideStreamNs, s.VLLMLog = 0.15, 100_000, true
	s.MaxNumSeqs, s.CaptureSizes = 16, []int{1, 2, 4, 8, 16}
	s.VLLMAscendVersion, s.CANNVersion, s.TorchNPUVersion = "v0.13.0rc1", "8.3.RC2", "2.8.0"
	s.TorchNPUGating = true
	return s
}

// a3RC2 is the A3 deployment after the upgrade to v0.13.0rc2 with its
// CANN 8.5.0 and torch_npu 2.8.0.post1, as far as vllm-ascend.md tells
// what rc2 changes on this path (BF16 weights, MC2 decode):
//
//   - the gating kernel MoeGatingTopK is launched by rc2's custom
//     moe_gating_top_k (_C_ascend::moe_gating_top_k) instead of torch_npu's
//     npu_moe_gating_top_k (§5.2, #5579);
//   - the side-stream work the main compute stream waited on in every MoE
//     layer is gone: the side stream runs the router gate alone. The
//     second field report measured rc1 -> rc2 as +80% on an
//     EVENT_WAIT-heavy decode; which rc2 change removes the waits is not
//     known (§10 names the custom routing/gating ops among the likely
//     ones), so this models the measured effect, not a mechanism;
//   - dispatch and combine stay MoeDistributeDispatchV2 and
//     MoeDistributeCombineV2: rc2's fused DispatchFFNCombine is W8A8-only
//     (§1.2, §3.1), and these weights are BF16;
//   - MoeInitRoutingCustom replaces MoeInitRoutingV2 on the AllGather
//     dispatcher only (§1.1), which MC2 decode does not run; rc2's triton
//     mrope for Qwen3-VL (#5827) is not modelled (the facts name no kernel
//     for it).
func a3RC2(name string, seed int64) Scenario {
	s := a3Base(name, seed)
	s.VLLMAscendVersion, s.CANNVersion, s.TorchNPUVersion = "v0.13.0rc2", "8.5.0", "2.8.0.post1"
	s.TorchNPUGating, s.SideStreamNs = false, 0
	return s
}

// FieldReport2 returns the second field report's captures: the A3
// deployment on v0.13.0rc1 (a3-tp4dp4-rc1), after the upgrade to
// v0.13.0rc2 (a3-tp4dp4-rc2, see a3RC2), and after the parallel-strategy
// fix too, TP8 x DP2 on rc2 (a3-tp8dp2-rc2): the o_proj, lm_head and QKV
// matmuls per rank shrink with the larger TP (TPRef), the attention, the
// router, the experts (EP16 either way) and the MC2 exchange stay.
//
// The after states' vLLM logs report the busy engine's rate scaled by
// their decode step against the rc1 capture's (a3RC1BusyStepUs), so the
// serving facts move with the profile.
func FieldReport2() []Scenario {
	a := a3Base("a3-tp4dp4-rc1", 41)
	b := a3RC2("a3-tp4dp4-rc2", 42)
	c := a3RC2("a3-tp8dp2-rc2", 43)
	c.TP = 8
	b.VLLMLogRefStepUs, c.VLLMLogRefStepUs = a3RC1BusyStepUs, a3RC1BusyStepUs
	return []Scenario{a, b, c}
}

// a3RC1BusyStepUs is a3-tp4dp4-rc1's Truth.BusyStepUs (a test keeps it so).
const a3RC1BusyStepUs = 2948.9566874999996
