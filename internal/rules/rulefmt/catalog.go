package rulefmt

import (
	"sort"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/editdist"
)

// MetricDoc documents one metric (or a family, with a <placeholder>): the
// declaration of the pass that sets it (analysis.MetricTable).
type MetricDoc = analysis.Metric

// LookupMetric returns the declaration a metric name belongs to.
func LookupMetric(name string) (MetricDoc, bool) { return analysis.LookupMetric(name) }

// Closest returns up to n names from candidates nearest to name
// (Levenshtein distance, then alphabetical).
func Closest(name string, candidates []string, n int) []string {
	type c struct {
		s string
		d int
	}
	var all []c
	for _, s := range candidates {
		all = append(all, c{s, editdist.Distance(name, s)})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].s < all[j].s
	})
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].s)
	}
	return out
}

// MetricNames returns every catalog name (families with placeholders),
// plus the concrete per-type HCCL names users most often mean.
func MetricNames() []string {
	var out []string
	for _, m := range analysis.MetricTable() {
		out = append(out, m.Name)
	}
	for _, t := range []string{"allgather", "allreduce", "reducescatter", "alltoall", "alltoallv", "broadcast"} {
		out = append(out, analysis.FamilyHCCLTypeUs.Of(t), analysis.FamilyHCCLTypeCount.Of(t),
			analysis.FamilyHCCLPerLayerTypeCount.Of(t), analysis.FamilyHCCLPerLayerTypeUs.Of(t))
	}
	for _, g := range []string{"tp", "ep", "dp"} {
		out = append(out, analysis.FamilyHCCLGroupUs.Of(g), analysis.FamilyHCCLGroupCount.Of(g))
	}
	for _, q := range analysis.SkewQuantities {
		out = append(out, analysis.FamilySkewMaxOverMedian.Of(q), analysis.FamilySkewMaxRank.Of(q))
	}
	return out
}

// FactType is the type of a fact's value.
type FactType string

// Fact types.
const (
	FactInt    FactType = "int"
	FactBool   FactType = "bool"
	FactString FactType = "string"
	FactInts   FactType = "[]int"
	FactFloat  FactType = "float"
)

// FactDoc documents one fact (fact.<name> in expressions).
type FactDoc struct {
	Name string
	Type FactType
	Doc  string
	// From says where it can come from.
	From string
}

// Facts is the fact catalog.
var Facts = []FactDoc{
	{"tp", FactInt, "tensor-parallel size", "--tensor-parallel-size; profile: size of the tp group in parallel_group_info"},
	{"dp", FactInt, "data-parallel size (replicas, each with its own decode batch)", "--data-parallel-size; profile: size of the dp group"},
	{"ep", FactInt, "expert-parallel group size", "profile: size of the ep group"},
	{"expert_parallel", FactBool, "expert parallel on", "--enable-expert-parallel; profile: an ep group with more than one rank"},
	{"flashcomm1", FactBool, "FLASHCOMM1 (sequence parallel for MoE) on", "VLLM_ASCEND_ENABLE_FLASHCOMM1, additional-config enable_flashcomm1; profile: reduce-scatters and no all-reduce per MoE layer"},
	{"capture_sizes", FactInts, "ACL graph capture sizes", "--compilation-config cudagraph_capture_sizes, else vLLM-Ascend's default list for --max-num-seqs"},
	{"cudagraph_mode", FactString, "graph mode: NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE (vLLM's CUDAGraphMode, any case; another value is refused from --fact, ignored with a warning from the script)", "--compilation-config cudagraph_mode; --enforce-eager = NONE"},
	{"max_num_seqs", FactInt, "--max-num-seqs", "--max-num-seqs"},
	{"concurrency", FactInt, "concurrent requests of the benchmark", "--fact concurrency=N; vLLM log/bench: serving.concurrency rounded (running requests stand for it when nothing says)"},
	{"async_scheduling", FactBool, "--async-scheduling on", "--async-scheduling"},
	{"prefix_caching", FactBool, "prefix caching on", "--enable-prefix-caching / --no-enable-prefix-caching"},
	{"multistream_overlap_shared_expert", FactBool, "additional-config multistream_overlap_shared_expert", "--additional-config"},
	{"enable_cpu_binding", FactBool, "additional-config enable_cpu_binding", "--additional-config"},
	{"eplb", FactBool, "an eplb_config is given", "--additional-config eplb_config"},
	{"model", FactString, "served model path or name", "vllm serve MODEL"},
	{"quantization", FactString, "the --quantization method (vLLM-Ascend runs W8A8 weights with ascend); unknown when the flag is absent", "--quantization"},
	{"vllm_ascend_version", FactString, "vLLM-Ascend version, e.g. v0.13.0rc2", "profile (profiler_metadata.json); script: image tag vllm-ascend:vX, pip lines; --source DIR: its vllm_ascend/_version.py; --fact"},
	{"vllm_version", FactString, "vLLM version, e.g. v0.13.0", "profile (profiler_metadata.json); vLLM's log start-up lines; script: pip lines; --fact"},
	{"cann_version", FactString, "CANN version, e.g. 8.3.RC2", "profile (profiler_info_*.json, profiler_metadata.json); script: cann image tag, CANN toolkit path; --fact"},
	{"torch_npu_version", FactString, "torch_npu version, e.g. 2.8.0.post1", "profile (profiler_info_*.json, profiler_metadata.json); script: pip lines; --fact"},
	{"phase", FactString, "decode or prefill", "profile: decode when the attention batch is at most 1024 tokens"},
	{"ranks", FactInt, "ranks analyzed", "profile"},
	{"moe.dispatcher", FactString, "the MoE token dispatcher path: allgather (MoeInitRouting*), mc2 (MoeDistributeDispatch*/MoeDistributeCombine*), fused_mc2 (DispatchFFNCombine, DispatchGmmCombineDecode) or alltoall (MoeTokenPermute/MoeTokenUnpermute with hcom_alltoallv_); read as fact[\"moe.dispatcher\"]", "profile: the kernels that open the MoE layers (the path that opened the most)"},
	{"workload", FactString, "the job profiled: vllm (serving), training or unknown", "profile: framework op names, device op types, VLLM_* variables, the rank folders' names (context.workload)"},
	// The serving context (internal/inputs/vllmserve): read as fact["serving.NAME"].
	{"serving.concurrency", FactFloat, "concurrent requests: vllm bench serve's maximum request concurrency, else the median running requests in vLLM's log", "--vllm-bench, --vllm-log (or a vLLM *.log in the profile folder)"},
	{"serving.output_tps", FactFloat, "output tokens/s: bench output token throughput, else the log's mean generation throughput", "--vllm-bench, --vllm-log"},
	{"serving.prompt_tps", FactFloat, "mean prompt throughput in vLLM's log (tokens/s)", "--vllm-log"},
	{"serving.generation_tps", FactFloat, "mean generation throughput in vLLM's log (tokens/s)", "--vllm-log"},
	{"serving.running", FactFloat, "mean running requests in vLLM's log", "--vllm-log"},
	{"serving.waiting", FactFloat, "mean waiting requests in vLLM's log", "--vllm-log"},
	{"serving.engine.generation_tps", FactFloat, "generation throughput of one busy engine (tokens/s): the rate a request sees, beside serving.generation_tps, the server's total", "--vllm-log"},
	{"serving.busy_engines", FactFloat, "engines that served requests in vLLM's log (mean Running >= 0.5; an idle data-parallel engine runs dummy steps): the hit rates and serving.engine.generation_tps are theirs", "--vllm-log"},
	{"serving.engines", FactFloat, "engines with statistics lines in vLLM's log: its data-parallel replicas (serving.running and a log-derived concurrency are summed over them)", "--vllm-log"},
	{"serving.kv_cache_usage", FactFloat, "mean KV-cache usage in vLLM's log (ratio 0..1)", "--vllm-log"},
	{"serving.prefix_cache_hit_rate", FactFloat, "prefix-cache hit rate in vLLM's log (ratio 0..1)", "--vllm-log"},
	{"serving.mm_cache_hit_rate", FactFloat, "multimodal-cache hit rate in vLLM's log (ratio 0..1)", "--vllm-log"},
	{"serving.request_tps", FactFloat, "requests/s of vllm bench serve", "--vllm-bench"},
	{"serving.ttft_ms", FactFloat, "mean time to first token of vllm bench serve (ms)", "--vllm-bench"},
	{"serving.tpot_ms", FactFloat, "mean time per output token of vllm bench serve (ms)", "--vllm-bench"},
}

// LookupFact returns a fact's catalog entry.
func LookupFact(name string) (FactDoc, bool) {
	for _, f := range Facts {
		if f.Name == name {
			return f, true
		}
	}
	return FactDoc{}, false
}

// FactNames are the catalog's fact names, in its order.
func FactNames() []string {
	out := make([]string, len(Facts))
	for i, f := range Facts {
		out[i] = f.Name
	}
	return out
}

// PlanMetricStepTimeChangePct is the plan's predicted step-time change
// (plan.step_time_change_pct, %), which a budget can gate on:
// check --budget 'plan.step_time_change_pct >= -5' fails when the plan
// predicts more than 5% shorter decode steps.
const PlanMetricStepTimeChangePct = "plan.step_time_change_pct"

// IsPlanMetric reports whether a budget's metric is the plan's.
func IsPlanMetric(name string) bool { return name == PlanMetricStepTimeChangePct }
