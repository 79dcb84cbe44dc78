package model

// Serving is the serving context: serving.* metrics with their sources,
// read from vLLM's server log and `vllm bench serve` results (package
// internal/inputs/vllmserve builds it).
//
// From the server log (statistics lines of intervals with work, prompt or
// generation throughput above 0; with several engines, per engine then
// summed or averaged as below):
//
//	serving.prompt_tps            mean prompt throughput, summed over engines (tokens/s)
//	serving.generation_tps        mean generation throughput, summed over engines (tokens/s)
//	serving.running               mean running requests, summed over engines
//	serving.running.max           largest running requests (summed over engines per interval index)
//	serving.waiting               mean waiting requests, summed over engines
//	serving.kv_cache_usage        mean KV-cache usage (ratio 0..1), mean over engines
//	serving.prefix_cache_hit_rate last prefix-cache hit rate (ratio; vLLM reports it over its
//	                              recent-requests window), mean over the busy engines
//	serving.mm_cache_hit_rate     last multimodal-cache hit rate (ratio), mean over the busy engines
//	serving.busy_engines          engines that served requests: mean Running >= 0.5 over their
//	                              lines (an idle data-parallel engine runs dummy steps; its lines
//	                              show what finished before); all engines when none or all did
//	serving.engine.generation_tps mean generation throughput of one busy engine: the rate a
//	                              request sees (serving.generation_tps is the server's total)
//	serving.engines               engines with statistics lines (data-parallel replicas; per-engine
//	                              batches are about serving.running / serving.engines)
//	serving.log.samples           statistics lines read
//	serving.log.malformed         statistics lines skipped because a field did not parse
//
// From `vllm bench serve`: serving.request_tps, serving.output_tps,
// serving.total_tps, serving.ttft_ms, serving.ttft_p99_ms, serving.tpot_ms,
// serving.tpot_p99_ms, serving.bench.requests, serving.bench.duration_s and
// serving.concurrency (Maximum request concurrency).
//
// serving.concurrency is the bench's maximum request concurrency, else the
// median running requests in the log (summed over engines): running
// requests stand for the concurrency when nothing says it.
// serving.output_tps is the bench's output token throughput, else the log's
// generation throughput.
type Serving struct {
	Metrics     map[string]float64 `json:"metrics"`
	Unavailable map[string]string  `json:"unavailable"`
	// Sources names, per metric, the file (and how) it was read.
	Sources map[string]string `json:"sources"`
	// Files are the files read.
	Files []string `json:"files"`
	// Formats are the statistics-line formats seen (v0, v1, v1-parts).
	Formats []string `json:"formats,omitempty"`
	// MalformedLines are the first malformed statistics lines' numbers.
	MalformedLines []int `json:"malformed_lines,omitempty"`
	// Versions are the stack versions the log states (vLLM's start-up
	// lines, pip lines), by fact name (vllm_version, ...), and where
	// (file:line and how).
	Versions       map[string]string `json:"versions,omitempty"`
	VersionSources map[string]string `json:"version_sources,omitempty"`
}
