package rules

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/inputs/vllmserve"
	"github.com/npuprof/npuprof/internal/results"
)

// withServing returns a copy of res with the serving context of a vLLM log
// fixture (internal/inputs/vllmserve/testdata).
func withServing(t *testing.T, res *analysis.Result, logName string) *analysis.Result {
	t.Helper()
	l, err := vllmserve.ReadLogFile(filepath.Join("..", "inputs", "vllmserve", "testdata", logName))
	require.NoError(t, err)
	r := *res
	r.Serving = vllmserve.Build(l, nil)
	return &r
}

func TestServingFacts(t *testing.T) {
	res := withServing(t, analyzed(t, "clean"), "v1-parts.log")
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	v, ok := fs.Get("serving.mm_cache_hit_rate")
	require.True(t, ok)
	require.InDelta(t, 0.91, v.Value, 1e-12)
	require.Contains(t, v.Source, "last MM cache hit rate")
	c, ok := fs.Get("concurrency")
	require.True(t, ok)
	require.Equal(t, 90, c.Value, "89.5 running requests, rounded")
	require.Contains(t, c.Source, "median running requests")
	// --fact wins over the log.
	fs, err = BuildFacts(res, nil, []string{"concurrency=25", "serving.prefix_cache_hit_rate=0.5"})
	require.NoError(t, err)
	c, _ = fs.Get("concurrency")
	require.Equal(t, 25, c.Value)
	p, _ := fs.Get("serving.prefix_cache_hit_rate")
	require.Equal(t, 0.5, p.Value)
}

func TestPrefixCacheRule(t *testing.T) {
	set := builtin(t)
	base := analyzed(t, "clean")
	// No log: nothing known, the rule is clear.
	require.Equal(t, results.StatusClear, status(evaluate(t, set, base, nil), "prefix-cache").Status)
	// 90%/92% hit rates: clear.
	require.Equal(t, results.StatusClear, status(evaluate(t, set, withServing(t, base, "v1-parts.log"), nil), "prefix-cache").Status)
	// A V0 log with 41.25%, the threshold above it: fires, with the rate.
	rep := evaluate(t, set, withServing(t, base, "v0-engine.log"), nil, "serving.prefix_cache_hit_rate=0.12")
	f := finding(rep, "prefix-cache")
	require.NotNil(t, f)
	require.Contains(t, f.Title, "Prefix-cache hit rate 12.0%")
	require.Contains(t, f.Fix, "dataset-name random")
	// Turned off in the deployment script: fires, and the diff drops the flag.
	script, err := deploy.Parse("run.sh", "vllm serve m --tensor-parallel-size 8 --no-enable-prefix-caching\n")
	require.NoError(t, err)
	rep = evaluate(t, set, base, script)
	f = finding(rep, "prefix-cache")
	require.NotNil(t, f)
	require.Equal(t, "Prefix caching is off", f.Title)
	require.Contains(t, f.Diff, "-vllm serve m --tensor-parallel-size 8 --no-enable-prefix-caching")
}

func TestMMCacheRule(t *testing.T) {
	set := builtin(t)
	base := analyzed(t, "clean")
	// Without a log the rate is unknown: not evaluated, saying where it comes from.
	o := status(evaluate(t, set, base, nil), "mm-cache")
	require.Equal(t, results.StatusNotEvaluated, o.Status)
	require.Contains(t, o.Reason, "serving.mm_cache_hit_rate")
	// 91%: clear.
	require.Equal(t, results.StatusClear, status(evaluate(t, set, withServing(t, base, "v1-parts.log"), nil), "mm-cache").Status)
	rep := evaluate(t, set, withServing(t, base, "v1-parts.log"), nil, "serving.mm_cache_hit_rate=0.2")
	f := finding(rep, "mm-cache")
	require.NotNil(t, f)
	require.Contains(t, f.Title, "20.0%")
	require.Contains(t, f.Fix, "--mm-processor-cache-gb 16")
}

// The running requests in vLLM's log stand for the concurrency:
// graph-capture-sizes names them as the batch to capture, parallel-strategy
// reads them as the requests in flight.
func TestConcurrencyFromLogFeedsRules(t *testing.T) {
	set := builtin(t)
	res := withServing(t, analyzed(t, "uncaptured-batch"), "v1-engine.log")
	rep := evaluate(t, set, res, nil)
	f := finding(rep, "graph-capture-sizes")
	require.NotNil(t, f)
	require.Contains(t, f.Title, "Decode batch 25 ") // median running 24.5, rounded
	require.Contains(t, f.Fix, `"cudagraph_capture_sizes":[25]`)

	single := *res
	l := vllmserve.Log{Name: "one.log", Samples: []vllmserve.Sample{{Engine: "000", Format: vllmserve.FormatV1, GenerationTPS: 18, Running: 1,
		KVCacheUsage: 0.01, PrefixHitRate: 0, MMHitRate: 0}}}
	single.Serving = vllmserve.Build(&l, nil)
	rep = evaluate(t, set, withoutGroups(&single), nil, "dp=4", "tp=4")
	p := finding(rep, "parallel-strategy")
	require.NotNil(t, p)
	require.Contains(t, p.Title, "1 request(s) in flight over DP=4")
}
