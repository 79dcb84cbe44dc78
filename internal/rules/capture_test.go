package rules

import (
	"fmt"
	"os"

	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/inputs/vllmserve"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// graph-capture-sizes names one data-parallel replica's decode batch:
// capture sizes and --max-num-seqs are per engine, and the concurrency is
// the total over the replicas.

const captureFix = `--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[%d]}'`

func TestGraphCaptureSizesPerDPReplica(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "uncaptured-batch") // TP8 on 8 ranks: the profile's dp group has one rank

	// DP=1 (from the profile, and said again): the concurrency as before.
	for _, facts := range [][]string{{"concurrency=25"}, {"concurrency=25", "dp=1"}} {
		f := finding(evaluate(t, set, res, nil, append(facts, "capture_sizes=1,2,4,8,16,24")...), "graph-capture-sizes")
		require.NotNil(t, f, "%v", facts)
		require.Equal(t, "Decode batch 25 has no captured graph (capture sizes 1,2,4,8,16,24)", f.Title)
		require.Contains(t, f.Fix, fmt.Sprintf(captureFix, 25))
		require.NotContains(t, f.Fix, "DP replicas")
	}

	// dp=2 at concurrency 50: each replica decodes 25 (a profile without
	// parallel_group_info: the profile's dp would win over --fact dp)
	res = withoutGroups(res)
	rep := evaluate(t, set, res, nil, "dp=2", "concurrency=50", "capture_sizes=1,2,4,8,16,24,32,40,48,50")
	f := finding(rep, "graph-capture-sizes")
	require.NotNil(t, f, "50 is captured, but no replica runs 50: %s", status(rep, "graph-capture-sizes").Reason)
	require.Equal(t, "Decode batch 25 (50 concurrent requests over 2 DP replicas) has no captured graph (capture sizes 1,2,4,8,16,24,32,40,48,50)", f.Title)
	require.Contains(t, f.Fix, fmt.Sprintf(captureFix, 25))
	require.Contains(t, f.Fix, "Each of the 2 DP replicas (dp=2) decodes about 25 of the 50 concurrent requests")
	require.Contains(t, f.Fix, "so a 25-request decode step runs eager")
	rep = evaluate(t, set, res, nil, "dp=2", "concurrency=50", "capture_sizes=1,2,4,8,16,24,25")
	require.Equal(t, results.StatusClear, status(rep, "graph-capture-sizes").Status, "25 is captured")

	// An odd division rounds up: vLLM-Ascend pads every DP rank to the
	// largest batch, and 25 requests over 2 replicas are 13 + 12.
	f = finding(evaluate(t, set, res, nil, "dp=2", "concurrency=25", "capture_sizes=1,2,4,8,16,24"), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 13 (25 concurrent requests over 2 DP replicas) has no captured graph (capture sizes 1,2,4,8,16,24)", f.Title)
	require.Contains(t, f.Fix, fmt.Sprintf(captureFix, 13))
	rep = evaluate(t, set, res, nil, "dp=2", "concurrency=25", "capture_sizes=1,2,4,8,13,16,24")
	require.Equal(t, results.StatusClear, status(rep, "graph-capture-sizes").Status)

	// Without capture sizes the rule falls back to the eager share, and
	// still names the replica's batch.
	f = finding(evaluate(t, set, res, nil, "dp=4", "concurrency=100"), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 25 (100 concurrent requests over 4 DP replicas) has no captured graph", f.Title)

	// --max-num-seqs is per engine too: it caps the replica's batch.
	f = finding(evaluate(t, set, res, nil, "dp=2", "concurrency=50", "max_num_seqs=16", "capture_sizes=1,2,4,8"), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 16 (50 concurrent requests over 2 DP replicas) has no captured graph (capture sizes 1,2,4,8)", f.Title)
	require.Contains(t, f.Fix, fmt.Sprintf(captureFix, 16))
	require.Contains(t, f.Fix, "--max-num-seqs 16 caps a decode step at 16 requests.")
	rep = evaluate(t, set, res, nil, "dp=2", "concurrency=50", "max_num_seqs=16", "capture_sizes=1,2,4,8,16")
	require.Equal(t, results.StatusClear, status(rep, "graph-capture-sizes").Status)
}

// The data-parallel size from the deployment script (a profile without
// parallel_group_info): TP4 x DP2 with --max-num-seqs 32 captures
// vLLM-Ascend's default 1,2,4,8,16,24,32, so the 25-request batch of each
// replica at concurrency 50 has no graph; the diff adds exactly 25. With
// the profile's groups (tp 8, dp 1) the profile wins: a conflict, and the
// rules use dp 1.
func TestGraphCaptureSizesDPFromScript(t *testing.T) {
	script, err := deploy.Parse("serve.sh", "vllm serve /models/Qwen3-235B-A22B-W8A8 \\\n  --tensor-parallel-size 4 \\\n  --data-parallel-size 2 \\\n  --max-num-seqs 32\n")
	require.NoError(t, err)
	withGroups := analyzed(t, "uncaptured-batch")
	fs, err := BuildFacts(withGroups, deployment(script), []string{"concurrency=50"})
	require.NoError(t, err)
	require.Contains(t, fs.Warnings(), "conflict: dp is 1 in the profile (profile: parallel_group_info group dp has 1 ranks) but 2 in serve.sh:3 (--data-parallel-size 2); the rules use 1, what ran")
	noGroups := *withGroups
	noGroups.Ranks = nil
	for _, rr := range withGroups.Ranks {
		c := *rr
		c.Groups = nil
		noGroups.Ranks = append(noGroups.Ranks, &c)
	}
	rep := evaluate(t, builtin(t), &noGroups, script, "concurrency=50")
	f := finding(rep, "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 25 (50 concurrent requests over 2 DP replicas) has no captured graph (capture sizes 1,2,4,8,16,24,32)", f.Title)
	after, err := testutil.ApplyUnifiedDiff(script.Text(), f.Diff)
	require.NoError(t, err)
	require.Contains(t, after, fmt.Sprintf(captureFix, 25))
	require.Contains(t, after, "--data-parallel-size 2")
}

// A two-node TP8 x DP2 capture: the profile's parallel_group_info has dp
// groups of two ranks, and each rank decodes 25 of the 50 requests.
func TestGraphCaptureSizesDPFromProfile(t *testing.T) {
	sc, ok := tracegen.Lookup("uncaptured-batch")
	require.True(t, ok)
	sc.Name, sc.Ranks, sc.Layers, sc.Steps = "uncaptured-batch-dp2", 16, 4, 3
	res := analyzedScenario(t, sc)
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	dp, ok := fs.Get("dp")
	require.True(t, ok)
	require.Equal(t, 2, dp.Value)
	require.Contains(t, dp.Source, "parallel_group_info")

	f := finding(evaluate(t, builtin(t), res, nil, "concurrency=50", "capture_sizes=1,2,4,8,16,24,32,40,48,50"), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 25 (50 concurrent requests over 2 DP replicas) has no captured graph (capture sizes 1,2,4,8,16,24,32,40,48,50)", f.Title)
	require.Equal(t, 25.0, maxMetric(res, "decode.batch.observed"), "the profile's own batch agrees")
}

// The concurrency from vLLM's log is the running requests summed over its
// engines: without a dp fact, the log's engines are the replicas.
func TestGraphCaptureSizesEnginesFromLog(t *testing.T) {
	set := builtin(t)
	noDP := withoutGroups(analyzed(t, "uncaptured-batch"))

	// Two engines of 25 running requests each: concurrency 50, 25 each.
	var samples []vllmserve.Sample
	for i := 0; i < 3; i++ {
		for _, e := range []string{"000", "001"} {
			samples = append(samples, vllmserve.Sample{Engine: e, Format: vllmserve.FormatV1, GenerationTPS: 600, Running: 25, KVCacheUsage: 0.2})
		}
	}
	l := vllmserve.Log{Name: "dp2.log", Samples: samples}
	res := *noDP
	res.Serving = vllmserve.Build(&l, nil)
	fs, err := BuildFacts(&res, nil, nil)
	require.NoError(t, err)
	c, _ := fs.Get("concurrency")
	require.Equal(t, 50, c.Value)
	e, ok := fs.Get("serving.engines")
	require.True(t, ok)
	require.Equal(t, 2.0, e.Value)
	_, ok = fs.Get("dp")
	require.False(t, ok, "no parallel_group_info")

	rep := evaluate(t, set, &res, nil, "capture_sizes=1,2,4,8,16,24,32,40,48,50")
	f := finding(rep, "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 25 (50 concurrent requests over 2 DP replicas) has no captured graph (capture sizes 1,2,4,8,16,24,32,40,48,50)", f.Title)
	require.Contains(t, f.Fix, "Each of the 2 DP replicas (2 engines in vLLM's log) decodes about 25 of the 50 concurrent requests")
	require.Contains(t, f.Fix, fmt.Sprintf(captureFix, 25))
	rep = evaluate(t, set, &res, nil, "capture_sizes=1,2,4,8,16,24,25")
	require.Equal(t, results.StatusClear, status(rep, "graph-capture-sizes").Status)

	// The dp fact wins over the log's engines.
	f = finding(evaluate(t, set, &res, nil, "dp=4", "capture_sizes=1,2,4,8,16,24"), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 13 (50 concurrent requests over 4 DP replicas) has no captured graph (capture sizes 1,2,4,8,16,24)", f.Title)
	require.Contains(t, f.Fix, "(dp=4)")

	// The two-engine fixture log: median running 89.5 summed over the
	// engines, so 90 concurrent requests and 45 per engine.
	fromFile := withServing(t, noDP, "v1-parts.log")
	f = finding(evaluate(t, set, fromFile, nil), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 45 (90 concurrent requests over 2 DP replicas) has no captured graph", f.Title)
	require.Contains(t, f.Fix, fmt.Sprintf(captureFix, 45))

	// One engine: the log's concurrency as it is.
	f = finding(evaluate(t, set, withServing(t, noDP, "v1-engine.log"), nil), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 25 has no captured graph", f.Title)
}

// withoutGroups returns a copy of res whose ranks carry no
// parallel_group_info (an older torch_npu): no dp fact is inferred.
func withoutGroups(res *analysis.Result) *analysis.Result {
	r := *res
	r.Ranks = make([]*analysis.RankResult, len(res.Ranks))
	for i, rr := range res.Ranks {
		c := *rr
		c.Groups = nil
		r.Ranks[i] = &c
	}
	// the cross-rank passes again, as on a profile without groups (the
	// engines come from the tp groups)
	r.Cluster = analysis.RunCluster(r.Ranks, nil)
	return &r
}

func maxMetric(res *analysis.Result, name string) float64 {
	m := 0.0
	for _, rr := range res.Ranks {
		m = max(m, rr.Metrics[name])
	}
	return m
}

// Titles and fix texts use the observed values: the profile's 32-token
// decode batch is 32 (a multiple of 8, no word of the default list, and
// capturable with FLASHCOMM1 at TP 8); with a script capping at 25
// requests, the title names both and why they differ.
func TestGraphCaptureSizesObservedBatch(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "ep-fc1-cumsum")
	f := finding(evaluate(t, set, res, nil), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 32 has no captured graph", f.Title)
	require.NotContains(t, f.Fix, "multiple of 8")
	require.NotContains(t, f.Fix, "turn it off first")

	b, err := os.ReadFile("../../testdata/deploy/field-report-1.sh")
	require.NoError(t, err)
	script, err := deploy.Parse("field-report-1.sh", string(b))
	require.NoError(t, err)
	f = finding(evaluate(t, set, res, script), "graph-capture-sizes")
	require.NotNil(t, f)
	require.Equal(t, "Decode batch 25 (32 tokens in the profile, FLASHCOMM1 pads to a multiple of TP 8) has no captured graph (capture sizes 1,2,4,8,16,24)", f.Title)
	require.Contains(t, f.Fix, "so 25, like any N that is not 1, 2, 4 or a multiple of 8, leaves the fullest decode steps without a graph.")
	require.Contains(t, f.Fix, "The decode steps in the profile ran 32 tokens for at most 25 requests: FLASHCOMM1 pads every step to a multiple of TP 8.")
	require.Contains(t, f.Fix, "With FLASHCOMM1 on, capture sizes are cut to multiples of TP 8: turn it off first (comm-ep-flashcomm).")
}

// Before v0.11.0rc0 vLLM-Ascend sets cudagraph_mode itself (PIECEWISE or
// NONE, platform.py at v0.10.2rc1) and has no FULL_DECODE_ONLY: the graph
// edits write the capture sizes alone, host-bound-free writes no graph
// mode, and no enable_cpu_binding before v0.11.0rc1 (#3546), which the
// versions between do not read. Each fix says so.
func TestGraphAndCPUBindingEditsByVersion(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "host-bound")
	script, err := deploy.Parse("serve.sh", "vllm serve /models/Qwen3-235B-A22B-W8A8 --tensor-parallel-size 8 --enable-expert-parallel\n")
	require.NoError(t, err)
	for _, c := range []struct {
		version   string
		full, cpu bool
	}{{"", true, true}, {"v0.10.2rc1", false, false}, {"v0.11.0rc0", true, false}, {"v0.11.0rc1", true, true}, {"v0.9.1", false, true}} {
		facts := []string{"concurrency=25"}
		if c.version != "" {
			facts = append(facts, "vllm_ascend_version="+c.version)
		}
		rep := evaluate(t, set, res, script, facts...)
		g := finding(rep, "graph-capture-sizes")
		require.NotNil(t, g, c.version)
		h := finding(rep, "host-bound-free")
		require.NotNil(t, h, c.version)
		if c.full {
			require.Contains(t, g.Fix, "Capture the steady decode batch as a full decode graph:\n  "+fmt.Sprintf(captureFix, 25), c.version)
			require.Contains(t, g.Diff, `'{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25]}'`, c.version)
			require.Contains(t, h.Diff, `'{"cudagraph_mode":"FULL_DECODE_ONLY"}'`, c.version)
			require.NotContains(t, h.Fix, "sets cudagraph_mode itself", c.version)
		} else {
			require.Contains(t, g.Fix, "Capture the steady decode batch in a piecewise ACL graph ("+c.version+" sets cudagraph_mode itself; FULL_DECODE_ONLY comes with v0.11.0rc0):\n  --compilation-config '{\"cudagraph_capture_sizes\":[25]}'", c.version)
			require.NotContains(t, g.Diff, "cudagraph_mode", c.version)
			require.Contains(t, g.Diff, `'{"cudagraph_capture_sizes":[25]}'`, c.version)
			require.NotContains(t, h.Diff, "cudagraph_mode", c.version)
			require.Contains(t, h.Fix, "(one launch per decode step) — from v0.11.0rc0; "+c.version+" sets cudagraph_mode itself (PIECEWISE or NONE)", c.version)
		}
		if c.cpu {
			require.Contains(t, h.Diff, "enable_cpu_binding", c.version)
			require.NotContains(t, h.Fix, "does not read it", c.version)
		} else {
			require.NotContains(t, h.Diff, "enable_cpu_binding", c.version)
			require.Contains(t, h.Fix, "(NUMA-aware worker binding) — from v0.11.0rc1; "+c.version+" does not read it", c.version)
		}
	}
}
