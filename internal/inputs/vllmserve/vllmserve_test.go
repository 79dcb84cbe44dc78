package vllmserve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func readLog(t *testing.T, name string) *Log {
	t.Helper()
	l, err := ReadLogFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return l
}

// V1 (one format string): an idle line, five good lines of which one is
// malformed (a number that does not parse) and one truncated mid-line;
// interleaved access logs, warnings and other processes' lines.
func TestV1EngineLog(t *testing.T) {
	l := readLog(t, "v1-engine.log")
	require.Equal(t, 2, l.Malformed, "the 3x.0 line and the truncated line")
	require.Len(t, l.MalformedAt, 2)
	require.Len(t, l.Samples, 5, "idle line + 4 good lines with work")
	require.Equal(t, []string{FormatV1}, l.Formats())
	s := l.Samples[1]
	require.Equal(t, "000", s.Engine)
	require.Equal(t, 2150.4, s.PromptTPS)
	require.Equal(t, 310.2, s.GenerationTPS)
	require.Equal(t, 24, s.Running)
	require.Equal(t, 1, s.Waiting)
	require.InDelta(t, 0.125, s.KVCacheUsage, 1e-12)
	require.InDelta(t, 0.45, s.PrefixHitRate, 1e-12)
	require.True(t, s.MMHitRate != s.MMHitRate, "no MM cache part: NaN")

	c := Build(l, nil)
	m := c.Metrics
	// Lines with work: 2150.4/310.2/24, 120/590.8/25, 95/602/25, 80/598/23.
	require.InDelta(t, (2150.4+120+95+80)/4, m["serving.prompt_tps"], 1e-9)
	require.InDelta(t, (310.2+590.8+602+598)/4, m["serving.generation_tps"], 1e-9)
	require.InDelta(t, m["serving.generation_tps"], m["serving.output_tps"], 0, "no bench: output = generation throughput")
	require.InDelta(t, (24+25+25+23)/4.0, m["serving.running"], 1e-9)
	require.Equal(t, 25.0, m["serving.running.max"])
	require.Equal(t, 24.5, m["serving.concurrency"], "median of 23, 24, 25, 25")
	require.InDelta(t, (1+0+2+0)/4.0, m["serving.waiting"], 1e-9)
	require.InDelta(t, (0.125+0.141+0.159+0.162)/4, m["serving.kv_cache_usage"], 1e-9)
	require.InDelta(t, 0.64, m["serving.prefix_cache_hit_rate"], 1e-12, "the last rate")
	require.Equal(t, 5.0, m["serving.log.samples"])
	require.Equal(t, 2.0, m["serving.log.malformed"])
	require.NotContains(t, m, "serving.mm_cache_hit_rate")
	require.Contains(t, c.Unavailable["serving.mm_cache_hit_rate"], "MM cache hit rate")
	require.Contains(t, c.Sources["serving.concurrency"], "median running")
}

// V1 log_parts with two engines, Preemptions, External prefix cache and
// MM cache parts, and a traceback that mentions the marker text.
func TestV1PartsTwoEngines(t *testing.T) {
	l := readLog(t, "v1-parts.log")
	require.Len(t, l.Samples, 4)
	require.Equal(t, 1, l.Malformed, "the traceback line holding the marker text")
	require.Equal(t, []string{FormatV1Parts}, l.Formats())
	e1 := l.Samples[1]
	require.Equal(t, "001", e1.Engine)
	require.InDelta(t, 0.90, e1.PrefixHitRate, 1e-12, "not the External prefix cache hit rate")
	require.InDelta(t, 0.89, e1.MMHitRate, 1e-12)

	c := Build(l, nil)
	m := c.Metrics
	require.InDelta(t, (700.0+760)/2+(720.0+740)/2, m["serving.generation_tps"], 1e-9, "summed over engines")
	require.InDelta(t, (45.0+46)/2+(44.0+44)/2, m["serving.running"], 1e-9)
	require.Equal(t, 90.0, m["serving.running.max"], "46+44 in the second interval")
	require.Equal(t, 2.0, m["serving.engines"])
	require.Equal(t, 89.5, m["serving.concurrency"], "median of 89 and 90")
	require.InDelta(t, (0.90+0.92)/2, m["serving.prefix_cache_hit_rate"], 1e-12, "last per engine, mean")
	require.InDelta(t, (0.92+0.90)/2, m["serving.mm_cache_hit_rate"], 1e-12)
}

// V0: Swapped/Pending, and the prefix cache on its own line.
func TestV0EngineLog(t *testing.T) {
	l := readLog(t, "v0-engine.log")
	require.Len(t, l.Samples, 2)
	require.Equal(t, []string{FormatV0}, l.Formats())
	require.Equal(t, 4, l.Samples[0].Waiting, "Pending")
	require.InDelta(t, 0.204, l.Samples[0].KVCacheUsage, 1e-12, "GPU, not CPU, KV cache usage")
	require.Equal(t, 1, l.Malformed, "GPU: n/a%")
	c := Build(l, nil)
	require.InDelta(t, 0.4125, c.Metrics["serving.prefix_cache_hit_rate"], 1e-12)
	require.Equal(t, 17.0, c.Metrics["serving.concurrency"])
}

func TestBenchTextAndJSON(t *testing.T) {
	for _, name := range []string{"bench-serve.txt", "bench-serve.json"} {
		t.Run(name, func(t *testing.T) {
			b, err := ReadBenchFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			m := b.Metrics
			require.Equal(t, 90.0, m["serving.concurrency"])
			require.Equal(t, 1499.4, m["serving.output_tps"])
			require.Equal(t, 812.44, m["serving.ttft_ms"])
			require.Equal(t, 2301.05, m["serving.ttft_p99_ms"])
			require.Equal(t, 55.1, m["serving.tpot_ms"])
			require.Equal(t, 70.93, m["serving.tpot_p99_ms"])
			require.InDelta(t, 3.0, m["serving.request_tps"], 0.01)
			require.Equal(t, 900.0, m["serving.bench.requests"])
		})
	}
	_, err := ReadBench(strings.NewReader("hello\n"), "x.txt")
	require.ErrorContains(t, err, "x.txt: no vllm bench serve result")
	_, err = ReadBench(strings.NewReader("{bad"), "y.json")
	require.ErrorContains(t, err, "y.json")
}

// The bench's concurrency and output throughput win over the log's.
func TestBuildBenchOverLog(t *testing.T) {
	l := readLog(t, "v1-engine.log")
	b, err := ReadBenchFile(filepath.Join("testdata", "bench-serve.json"))
	require.NoError(t, err)
	c := Build(l, b)
	require.Equal(t, 90.0, c.Metrics["serving.concurrency"])
	require.Equal(t, 1499.4, c.Metrics["serving.output_tps"])
	require.Contains(t, c.Sources["serving.output_tps"], "bench-serve.json")
	require.Len(t, c.Files, 2)
}

func TestBuildNothing(t *testing.T) {
	c := Build(&Log{Name: "empty.log"}, nil)
	require.Contains(t, c.Unavailable["serving.concurrency"], "no vLLM statistics line")
	require.NotContains(t, c.Metrics, "serving.concurrency")
}

func TestFindLog(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "v1-engine.log"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.log"), []byte("INFO nothing here\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "b", "deep.log"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "vllm.log"), data, 0o644))
	require.Equal(t, []string{filepath.Join(dir, "a", "vllm.log"), filepath.Join(dir, "server.log")}, FindLog(dir))
	require.Nil(t, FindLog(filepath.Join(dir, "server.log")))
}

// AggregatedLoggingStatLogger's prefix "%d Engines Aggregated: " (log_prefix
// in vllm/v1/metrics/loggers.py): one sample per interval for all engines.
func TestAggregatedEngines(t *testing.T) {
	log := "(APIServer pid=7) INFO 11-29 23:00:00 [loggers.py:127] 4 Engines Aggregated: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 1500.0 tokens/s, Running: 88 reqs, Waiting: 0 reqs, GPU KV cache usage: 40.0%, Prefix cache hit rate: 90.0%\n"
	l, err := ReadLog(strings.NewReader(log), "agg.log")
	require.NoError(t, err)
	require.Len(t, l.Samples, 1)
	require.Equal(t, "aggregated(4)", l.Samples[0].Engine)
	require.Equal(t, []string{FormatV1Parts}, l.Formats())
	c := Build(l, nil)
	require.Equal(t, 4.0, c.Metrics["serving.engines"])
	require.Equal(t, 88.0, c.Metrics["serving.concurrency"])
	require.Equal(t, 1500.0, c.Metrics["serving.output_tps"])
}

// Early V1: no engine prefix, first without KV cache usage and prefix hit
// rate, then with them; SpecDecoding lines interleaved.
func TestV1EarlyLog(t *testing.T) {
	l := readLog(t, "v1-early.log")
	require.Zero(t, l.Malformed)
	require.Len(t, l.Samples, 3)
	require.Equal(t, []string{FormatV1}, l.Formats())
	require.Equal(t, "", l.Samples[0].Engine)
	require.True(t, l.Samples[0].KVCacheUsage != l.Samples[0].KVCacheUsage, "no KV cache usage: NaN")
	c := Build(l, nil)
	require.InDelta(t, (40.0+96.4+88)/3, c.Metrics["serving.generation_tps"], 1e-9)
	require.InDelta(t, 0.025, c.Metrics["serving.kv_cache_usage"], 1e-12, "mean over the lines that carry it")
	require.InDelta(t, 0.125, c.Metrics["serving.prefix_cache_hit_rate"], 1e-12)
	require.Equal(t, 4.0, c.Metrics["serving.concurrency"], "median of 4, 4, 3")
	require.Equal(t, 1.0, c.Metrics["serving.engines"])
}

// Any input: no panic, every statistics line is a sample or malformed.
func FuzzReadLog(f *testing.F) {
	for _, name := range []string{"v0-engine.log", "v1-engine.log", "v1-parts.log", "v1-early.log", "bench-serve.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ReadLog(strings.NewReader(string(data)), "fuzz.log")
		require.NoError(t, err)
		require.LessOrEqual(t, len(l.Samples)+l.Malformed, l.Lines)
		c := Build(l, nil)
		for k, v := range c.Metrics {
			require.False(t, v != v, "%s is NaN", k)
		}
		_, _ = ReadBench(strings.NewReader(string(data)), "fuzz.txt")
	})
}

// vllm bench serve writes "max_concurrency": null when --max-concurrency
// was not given: that is no concurrency, not a concurrency of 0 (which
// also hid the log's running-requests fallback).
func TestBenchJSONNullIsUnmeasured(t *testing.T) {
	b, err := ReadBench(strings.NewReader(`{"max_concurrency": null, "output_throughput": 1499.4, "mean_ttft_ms": null, "completed": 10}`), "b.json")
	require.NoError(t, err)
	require.NotContains(t, b.Metrics, "serving.concurrency")
	require.NotContains(t, b.Metrics, "serving.ttft_ms")
	require.Equal(t, 10.0, b.Metrics["serving.bench.requests"])
	c := Build(readLog(t, "v1-engine.log"), b)
	require.Greater(t, c.Metrics["serving.concurrency"], 0.0)
	require.Contains(t, c.Sources["serving.concurrency"], "median running requests")
	// null output throughput: no result, said so
	_, err = ReadBench(strings.NewReader(`{"output_throughput": null}`), "n.json")
	require.ErrorContains(t, err, "n.json: no vllm bench serve result")
}

// The start-up lines name vLLM's version (the first such line), and the
// context carries it with its line.
func TestLogVersion(t *testing.T) {
	l := readLog(t, "v1-engine.log")
	require.Equal(t, map[string]string{"vllm_version": "v0.10.2"}, l.Versions)
	c := Build(l, nil)
	require.Equal(t, "v0.10.2", c.Versions["vllm_version"])
	require.Equal(t, filepath.Join("testdata", "v1-engine.log")+":3 (vLLM API server version)", c.VersionSources["vllm_version"])
	l, err := ReadLog(strings.NewReader("Name: torch-npu\nVersion: 2.8.0.post1\nINFO Initializing a V1 LLM engine (v0.13.0) with config\n"), "x.log")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"vllm_version": "v0.13.0", "torch_npu_version": "2.8.0.post1"}, l.Versions)
	require.Equal(t, "x.log:2 (pip show)", l.VersionSources["torch_npu_version"])
	require.Equal(t, "v0.6.3", Build(readLog(t, "v0-engine.log"), nil).Versions["vllm_version"])
}
