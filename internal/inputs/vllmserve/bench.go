package vllmserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Bench is the result of `vllm bench serve` (vllm/benchmarks/serve.py;
// earlier benchmarks/benchmark_serving.py): from the printed summary
//
//	============ Serving Benchmark Result ============
//	Successful requests:                     1000
//	Maximum request concurrency:             90
//	Benchmark duration (s):                  300.12
//	Request throughput (req/s):              3.33
//	Output token throughput (tok/s):         1500.20
//	...
//	Mean TTFT (ms):                          812.44
//	P99 TTFT (ms):                           2301.05
//	Mean TPOT (ms):                          55.10
//	P99 TPOT (ms):                           70.93
//
// (printed with "{:<40} {:<10.2f}".format(label, value)), or from the JSON
// written by --save-result (keys request_throughput, output_throughput,
// total_token_throughput, mean_ttft_ms, p99_ttft_ms, mean_tpot_ms,
// p99_tpot_ms, max_concurrency, completed, duration).
type Bench struct {
	Name string
	// Metrics by serving.* name (see Metric* below).
	Metrics map[string]float64
}

// The bench labels and JSON keys, and the serving metric each becomes.
var benchFields = []struct{ label, key, metric string }{
	{"Maximum request concurrency:", "max_concurrency", "serving.concurrency"},
	{"Successful requests:", "completed", "serving.bench.requests"},
	{"Benchmark duration (s):", "duration", "serving.bench.duration_s"},
	{"Request throughput (req/s):", "request_throughput", "serving.request_tps"},
	{"Output token throughput (tok/s):", "output_throughput", "serving.output_tps"},
	{"Total Token throughput (tok/s):", "total_token_throughput", "serving.total_tps"},
	{"Mean TTFT (ms):", "mean_ttft_ms", "serving.ttft_ms"},
	{"P99 TTFT (ms):", "p99_ttft_ms", "serving.ttft_p99_ms"},
	{"Mean TPOT (ms):", "mean_tpot_ms", "serving.tpot_ms"},
	{"P99 TPOT (ms):", "p99_tpot_ms", "serving.tpot_p99_ms"},
}

// ReadBench reads a `vllm bench serve` result: JSON (first non-space byte
// '{') or the printed summary (which may sit inside other output). It is an
// error when nothing was recognised.
func ReadBench(r io.Reader, name string) (*Bench, error) {
	data, err := io.ReadAll(io.LimitReader(r, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b := &Bench{Name: name, Metrics: map[string]float64{}}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(t, &m); err != nil {
			return nil, fmt.Errorf("%s: not a vllm bench serve result JSON: %w", name, err)
		}
		for _, f := range benchFields {
			raw, ok := m[f.key]
			if !ok {
				continue
			}
			// a pointer: null (max_concurrency without --max-concurrency)
			// is no value, not 0
			var v *float64
			if json.Unmarshal(raw, &v) == nil && v != nil {
				b.Metrics[f.metric] = *v
			}
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 1<<16), maxLine)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			for _, f := range benchFields {
				rest, ok := strings.CutPrefix(line, f.label)
				if !ok {
					continue
				}
				if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
					b.Metrics[f.metric] = v
				}
			}
		}
	}
	if _, ok := b.Metrics["serving.output_tps"]; !ok {
		return nil, fmt.Errorf("%s: no vllm bench serve result (expected %q or the JSON key %q)", name, "Output token throughput (tok/s):", "output_throughput")
	}
	return b, nil
}
