package tracegen

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Scenario describes one synthetic capture. The zero value is not useful;
// start from Scenarios() or Lookup and change fields.
type Scenario struct {
	Name           string // e.g. "ep-fc1-cumsum"
	Ranks          int    // number of ranks (one *_ascend_pt folder each), e.g. 8
	Layers         int    // MoE layers per decode step (Qwen3-235B has 94)
	Steps          int    // decode steps captured
	Batch          int    // decode batch (tokens per step), e.g. 25
	ExpertParallel bool   // EP on: each rank owns Experts/EP experts
	FlashComm1     bool   // FLASHCOMM1 (sequence parallel) on: TP AG/RS + EP AG×2/RS per layer
	Cumsum         bool   // AI_CPU int64 Cumsum after MoeInitRoutingCustom in every MoE layer
	ProfilerSteps  bool   // emit ProfilerStep#N (torch_npu schedule); false = vLLM style
	SamplerCumsum  bool   // sampler top-p Cumsum (AI core) once per step: NOT MoE routing
	HotRank        int    // -1 none; else this rank's GroupedMatmul kernels are SkewFactor longer
	SkewFactor     float64
	Seed           int64

	// EventWaits emits EVENT_RECORD/EVENT_WAIT device tasks around every
	// collective (compute stream waits for the comm stream and vice versa).
	// Timing is identical either way; only the tasks are dropped when false.
	EventWaits bool
	// WaitBeforeOp is where a collective's early members show their wait
	// for the last: false, inside the op (it starts when the member is
	// ready and its Notify Wait subtask lasts until the last member
	// arrives); true, before it (the comm stream's EVENT_WAIT lasts until
	// the last member is ready and the op starts then on every member,
	// lasting its transfer). Both happen in real captures and mean the
	// same: the op ends at the last arrival plus the transfer either way.
	WaitBeforeOp bool `json:",omitempty"`
	// AivComm runs the TP-group collectives (except the large logits
	// all-gather) in HCCL AIV mode: the comm stream then carries one
	// `allreduceAivKernel`-style AIV/MIX_AIV row exactly coincident with the
	// HCCL big op, instead of FFTS+ Notify/SDMA subtasks.
	AivComm bool
	// CommJSON writes ASCEND_PROFILER_OUTPUT/communication.json (one entry
	// per collective; large for long captures).
	CommJSON bool
	// DeviceMetaFirst writes the device-side process and thread metadata
	// (Ascend Hardware, HCCL, CANN, Overlap Analysis, counters) before the
	// device slices, as every real torch_npu trace_view.json in
	// shared/formats/samples does (only the Python process is named after
	// its slices there). The default, false, writes it after the slices:
	// the harder case for a streaming reader, which then has to keep
	// slices until it learns their process. The benchmarks use true.
	DeviceMetaFirst bool `json:",omitempty"`
	// MsprofSlice, in the msprof layout, splits the timeline into
	// msprof_slice_{k}_{ts}.json files of this many events each (msprof
	// slices large exports); 0 writes one msprof_{ts}.json.
	MsprofSlice int
	// SlowRank, with SlowFactor > 0 and != 1, makes every compute kernel of
	// that rank SlowFactor times longer (a throttled or sick device): its
	// peers then wait for it in every collective. -1 (or SlowFactor 0) is
	// off.
	SlowRank   int
	SlowFactor float64
	// PP > 1 splits the ranks into PP pipeline stages of Ranks/PP
	// consecutive ranks (the pp groups of parallel_group_info pair the
	// ranks of the same place in each stage); TP must divide Ranks/PP.
	// StageFactor > 0 makes every compute kernel of the last stage that
	// many times longer (a stage holding more layers, or the output
	// layer): a pipeline-stage imbalance, not a slow rank.
	PP          int     `json:",omitempty"`
	StageFactor float64 `json:",omitempty"`

	// HotExperts > 0 routes tokens expert by expert (EP only): in every MoE
	// layer HotExperts experts get HotExpertFactor times the routing weight
	// (the hot rank's experts SkewFactor times), each rank's GroupedMatmul
	// tokens are the sum over its experts, and Generate writes the
	// per-expert loads as a MindIE dump in DIR/expert_hotspot (ExpertDumpDir).
	HotExperts      int     `json:",omitempty"`
	HotExpertFactor float64 `json:",omitempty"`
	// HotExpertsRank, with HotExperts, is 1 + the EP rank whose local
	// experts are every layer's hot ones (one rank hosts them all, its
	// GroupedMatmul as much longer as its token load); 0 draws them from
	// all experts.
	HotExpertsRank int `json:",omitempty"`
	// MaxNumSeqs is the deployment's --max-num-seqs (recorded only; 0 =
	// not modelled).
	MaxNumSeqs int
	// CaptureSizes are the ACL graph capture sizes of the deployment. Empty:
	// decode runs eager (every kernel in single-op mode, Model ID
	// 4294967295, exact batch in the shapes). Otherwise a decode step is
	// replayed from the graph of the smallest capture size >= the batch
	// (kernels carry Model ID GraphModelID and shapes show the padded
	// size), or runs eager when the batch exceeds every capture size.
	CaptureSizes []int
	// HostSlowdown > 1 makes every host launch that many times longer (a
	// CPU-bound host): the device then idles between kernels. 0 or 1 = normal.
	HostSlowdown float64
	// EPLB (EP only) balances the experts: every rank's GroupedMatmul gets
	// an equal share of each MoE layer's token-expert pairs (the placement
	// of a perfect expert load balancer), whatever HotExperts routes.
	EPLB bool `json:",omitempty"`
	// Dispatcher is the MoE token dispatcher of every layer
	// (vllm-ascend.md §1.3): "" or "allgather" (MoeInitRoutingCustom, the
	// TP all-reduce after), "mc2" (MoeDistributeDispatchV2 → GroupedMatmul
	// → MoeDistributeCombineV2, then a TP all-gather), "fused_mc2" (one
	// DispatchFFNCombine kernel, then a TP all-gather) or "alltoall"
	// (MoeTokenPermute, two ep hcom_alltoallv_, MoeTokenUnpermute). The
	// non-AllGather paths need ExpertParallel and ignore FlashComm1 and Cumsum.
	Dispatcher string `json:",omitempty"`
	// CANNVersion and TorchNPUVersion are profiler_info's cann_version and
	// torch_npu_version ("": 8.1.RC1 and 2.5.1.post1), e.g. 8.3.RC2 and
	// 2.8.0 for a vLLM-Ascend v0.13.0rc1 capture.
	// From CANN 8.5 the Overlap Analysis window runs from the earliest to
	// the latest device task but PROFILING_ENABLE/DISABLE, with the gaps
	// before and after the kernels as Free (extremesWindow).
	CANNVersion     string `json:",omitempty"`
	TorchNPUVersion string `json:",omitempty"`
	// VLLMAscendVersion, when set, is written to profiler_metadata.json
	// (torch_npu add_metadata key vllm_ascend_version).
	VLLMAscendVersion string `json:",omitempty"`
	// TP is the tensor-parallel size (0: min(Ranks, 8)): Ranks/TP engines
	// (data-parallel replicas) of TP consecutive ranks each.
	TP int `json:",omitempty"`
	// DummyEngines: only the first engine (ranks 0..TP-1) serves the
	// batch; the others run vLLM's dummy steps (execute_dummy_batch): every
	// layer, because the EP exchanges need every rank, but no lm_head,
	// logits all-gather, sampler or token copy. Their ranks write no
	// ProfilerStep#N (the dummy steps do not step the profiler's
	// schedule): their steps are told only by the layer period.
	DummyEngines bool `json:",omitempty"`
	// SideStream runs the MoE router gate on a side stream (stream 3) that
	// the compute stream waits on before the gating; SideStreamNs > 0 is
	// that work's duration per MoE layer (the gate and whatever else the
	// deployment's side stream runs; 0: the gate alone).
	SideStream   bool  `json:",omitempty"`
	SideStreamNs int64 `json:",omitempty"`
	// MoEScale scales the experts' kernels (GroupedMatmul, SwiGlu); 0 is
	// 1. EP16 at batch 1 routes half a token-expert pair per rank, so its
	// GroupedMatmuls are a fraction of an A2 batch-25's.
	MoEScale float64 `json:",omitempty"`
	// VLLMLog writes vLLM's statistics lines beside the ranks
	// (VLLMLogFile): one engine per data-parallel replica, the first busy
	// and the others idle (the second field report's numbers).
	VLLMLog bool `json:",omitempty"`
	// VLLMLogRefStepUs > 0 scales the busy engine's generation rate in
	// the vLLM log with the simulated decode step: the field report's 18
	// tokens/s at this busy-engine step time (µs; BusyStepUs of the rc1
	// capture), 18 x VLLMLogRefStepUs / BusyStepUs of this capture. 0: 18.
	VLLMLogRefStepUs float64 `json:",omitempty"`
	// TorchNPUGating launches MoeGatingTopK through torch_npu's
	// npu_moe_gating_top_k (torch op npu::npu_moe_gating_top_k), as
	// vLLM-Ascend did before v0.13.0rc2; false: the custom
	// moe_gating_top_k (_C_ascend::moe_gating_top_k) of v0.13.0rc2 and
	// later (vllm-ascend.md §5.2, #5579).
	TorchNPUGating bool `json:",omitempty"`
	// TPRef > 0 is the TP size the TP-sharded kernels' durations are for:
	// at TP t the o_proj and lm_head matmuls take TPRef/t of them and the
	// QKV projection the ratio of its per-rank output columns (query heads
	// split over TP, the 4 KV heads replicated past TP 4; vllm-ascend.md
	// §7); attention, norms, the router and the experts stay. 0: no
	// scaling.
	TPRef int `json:",omitempty"`
}

// forRank is s as rank r writes it: a dummy engine's rank (DummyEngines,
// every engine but the first) writes no ProfilerStep#N.
func (s Scenario) forRank(r int) Scenario {
	if s.DummyEngines && r >= s.tpSize() {
		s.ProfilerSteps = false
	}
	return s
}

// GraphModelID is the Model ID of kernels replayed from a captured graph.
const GraphModelID = 1

// decodeTokens returns the tokens a decode step's full-width kernels see
// (FLASHCOMM1 pads to a multiple of TP, a captured graph pads to its
// capture size) and whether the step is replayed from a captured graph.
func (s Scenario) decodeTokens() (int, bool) {
	t := s.Batch
	if s.FlashComm1 {
		tp := s.tpSize()
		t = (t + tp - 1) / tp * tp
	}
	best := 0
	for _, c := range s.CaptureSizes {
		if c >= t && (best == 0 || c < best) {
			best = c
		}
	}
	if best == 0 {
		return t, false
	}
	return best, true
}

// Parallel layout constants of the modelled deployment (Qwen3-235B-A22B,
// vllm-ascend.md §7).
const (
	maxTP       = 8      // tensor-parallel size (ranks per node)
	hiddenSize  = 4096   // model hidden size
	numExperts  = 128    // routed experts
	topK        = 8      // experts per token
	moeInterm   = 1536   // moe_intermediate_size
	vocabSize   = 151936 // vocabulary
	firstStepNo = 2      // number of the first ProfilerStep#N (schedule wait=1, warmup=1)
)

// base returns the common settings of the built-in scenarios.
func base(name string) Scenario {
	return Scenario{
		Name: name, Ranks: 8, Layers: 6, Steps: 4, Batch: 25,
		HotRank: -1, SkewFactor: 1, Seed: 1, SlowRank: -1,
		EventWaits: true, CommJSON: true, SamplerCumsum: true,
	}
}

// Scenarios returns the named built-in scenarios (all with 8 ranks).
//
//   - ep-fc1-cumsum: EP + FLASHCOMM1 + MoE AI_CPU Cumsum, AIV-mode TP collectives.
//   - ep-fc1: EP + FLASHCOMM1, no MoE Cumsum.
//   - noep-cumsum: EP off, FC1 off, MoE Cumsum, AIV-mode TP all-reduces.
//   - clean: EP off, FC1 off, no MoE Cumsum (the sampler Cumsum is still there).
//   - hot-rank: EP on, FC1 off, rank 5's GroupedMatmul 2.5x slower and more tokens.
//   - ep-fc1-cumsum-steps: as ep-fc1-cumsum with ProfilerStep#N events (Step Id column).
//   - clean-steps: as clean with ProfilerStep#N events.
//   - hot-experts: as hot-rank, with 3 hot experts (8x weight) per MoE layer
//     and the per-expert loads written as a MindIE dump beside the profile.
//   - uncaptured-batch: as clean, max-num-seqs 25 and capture sizes
//     1,2,4,8,16,24 (vLLM-Ascend's default list for 25): the 25-request
//     decode batch has no graph and runs eager.
//   - captured-batch: as uncaptured-batch with capture size 25: every decode
//     step is a graph replay.
//   - host-bound: as clean with host launches 4x slower: the device idles
//     between kernels (a large Free share).
func Scenarios() []Scenario {
	a := base("ep-fc1-cumsum")
	a.ExpertParallel, a.FlashComm1, a.Cumsum, a.AivComm = true, true, true, true

	b := base("ep-fc1")
	b.ExpertParallel, b.FlashComm1 = true, true

	c := base("noep-cumsum")
	c.Cumsum, c.AivComm = true, true
	c.Seed = 3

	d := base("clean")
	d.Seed = 4

	e := base("hot-rank")
	e.ExpertParallel = true
	e.HotRank, e.SkewFactor = 5, 2.5
	e.Seed = 5

	f := a
	f.Name, f.ProfilerSteps, f.Seed = "ep-fc1-cumsum-steps", true, 6

	g := d
	g.Name, g.ProfilerSteps, g.Seed = "clean-steps", true, 7

	h := e
	h.Name, h.Seed = "hot-experts", 8
	h.HotExperts, h.HotExpertFactor = 3, 8

	i := d
	i.Name, i.MaxNumSeqs, i.CaptureSizes, i.Seed = "uncaptured-batch", 25, []int{1, 2, 4, 8, 16, 24}, 11

	j := i
	j.Name, j.CaptureSizes, j.Seed = "captured-batch", []int{25}, 12

	k := d
	k.Name, k.HostSlowdown, k.Seed = "host-bound", 4, 10

	return []Scenario{a, b, c, d, e, f, g, h, i, j, k}
}

// Lookup returns the built-in scenario with the given name, or one of
// the field report's captures (FieldReport) or of the fix pairs (FixPairs)
// by its name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s, true
		}
	}
	for _, c := range Captures() {
		if c.Scenario.Name == name {
			return c.Scenario, true
		}
	}
	return Scenario{}, false
}

// Capture is a scenario Lookup knows beside the built-in ones: a field
// report's capture, or a side of a fix pair.
type Capture struct {
	Scenario Scenario
	// What says where it comes from ("field report 2 (A3, MC2)", "fix pair
	// cumsum-off (moe-routing-cumsum): before").
	What string
}

// Captures lists the field reports' captures, then each fix pair's sides,
// each scenario once (the first place it appears names it).
func Captures() []Capture {
	var out []Capture
	seen := map[string]bool{}
	add := func(s Scenario, what string) {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, Capture{s, what})
		}
	}
	for _, s := range FieldReport() {
		add(s, "field report 1 (A2, 25 requests)")
	}
	for _, s := range FieldReport2() {
		add(s, "field report 2 (A3, MC2, 1 request)")
	}
	for _, p := range FixPairs() {
		add(p.Before, "fix pair "+p.Name+" ("+p.Rule+"): before")
		add(p.After, "fix pair "+p.Name+" ("+p.Rule+"): after")
	}
	return out
}

// ScenarioNames lists the built-in scenario names, sorted.
func ScenarioNames() []string {
	var n []string
	for _, s := range Scenarios() {
		n = append(n, s.Name)
	}
	sort.Strings(n)
	return n
}

// Validate checks a scenario and reports the first problem.
func (s Scenario) Validate() error {
	for _, c := range s.checks() {
		if c.bad {
			return errors.New("tracegen: " + c.msg)
		}
	}
	return nil
}

// check is one rule of Validate: bad when the scenario breaks it.
type check struct {
	bad bool
	msg string
}

// atLeast is the rule field >= min.
func atLeast[T int | float64](field string, v, min T) check {
	return check{v < min, fmt.Sprintf("%s must be >= %v, got %v", field, min, v)}
}

// when limits a rule to scenarios where cond holds.
func (c check) when(cond bool) check {
	c.bad = c.bad && cond
	return c
}

// checks lists Validate's rules in the order they are reported.
func (s Scenario) checks() []check {
	hot := s.HotExperts > 0
	cs := []check{
		atLeast("Ranks", s.Ranks, 1),
		{s.Ranks > maxTP && s.Ranks%maxTP != 0, fmt.Sprintf("Ranks above %d must be a multiple of %d, got %d", maxTP, maxTP, s.Ranks)},
		atLeast("Layers", s.Layers, 1),
		atLeast("Steps", s.Steps, 1),
		atLeast("Batch", s.Batch, 1),
		{s.HotRank >= s.Ranks, fmt.Sprintf("HotRank %d out of range (Ranks %d)", s.HotRank, s.Ranks)},
		{s.SlowRank >= s.Ranks, fmt.Sprintf("SlowRank %d out of range (Ranks %d)", s.SlowRank, s.Ranks)},
		atLeast("SlowFactor", s.SlowFactor, 0),
		atLeast("PP", s.PP, 0),
		atLeast("StageFactor", s.StageFactor, 0),
		{s.PP > 1 && (s.Ranks%s.PP != 0 || (s.Ranks/s.PP)%s.tpSize() != 0), fmt.Sprintf("PP %d must divide Ranks %d into stages that TP %d divides", s.PP, s.Ranks, s.tpSize())},
		atLeast("MsprofSlice", s.MsprofSlice, 0),
		atLeast("SkewFactor", s.SkewFactor, 0),
		{s.HotExperts < 0 || s.HotExperts > numExperts, fmt.Sprintf("HotExperts must be in 0..%d, got %d", numExperts, s.HotExperts)},
		{hot && !s.ExpertParallel, "HotExperts needs ExpertParallel (without EP every rank computes every expert)"},
		// Ranks >= 1 here: the rule above reports Ranks < 1 first.
		{hot && s.Ranks > 0 && numExperts%s.Ranks != 0, fmt.Sprintf("HotExperts needs Ranks dividing %d experts, got %d ranks", numExperts, s.Ranks)},
		atLeast("HotExpertFactor", s.HotExpertFactor, 1).when(hot),
		{s.HotExpertsRank < 0 || s.HotExpertsRank > s.Ranks, fmt.Sprintf("HotExpertsRank must be in 0..Ranks (1 + a rank), got %d", s.HotExpertsRank)},
		{s.HotExpertsRank > 0 && s.Ranks > 0 && s.HotExperts > numExperts/s.Ranks,
			fmt.Sprintf("HotExpertsRank: %d hot experts do not fit one rank's %d", s.HotExperts, numExperts/max(s.Ranks, 1))},
		{s.EPLB && !s.ExpertParallel, "EPLB needs ExpertParallel"},
		{s.Dispatcher != "" && s.Dispatcher != "allgather" && dispatcherBlock(s.Dispatcher) == nil,
			fmt.Sprintf("Dispatcher must be allgather, mc2, fused_mc2 or alltoall, got %q", s.Dispatcher)},
		{dispatcherBlock(s.Dispatcher) != nil && !s.ExpertParallel, fmt.Sprintf("Dispatcher %s needs ExpertParallel", s.Dispatcher)},
		atLeast("HostSlowdown", s.HostSlowdown, 0),
		atLeast("TP", s.TP, 0),
		{s.TP > 0 && s.Ranks%s.TP != 0, fmt.Sprintf("TP %d must divide Ranks %d", s.TP, s.Ranks)},
		{s.DummyEngines && s.Ranks/s.tpSize() < 2, "DummyEngines needs two engines or more (Ranks/TP >= 2)"},
		atLeast("MoEScale", s.MoEScale, 0),
		atLeast("SideStreamNs", int(s.SideStreamNs), 0),
		atLeast("TPRef", s.TPRef, 0),
	}
	for _, c := range s.CaptureSizes {
		cs = append(cs, atLeast("capture sizes", c, 1))
	}
	return cs
}

// TPSize is the tensor-parallel group size (ranks of one node): TP, or
// its default.
func (s Scenario) TPSize() int { return s.tpSize() }

// tpSize is the tensor-parallel group size (ranks of one node).
func (s Scenario) tpSize() int {
	if s.TP > 0 {
		return s.TP
	}
	if s.Ranks < maxTP {
		return s.Ranks
	}
	return maxTP
}

// shardFactor is how much longer a kernel of shard kind k runs at this
// scenario's TP than at TPRef (1 without TPRef).
func (s Scenario) shardFactor(k shardKind) float64 {
	if s.TPRef <= 0 {
		return 1
	}
	switch k {
	case shardCols:
		return float64(s.TPRef) / float64(s.tpSize())
	case shardQKV:
		return float64(qkvCols(s.tpSize())) / float64(qkvCols(s.TPRef))
	}
	return 1
}

// qkvCols is the QKV projection's output columns per rank at TP tp:
// 64 query heads split over TP, 4 KV heads (K and V) split while they
// last, then one per rank (replicated), head_dim 128: 1280 at TP8.
func qkvCols(tp int) int {
	const qHeads, kvHeads, headDim = 64, 4, 128
	return (qHeads/tp + 2*max(kvHeads/tp, 1)) * headDim
}

// skew returns the effective GroupedMatmul slow-down of rank r.
func (s Scenario) skew(r int) float64 {
	if r == s.HotRank && s.HotRank >= 0 && s.SkewFactor > 0 {
		return s.SkewFactor
	}
	return 1
}

// slow returns the compute slow-down of rank r (SlowRank, and
// StageFactor on the last pipeline stage).
func (s Scenario) slow(r int) float64 {
	f := 1.0
	if r == s.SlowRank && s.SlowFactor > 0 {
		f = s.SlowFactor
	}
	if s.PP > 1 && s.StageFactor > 0 && s.stage(r) == s.PP-1 {
		f *= s.StageFactor
	}
	return f
}

// stage is rank r's pipeline stage (0 without PP).
func (s Scenario) stage(r int) int {
	if s.PP <= 1 {
		return 0
	}
	return r / (s.Ranks / s.PP)
}

// localExperts is the number of experts hosted by one rank.
func (s Scenario) localExperts() int {
	if s.ExpertParallel {
		e := numExperts / s.Ranks
		if e < 1 {
			e = 1
		}
		return e
	}
	return numExperts
}

// expertInterm is the per-rank intermediate size of one expert (w13 output
// is twice this): EP keeps whole experts, pure TP splits them.
func (s Scenario) expertInterm() int {
	if s.ExpertParallel {
		return moeInterm
	}
	return moeInterm / s.tpSize()
}

// stepNumber is the ProfilerStep number of the k-th captured step.
func stepNumber(k int) int { return firstStepNo + k }

// DispatcherScenario is hot-rank without the hot rank (EP on, FC1 off), its
// MoE layers on the dispatcher path d (see Scenario.Dispatcher), named
// "dispatcher-" + d.
func DispatcherScenario(d string) Scenario {
	s, _ := Lookup("hot-rank")
	s.Name, s.Dispatcher, s.HotRank, s.SkewFactor = "dispatcher-"+d, d, -1, 1
	return s
}

// extremesWindow reports whether the scenario's writer (its CANN version,
// 8.5 and later) bounds the Overlap Analysis window by the earliest and
// latest device task of any kind but PROFILING_ENABLE/DISABLE, as msprof's
// pipeline_overlap_viewer.py does (docs/formats.md#the-device-window-by-writer-version).
func (s Scenario) extremesWindow() bool {
	parts := strings.SplitN(s.CANNVersion, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (major > 8 || major == 8 && minor >= 5)
}
