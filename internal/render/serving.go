package render

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/results"
)

// ServingKeys are the serving metrics the summaries show first, in order.
var ServingKeys = []string{
	"serving.concurrency", "serving.output_tps", "serving.request_tps", "serving.prompt_tps", "serving.generation_tps",
	"serving.running", "serving.running.max", "serving.waiting", "serving.kv_cache_usage",
	"serving.prefix_cache_hit_rate", "serving.mm_cache_hit_rate",
	"serving.ttft_ms", "serving.ttft_p99_ms", "serving.tpot_ms", "serving.tpot_p99_ms",
}

// The serving log's own counts: statistics lines read and skipped.
const (
	metricLogSamples   = "serving.log.samples"
	metricLogMalformed = "serving.log.malformed"
)

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
func writeServing(ew *errWriter, c *results.ServingDoc, all, tables bool) {
	if c == nil {
		return
	}
	head := Safe(strings.Join(c.Files, ", "), 300)
	lines, okL := c.Metrics[metricLogSamples]
	bad, okB := c.Metrics[metricLogMalformed]
	fold := !all && okL && okB // the log's own counts go in the header
	if fold {
		head += fmt.Sprintf("; %g statistics line(s), %g skipped", lines, bad)
	}
	ew.printf("\nServing context (%s)\n", head)
	if !tables {
		var kv []string
		for _, k := range ServingOrder(c.Metrics) {
			if !fold || (k != metricLogSamples && k != metricLogMalformed) {
				kv = append(kv, strings.TrimPrefix(k, "serving.")+"="+ServingValue(k, c.Metrics[k]))
			}
		}
		if n := len(c.Unavailable); n > 0 {
			kv = append(kv, fmt.Sprintf(ew.l.t("%d unavailable"), n))
		}
		ew.line("  %s\n", strings.Join(kv, ", "))
		return
	}
	var rows [][3]string
	for _, k := range ServingOrder(c.Metrics) {
		if fold && (k == metricLogSamples || k == metricLogMalformed) {
			continue
		}
		rows = append(rows, [3]string{k, ServingValue(k, c.Metrics[k]), Safe(servingSource(c, c.Sources[k]), 200)})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Unavailable)) {
		rows = append(rows, [3]string{k, "unavailable", Safe(servingSource(c, c.Unavailable[k]), 200)})
	}
	// the table's first two columns, padded by 2 (the summary cuts each
	// source to the rest of its line; --detail all shows it whole)
	var w0, w1 int
	for _, r := range rows {
		w0, w1 = max(w0, utf8.RuneCountInString(r[0])), max(w1, utf8.RuneCountInString(r[1]))
	}
	lead := strings.Repeat(" ", 2+w0+2+w1+2)
	tw := ew.table(0)
	for _, r := range rows {
		src := r[2]
		if !all {
			src = fitLine(lead, src, "", ew.width)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r[0], r[1], src)
	}
	tw.Flush()
	if n := c.Metrics[metricLogMalformed]; n > 0 {
		ew.printf("  note: %g malformed vLLM statistics line(s) skipped (lines %s)\n", n, joinInts(c.MalformedLines, ", "))
	}
}

// servingSource is a serving metric's source without the name of the one
// log file the section's header names.
func servingSource(c *results.ServingDoc, src string) string {
	if len(c.Files) == 1 {
		return strings.TrimPrefix(src, c.Files[0]+": ")
	}
	return src
}

// inServing tells whether the serving context section shows fact f: a
// serving metric with the same value (the Facts section then counts it
// instead of repeating it). A --fact given on the command line is shown.
func inServing(c *results.ServingDoc, f results.FactValue) bool {
	if c == nil || !strings.HasPrefix(f.Name, "serving.") || !strings.HasPrefix(f.Source, "vLLM: ") {
		return false
	}
	v, ok := c.Metrics[f.Name]
	if !ok {
		return false
	}
	switch x := f.Value.(type) {
	case float64:
		return x == v
	case int:
		return float64(x) == v
	}
	return false
}
