package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/parser/model"
)

// MetricDoc documents one metric (or a family, with a <placeholder>).
// The table below is the single definition of the names rules may use; it
// also generates the metric table of docs/rules.md.
type MetricDoc struct {
	Name string
	Unit string // µs, count, ratio, tokens, rank
	// Cluster: a cross-rank metric (one value for the profile), else per rank.
	Cluster bool
	Doc     string
}

// Placeholders in family names and what they stand for.
var placeholders = map[string]string{
	"<type>":  "(?:" + strings.Join(model.HCCLTypes(), "|") + ")",
	"<group>": `[A-Za-z0-9_]+`,
	"<id>":    `[0-9]+`,
	"<q>":     "(?:" + strings.Join(SkewQuantities, "|") + ")",
}

// SkewQuantities are the <q> of the cluster's skew.<q>.* metrics (the
// slow-rank analysis); the EP-rank GroupedMatmul skew is skew.moe.gmm.*.
var SkewQuantities = []string{"computing", "communication", "free"}

// Metrics is the metric catalog.
var Metrics = []MetricDoc{
	{"device.window.time_us", "µs", false, "last end minus first start over device tasks and HCCL big ops"},
	{"overlap.computing.time_us", "µs", false, "union of compute-kernel intervals"},
	{"overlap.communication.time_us", "µs", false, "union of HCCL big-op intervals"},
	{"overlap.communication_not_overlapped.time_us", "µs", false, "communication minus computing"},
	{"overlap.overlapped.time_us", "µs", false, "communication that overlaps computing"},
	{"overlap.free.time_us", "µs", false, "window minus the union of computing and communication (device idle)"},
	{"hccl.total.time_us", "µs", false, "sum of HCCL big ops"},
	{"hccl.total.count", "count", false, "number of HCCL big ops"},
	{"hccl.<type>.time_us", "µs", false, "HCCL big ops of one type: " + strings.Join(model.HCCLTypes(), ", ")},
	{"hccl.<type>.count", "count", false, "number of HCCL big ops of one type"},
	{"hccl.group.<group>.time_us", "µs", false, "HCCL big ops of one group (tp, ep, dp, ... from parallel_group_info)"},
	{"hccl.group.<group>.count", "count", false, "number of HCCL big ops of one group"},
	{"hccl.per_layer.count", "count", false, "collectives of one MoE layer (the most frequent pattern between MoE routing kernels; the per-step logits all-gather is not one of them)"},
	{"hccl.per_layer.time_us", "µs", false, "mean time of one MoE layer's collectives"},
	{"hccl.per_layer.<type>.count", "count", false, "collectives of one type per MoE layer"},
	{"hccl.per_layer.<type>.time_us", "µs", false, "mean time per MoE layer of the collectives of one type"},
	{"moe.routing.time_us", "µs", false, "MoeInitRouting* kernels (Custom, V2, V3)"},
	{"moe.routing.count", "count", false, "number of MoeInitRouting* kernels (one per MoE layer executed)"},
	{"moe.cumsum.time_us", "µs", false, "Cumsum kernels in the MoE routing path (after MoeInitRouting*, before the next GroupedMatmul*, same stream)"},
	{"moe.cumsum.count", "count", false, "number of MoE routing-path Cumsum kernels"},
	{"moe.cumsum.aicpu.time_us", "µs", false, "MoE routing-path Cumsum kernels that ran on the AI CPU"},
	{"moe.cumsum.aicpu.count", "count", false, "number of those"},
	{"moe.gmm.time_us", "µs", false, "GroupedMatmul* kernels"},
	{"moe.gmm.count", "count", false, "number of GroupedMatmul* kernels"},
	{"moe.gmm.tokens", "tokens", false, "sum of the first dimension of each GroupedMatmul's first input (tokens routed to this rank's experts)"},
	{"moe.gating.time_us", "µs", false, "MoeGatingTopK* kernels"},
	{"moe.gating.count", "count", false, "number of MoeGatingTopK* kernels"},
	{"moe.dispatch.time_us", "µs", false, "dispatch kernels (MoeDistributeDispatch*, MoeTokenPermute, ...)"},
	{"moe.dispatch.count", "count", false, "number of dispatch kernels"},
	{"moe.combine.time_us", "µs", false, "combine kernels (MoeDistributeCombine*, MoeTokenUnpermute, MoeFinalizeRouting*)"},
	{"moe.combine.count", "count", false, "number of combine kernels"},
	{"moe.layers.count", "count", false, "MoE layers per decode step (moe.routing.count / decode.steps.count)"},
	{"cumsum.other.time_us", "µs", false, "Cumsum kernels outside the MoE routing path (e.g. the sampler's top-p)"},
	{"cumsum.other.count", "count", false, "number of those"},
	{"decode.steps.count", "count", false, "decode steps: ProfilerStep#N count, else step boundaries found from the collective pattern"},
	{"decode.batch.observed", "tokens", false, "most frequent leading dimension of the decode attention kernels' first input (the decode batch; padded to the capture size in a graph replay)"},
	{"decode.batch.min", "tokens", false, "smallest decode batch seen"},
	{"decode.batch.max", "tokens", false, "largest decode batch seen"},
	{"decode.batch.distinct.count", "count", false, "number of distinct decode batch sizes"},
	{"graph.kernels.share", "ratio", false, "share of compute kernels replayed from a captured graph (Model ID not 4294967295)"},
	{"event_wait.time_us", "µs", false, "EVENT_WAIT device tasks, all streams"},
	{"event_wait.count", "count", false, "number of EVENT_WAIT tasks"},
	{"event_wait.stream.<id>.time_us", "µs", false, "EVENT_WAIT time on one stream"},
	{"event_wait.stream.<id>.count", "count", false, "EVENT_WAIT tasks on one stream"},
	{"event_wait.compute_stream.time_us", "µs", false, "EVENT_WAIT time on streams that carry compute kernels"},
	{"event_wait.compute_stream.share", "ratio", false, "that time over those streams' spans"},
	{"kernel.compute.time_us", "µs", false, "sum of compute-kernel durations"},
	{"kernel.compute.count", "count", false, "number of compute kernels"},
	{"skew.<q>.max_over_median", "ratio", true, "max over ranks / median over ranks of computing (overlap.computing.time_us), communication or free"},
	{"skew.<q>.max_rank", "rank", true, "the rank holding that maximum"},
	{"skew.<q>.median_us", "µs", true, "median over ranks"},
	{"skew.<q>.max_us", "µs", true, "maximum over ranks"},
	{"skew.<q>.mad_us", "µs", true, "median absolute deviation over ranks"},
	{"skew.moe.gmm.max_over_mean", "ratio", true, "per ep group: max over its ranks of GroupedMatmul time / mean (the worst group)"},
	{"skew.moe.gmm.max_rank", "rank", true, "the rank with the most GroupedMatmul time in that group (the hot rank)"},
	{"skew.moe.gmm.tokens.max_over_mean", "ratio", true, "the same over GroupedMatmul tokens (moe.gmm.tokens)"},
	{"skew.moe.gmm.lost.time_us", "µs", true, "MoE time lost to imbalance: per MoE layer, the slowest EP rank's GroupedMatmul time minus the mean, summed over the capture"},
	{"skew.moe.gmm.ranks.count", "count", true, "ranks compared in that group"},
	{"experts.imbalance.max", "ratio", true, "max over MoE layers of the most loaded expert's tokens / mean tokens per expert (needs --experts or dumps)"},
	{"experts.imbalance.mean", "ratio", true, "mean over layers of that ratio"},
	{"experts.imbalance.max_layer", "count", true, "the layer where the max is reached"},
	{"experts.hot.share.max", "ratio", true, "largest share of one expert in its layer's tokens"},
	{"experts.layers.count", "count", true, "layers of the expert-load input"},
	{"experts.count", "count", true, "experts of the expert-load input"},
	{"experts.tokens.count", "tokens", true, "tokens of the expert-load input"},
	{"experts.rank_imbalance.max", "ratio", true, "per layer, max/mean over EP ranks of each rank's tokens; max over layers"},
	{"experts.rank_imbalance.mean", "ratio", true, "the same, mean over layers"},
	{"experts.eplb.ranks", "count", true, "EP size of the predicted EPLB plan"},
	{"experts.eplb.redundant", "count", true, "redundant slots of the predicted plan"},
	{"experts.eplb.before.max", "ratio", true, "predicted max/mean rank load of the current placement, max over layers"},
	{"experts.eplb.before.mean", "ratio", true, "the same, mean over layers"},
	{"experts.eplb.after.max", "ratio", true, "the same for the plan `npuprof eplb plan` would write"},
	{"experts.eplb.after.mean", "ratio", true, "the same, mean over layers"},
	{"experts.eplb.max_load.reduction", "ratio", true, "1 - (slowest rank's tokens after / before) of that plan"},
	{"experts.log.rank_imbalance.mean", "ratio", true, "last logged peak-to-average ratio (vLLM-Ascend), mean"},
	{"experts.log.rank_imbalance.max", "ratio", true, "the same, max"},
	{"experts.log.rank_imbalance.min", "ratio", true, "the same, min"},
	{"experts.log.rank_imbalance.updated.mean", "ratio", true, "last logged ratio after vLLM-Ascend's own EPLB placement, mean"},
	{"experts.log.rank_imbalance.updated.max", "ratio", true, "the same, max"},
	{"experts.log.balancedness", "ratio", true, "last upstream vLLM `EPLB step:` balancedness (avg/max)"},
	{"experts.log.avg_tokens", "tokens", true, "its avg_tokens"},
	{"experts.log.max_tokens", "tokens", true, "its max_tokens"},
	{"experts.log.lines.count", "count", true, "imbalance log lines read"},
	{"collectives.matched", "count", true, "collectives matched across ranks (same communicator, type and ordinal)"},
	{"collectives.wait.time_us", "µs", true, "time ranks spent waiting for the last arrival at matched collectives"},
	{"slow_ranks.count", "count", true, "ranks named slow (robust outliers of computing or free, or late arrivals)"},
}

var metricPatterns []*regexp.Regexp

func init() {
	for _, m := range Metrics {
		p := regexp.QuoteMeta(m.Name)
		for ph, re := range placeholders {
			p = strings.ReplaceAll(p, regexp.QuoteMeta(ph), re)
		}
		metricPatterns = append(metricPatterns, regexp.MustCompile("^"+p+"$"))
	}
}

// LookupMetric returns the catalog entry a metric name belongs to.
func LookupMetric(name string) (MetricDoc, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	for i, m := range Metrics {
		if metricPatterns[i].MatchString(name) {
			return m, true
		}
	}
	return MetricDoc{}, false
}

// Closest returns up to n names from candidates nearest to name
// (Levenshtein distance, then alphabetical).
func Closest(name string, candidates []string, n int) []string {
	type c struct {
		s string
		d int
	}
	var all []c
	for _, s := range candidates {
		all = append(all, c{s, levenshtein(name, s)})
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
	for _, m := range Metrics {
		out = append(out, m.Name)
	}
	for _, t := range []string{"allgather", "allreduce", "reducescatter", "alltoall", "alltoallv", "broadcast"} {
		out = append(out, "hccl."+t+".time_us", "hccl."+t+".count", "hccl.per_layer."+t+".count", "hccl.per_layer."+t+".time_us")
	}
	for _, g := range []string{"tp", "ep", "dp"} {
		out = append(out, "hccl.group."+g+".time_us", "hccl.group."+g+".count")
	}
	for _, q := range SkewQuantities {
		out = append(out, "skew."+q+".max_over_median", "skew."+q+".max_rank")
	}
	return out
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
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
	{"vllm_ascend_version", FactString, "vLLM-Ascend version, e.g. v0.13.0rc2", "image tag vllm-ascend:vX in the script; --fact"},
	{"phase", FactString, "decode or prefill", "profile: decode when the attention batch is at most 1024 tokens"},
	{"ranks", FactInt, "ranks analyzed", "profile"},
	// The serving context (parser/vllmlog): read as fact["serving.NAME"].
	{"serving.concurrency", FactFloat, "concurrent requests: vllm bench serve's maximum request concurrency, else the median running requests in vLLM's log", "--vllm-bench, --vllm-log (or a vLLM *.log in the profile folder)"},
	{"serving.output_tps", FactFloat, "output tokens/s: bench output token throughput, else the log's mean generation throughput", "--vllm-bench, --vllm-log"},
	{"serving.prompt_tps", FactFloat, "mean prompt throughput in vLLM's log (tokens/s)", "--vllm-log"},
	{"serving.generation_tps", FactFloat, "mean generation throughput in vLLM's log (tokens/s)", "--vllm-log"},
	{"serving.running", FactFloat, "mean running requests in vLLM's log", "--vllm-log"},
	{"serving.waiting", FactFloat, "mean waiting requests in vLLM's log", "--vllm-log"},
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

func factNames() []string {
	out := make([]string, len(Facts))
	for i, f := range Facts {
		out[i] = f.Name
	}
	return out
}

// MetricTableMarkdown renders the catalog as the table docs/rules.md holds.
func MetricTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| metric | unit | scope | meaning |\n|---|---|---|---|\n")
	for _, m := range Metrics {
		scope := "rank"
		if m.Cluster {
			scope = "cluster"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Unit, scope, m.Doc)
	}
	return b.String()
}

// FactTableMarkdown renders the fact catalog for docs/rules.md.
func FactTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| fact | type | meaning | from |\n|---|---|---|---|\n")
	for _, f := range Facts {
		ref := "fact." + f.Name
		if strings.Contains(f.Name, ".") {
			ref = `fact["` + f.Name + `"]`
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", ref, f.Type, f.Doc, f.From)
	}
	return b.String()
}
