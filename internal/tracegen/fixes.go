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

	return []FixPair{
		epOff, cum,
		{Name: "eager-to-graph", Rule: "graph-capture-sizes", Before: eager, After: graph},
		pad,
		{Name: "eplb", Rule: "expert-imbalance", Before: hot, After: bal},
	}
}

// a3Base is the second field report's deployment in small: Qwen3-VL-235B
// in BF16 on one Atlas 800I A3 (16 dies) as TP4 x DP4 with expert parallel
// over all 16, vLLM-Ascend v0.13.0rc1 (CANN 8.3.RC2, torch_npu 2.8.0), one
// request in flight: decode batches take the MC2 dispatcher, the busy
// engine runs batch 1 and the three idle engines dummy steps, and the
// router gate runs on a side stream the compute stream waits on.
func a3Base(name string, seed int64) Scenario {
	s := base(name)
	s.Ranks, s.TP, s.Batch, s.Seed = 16, 4, 1, seed
	s.ExpertParallel, s.Dispatcher = true, "mc2"
	s.DummyEngines, s.SideStream, s.AivComm, s.ProfilerSteps = true, true, true, true
	s.MoEScale, s.SideStreamNs, s.VLLMLog = 0.15, 100_000, true
	s.MaxNumSeqs, s.CaptureSizes = 16, []int{1, 2, 4, 8, 16}
	s.VLLMAscendVersion, s.CANNVersion, s.TorchNPUVersion = "v0.13.0rc1", "8.3.RC2", "2.8.0"
	return s
}

// FieldReport2 returns the second field report's captures: the A3
// deployment on v0.13.0rc1 (a3-tp4dp4-rc1), after the upgrade to
// v0.13.0rc2 with its CANN 8.5.0 and torch_npu 2.8.0.post1
// (a3-tp4dp4-rc2), and after the parallel-strategy fix, TP8 x DP2 on rc2
// (a3-tp8dp2-rc2).
func FieldReport2() []Scenario {
	a := a3Base("a3-tp4dp4-rc1", 41)
	b := a3Base("a3-tp4dp4-rc2", 42)
	b.VLLMAscendVersion, b.CANNVersion, b.TorchNPUVersion = "v0.13.0rc2", "8.5.0", "2.8.0.post1"
	c := b
	c.Name, c.TP, c.Seed = "a3-tp8dp2-rc2", 8, 43
	return []Scenario{a, b, c}
}
