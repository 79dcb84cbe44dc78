package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/inputs/vllmserve"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// hotExpertsBatch1 is a hot-expert capture at one request in flight: rank
// 5 hosts the three hottest experts of every MoE layer (MC2 dispatcher,
// expert parallel over the 8 ranks), and at batch 1 its GroupedMatmul is
// weight-bound, so the skew is in the tokens, not the time.
func hotExpertsBatch1(t *testing.T) string {
	s, ok := tracegen.Lookup("hot-rank-mc2")
	require.True(t, ok)
	s.Name, s.Batch = "hot-rank-mc2-b1", 1
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, s)
	require.NoError(t, err)
	return dir
}

func whatIfRun(t *testing.T, dir string, facts ...string) *results.Document {
	run, err := Run(context.Background(), &Request{Path: dir, Facts: facts})
	require.NoError(t, err)
	require.NoError(t, run.Failed)
	return run.Doc
}

// On a hot-expert capture at batch 1, EPLB gains nothing: the rule is
// clear and its fix replays to no change. At 90 concurrent requests the
// what-if rebatches the decode to 90, the hot rank's GroupedMatmul grows
// with its tokens, expert-imbalance fires and its fix is predicted to
// gain; the entry says "no gain at batch 1: revisit at 90".
func TestWhatIfEPLBAtTargetConcurrency(t *testing.T) {
	dir := hotExpertsBatch1(t)
	doc := whatIfRun(t, dir, "concurrency=90")
	require.NotNil(t, doc.Plan)
	for _, f := range doc.Findings {
		require.NotEqual(t, "expert-imbalance", f.Rule, "the GroupedMatmul time is balanced at batch 1")
	}
	w := doc.Plan.WhatIf
	require.NotNil(t, w, "%v", doc.Warnings)
	require.Equal(t, 90, w.Concurrency)
	require.Equal(t, "--fact concurrency=90", w.Source)
	require.Equal(t, 1, w.Replicas)
	require.Equal(t, 1, w.BatchObserved)
	require.Equal(t, 90, w.Batch)
	require.Equal(t, doc.Plan.StepTimeUs.Before, w.StepTimeUs.Before)
	require.Greater(t, w.StepTimeUs.After, w.StepTimeUs.Before, "90 tokens a step take longer than 1")
	require.Less(t, w.StepTimeUs.After, 90*w.StepTimeUs.Before)
	require.Greater(t, w.ThroughputChangePct, 0.0)
	require.GreaterOrEqual(t, w.Metrics["skew.moe.gmm.max_over_mean"], 1.25, "expert-imbalance's threshold")
	require.Equal(t, 5.0, w.Metrics["skew.moe.gmm.max_rank"], "rank 5 hosts the hot experts")
	require.Contains(t, w.Basis, "rebatched from 1 to 90 tokens")
	require.Contains(t, w.Basis, "least squares within each rank")

	var eplb *results.WhatIfFinding
	for i := range w.Findings {
		if w.Findings[i].Rule == "expert-imbalance" {
			eplb = &w.Findings[i]
		}
	}
	require.NotNil(t, eplb, "%+v", w.Findings)
	require.False(t, eplb.FiredNow)
	require.True(t, eplb.FiredAtTarget)
	require.NotNil(t, eplb.StepTimeChangePctNow)
	require.NotNil(t, eplb.StepTimeChangePctTarget)
	require.Greater(t, *eplb.StepTimeChangePctNow, -1.0, "no gain at batch 1")
	require.Less(t, *eplb.StepTimeChangePctTarget, -10.0, "a gain at 90")
	require.Contains(t, eplb.Note, "no gain at batch 1")
	require.Contains(t, eplb.Note, "revisit at 90 concurrent requests")
	require.Contains(t, eplb.Note, "the rule is clear at batch 1 and fires at 90")
}

// No what-if without a concurrency, or with one the capture already ran.
func TestWhatIfOnlyAboveTheCapturedBatch(t *testing.T) {
	dir := hotExpertsBatch1(t)
	require.Nil(t, whatIfRun(t, dir).Plan.WhatIf)
	require.Nil(t, whatIfRun(t, dir, "concurrency=1").Plan.WhatIf)
	// --max-num-seqs caps the batch one replica runs
	w := whatIfRun(t, dir, "concurrency=90", "max_num_seqs=32").Plan.WhatIf
	require.NotNil(t, w)
	require.Equal(t, 32, w.Batch)
	require.Contains(t, w.Basis, "(at most --max-num-seqs)")
}

// The concurrency can come from vLLM's log: the running requests of its
// statistics lines (summed over the engines) stand for it.
func TestWhatIfFromVLLMLog(t *testing.T) {
	dir := hotExpertsBatch1(t)
	var b strings.Builder
	for k := range 5 {
		fmt.Fprintf(&b, "(APIServer pid=4012) INFO 01-09 08:16:%02d [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "+
			"Avg generation throughput: 900.0 tokens/s, Running: 90 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.0%%, Prefix cache hit rate: 0.0%%\n", 10*(k+1))
	}
	log := filepath.Join(t.TempDir(), "vllm.log")
	require.NoError(t, os.WriteFile(log, []byte(b.String()), 0o644))
	run, err := Run(context.Background(), &Request{Path: dir, Serving: vllmserve.Inputs{Log: log}})
	require.NoError(t, err)
	w := run.Doc.Plan.WhatIf
	require.NotNil(t, w, "%v", run.Doc.Warnings)
	require.Equal(t, 90, w.Concurrency)
	require.Contains(t, w.Source, "vLLM")
	require.Equal(t, 90, w.Batch)
	// the log's prefix-cache hit rate of 0% fires prefix-cache: the
	// what-if says what it cannot tell of it
	var pc *results.WhatIfFinding
	for i := range w.Findings {
		if w.Findings[i].Rule == "prefix-cache" {
			pc = &w.Findings[i]
		}
	}
	require.NotNil(t, pc, "%+v", w.Findings)
	require.True(t, pc.FiredNow)
	require.True(t, pc.FiredAtTarget)
	require.Nil(t, pc.StepTimeChangePctNow)
	require.Nil(t, pc.StepTimeChangePctTarget)
	require.Equal(t, "judged on vLLM's cache hit rates, which the replay does not change: its gain is in prefill, which the what-if does not replay; measure the hit rate again at 90 concurrent requests", pc.Note)
}

// eplbAnyRule fires EPLB's fix on any token skew: at batch 1 it fires and
// gains nothing, so the finding itself says to revisit it.
const eplbAnyRule = `rules:
  - id: eplb-token-skew
    summary: "Expert tokens skewed across the EP group"
    title: "Expert tokens {{ fixed(metric(\"skew.moe.gmm.tokens.max_over_mean\"), 2) }}x the EP group's mean"
    severity: medium
    when: metric("skew.moe.gmm.tokens.max_over_mean") >= 1.5
    fix: "Balance the experts with EPLB."
    transforms:
      - kind: rebalance_experts
`

// A finding that gains nothing at the captured batch but would at the
// target says so itself (findings[].revisit).
func TestWhatIfFindingSaysRevisit(t *testing.T) {
	dir := hotExpertsBatch1(t)
	rf := filepath.Join(t.TempDir(), "eplb.yaml")
	require.NoError(t, os.WriteFile(rf, []byte(eplbAnyRule), 0o644))
	run, err := Run(context.Background(), &Request{Path: dir, Facts: []string{"concurrency=90"},
		Rules: RuleSelection{Files: []string{rf}, Only: []string{"eplb-token-skew"}}})
	require.NoError(t, err)
	require.NoError(t, run.Failed)
	require.Len(t, run.Doc.Findings, 1)
	f := run.Doc.Findings[0]
	require.NotNil(t, f.Predicted)
	require.Greater(t, f.Predicted.StepTimeChangePct, -1.0, "no gain at batch 1")
	require.True(t, strings.HasPrefix(f.Revisit, "no gain at batch 1 ("), f.Revisit)
	require.Contains(t, f.Revisit, "revisit at 90 concurrent requests")
	w := run.Doc.Plan.WhatIf
	require.NotNil(t, w)
	require.Len(t, w.Findings, 1)
	require.True(t, w.Findings[0].FiredNow)
	require.True(t, w.Findings[0].FiredAtTarget)
	require.Less(t, *w.Findings[0].StepTimeChangePctTarget, -10.0)
	require.Equal(t, f.Revisit, w.Findings[0].Note)
}

// On the second field report's A3 capture (TP4 x DP4, one request on the
// busy engine), 90 concurrent requests give each of the 4 DP replicas a
// decode batch of 23 (rounded up).
func TestWhatIfA3SharesOverDPReplicas(t *testing.T) {
	s, ok := tracegen.Lookup("a3-tp4dp4-rc1")
	require.True(t, ok)
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, s)
	require.NoError(t, err)
	doc := whatIfRun(t, dir, "concurrency=90")
	w := doc.Plan.WhatIf
	require.NotNil(t, w, "%v", doc.Warnings)
	require.Equal(t, 4, w.Replicas)
	require.Equal(t, 1, w.BatchObserved)
	require.Equal(t, 23, w.Batch)
	require.Greater(t, w.StepTimeUs.After, w.StepTimeUs.Before)
	require.Contains(t, w.Basis, "90 concurrent requests over 4 replica(s): 23 per replica's decode step")
}
