package render

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/npuprof/npuprof/results"
)

// ServingKeys are the serving metrics the summaries show first, in order.
var ServingKeys = []string{
	"serving.concurrency", "serving.output_tps", "serving.request_tps", "serving.prompt_tps", "serving.generation_tps",
	"serving.running", "serving.running.max", "serving.waiting", "serving.kv_cache_usage",
	"serving.prefix_cache_hit_rate", "serving.mm_cache_hit_rate",
	"serving.ttft_ms", "serving.ttft_p99_ms", "serving.tpot_ms", "serving.tpot_p99_ms",
}

// ServingValue formats one serving metric for people: rates as %,
// throughputs in tokens/s (req/s for requests), latencies in ms.
func ServingValue(name string, v float64) string {
	switch {
	case strings.HasSuffix(name, "_rate") || strings.HasSuffix(name, "_usage"):
		return fmt.Sprintf("%.1f%%", v*100)
	case name == "serving.request_tps":
		return fmt.Sprintf("%.2f req/s", v)
	case strings.HasSuffix(name, "_tps"):
		return fmt.Sprintf("%.1f tok/s", v)
	case strings.HasSuffix(name, "_ms"):
		return fmt.Sprintf("%.2f ms", v)
	case strings.HasSuffix(name, "_s"):
		return fmt.Sprintf("%.2f s", v)
	}
	return fmt.Sprintf("%g", v)
}

// ServingOrder returns the metric names of a serving context: ServingKeys
// first, then the rest sorted.
func ServingOrder(m map[string]float64) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range ServingKeys {
		if _, ok := m[k]; ok {
			out = append(out, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// ServingFacts turns the serving context into header facts (name, value,
// source) for the HTML report.
func ServingFacts(c *results.ServingDoc) []Fact {
	if c == nil {
		return nil
	}
	var out []Fact
	for _, k := range ServingOrder(c.Metrics) {
		out = append(out, Fact{Name: k, Value: ServingValue(k, c.Metrics[k]), Source: c.Sources[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Unavailable)) {
		out = append(out, Fact{Name: k, Value: "unavailable", Source: c.Unavailable[k]})
	}
	return out
}

// writeServing writes the serving context section of the terminal summary.
func writeServing(ew *errWriter, c *results.ServingDoc) {
	if c == nil {
		return
	}
	ew.printf("\nServing context (%s)\n", Safe(strings.Join(c.Files, ", "), 300))
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	for _, k := range ServingOrder(c.Metrics) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k, ServingValue(k, c.Metrics[k]), Safe(c.Sources[k], 200))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Unavailable)) {
		fmt.Fprintf(tw, "  %s\tunavailable\t%s\n", k, Safe(c.Unavailable[k], 200))
	}
	tw.Flush()
	if n := c.Metrics["serving.log.malformed"]; n > 0 {
		ew.printf("  note: %g malformed vLLM statistics line(s) skipped (lines %s)\n", n, joinInts(c.MalformedLines, ", "))
	}
}
