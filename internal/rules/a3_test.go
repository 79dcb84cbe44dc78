package rules

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/inputs/vllmserve"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// Issue 21's acceptance on tracegen's A3 scenario (the second field
// report): Qwen3-VL-235B BF16 on an Atlas 800I A3 as TP4 x DP4, EP16, one
// request, MC2, vLLM-Ascend v0.13.0rc1 read from the profile.
func TestA3FieldReport(t *testing.T) {
	res := analyzed(t, "a3-tp4dp4-rc1")
	set := builtin(t)
	rep := evaluate(t, set, res, nil)
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	d, ok := fs.Get("moe.dispatcher")
	require.True(t, ok)
	require.Equal(t, "mc2", d.Value)

	up := finding(rep, "vllm-ascend-upgrade")
	require.NotNil(t, up, "%+v", status(rep, "vllm-ascend-upgrade"))
	require.Contains(t, up.Fix, "to v0.13.0rc2 or later, with CANN 8.3.RC2 → 8.5.0, torch_npu 2.8.0 → 2.8.0.post1 and triton-ascend 3.2.0")
	// the PRs of the MC2 path, #5962 tied to the main stream's waits for the
	// side stream; #5332 (AllGather routing) left out with why
	require.Contains(t, up.Fix, "#5962 fine-grained shared-expert overlap")
	require.Contains(t, up.Fix, "would shrink event_wait.main_stream.kernel.time_us 3.25ms, ledger.stream_wait.time_us ")
	require.Contains(t, up.Fix, "needs multistream_overlap_shared_expert on")
	require.Contains(t, up.Fix, "Not for this profile: #5332 (the allgather dispatcher; this profile runs mc2).")
	// a text-only Qwen3: no Qwen3-VL PRs
	text := finding(evaluate(t, set, res, nil, "model=/models/Qwen3-235B-A22B"), "vllm-ascend-upgrade").Fix
	require.NotContains(t, text, "#5848 FLASHCOMM1 for Qwen3-VL (")
	require.NotContains(t, text, "#5827 triton mrope for Qwen3-VL (")
	require.Contains(t, text, "#5848 (qwen3-vl; the model is /models/Qwen3-235B-A22B); #5827 (qwen3-vl; the model is /models/Qwen3-235B-A22B)")

	ps := finding(rep, "parallel-strategy")
	require.NotNil(t, ps, "%+v", status(rep, "parallel-strategy"))
	require.Contains(t, ps.Fix, "(TP8xDP2 instead of TP4xDP4)")
	// the busy engine's batch, not one rank's batch times DP
	require.Equal(t, "1 request(s) in flight over DP=4: prefer more TP and less DP", ps.Title)
	require.Contains(t, ps.Fix, "(at most: the decode batches of the 1 of 4 engines that ran the sampler; their decode step is ")
	en := analysis.EnginesOf(res.Cluster)
	require.NotNil(t, en)
	require.Len(t, en.Engines, 4)
	for i, e := range en.Engines {
		require.Equal(t, []int{4 * i, 4*i + 1, 4*i + 2, 4*i + 3}, e.Ranks)
		require.Equal(t, i == 0, e.Busy, "engine %d", i)
		require.Equal(t, 1, e.DecodeBatch)
		require.True(t, e.HaveStep)
	}
	cm := res.Cluster.Metrics
	require.Equal(t, 4.0, cm[analysis.MetricEnginesCount])
	require.Equal(t, 1.0, cm[analysis.MetricEnginesBusyCount])
	require.Equal(t, 1.0, cm[analysis.MetricEnginesBusyBatch])
	require.Equal(t, []int{0, 1, 2, 3}, res.Cluster.RanksUsed[analysis.MetricEnginesBusyStepUs])
	var step float64
	for r := 0; r < 4; r++ {
		step += res.Ranks[r].Metrics[analysis.MetricDecodeStepUs] / 4
	}
	require.InDelta(t, step, cm[analysis.MetricEnginesBusyStepUs], 1e-9)

	ew := finding(rep, "event-wait-skew")
	require.NotNil(t, ew, "%+v", status(rep, "event-wait-skew"))
	// (the tp all-reduces follow when they take a fifth of the waits: at
	// 8 MoE layers a step they take less)
	require.Regexp(t, `it waits for MatMulV2 kernels on side stream 3, [0-9.]+% of its waits(, then the all-reduce collectives of group tp \(stream 4\), [0-9.]+%)?$`, ew.Title)
	require.Contains(t, ew.Fix, "What they wait for is a side stream")

	// the two saving estimates, both upper bounds (docs/rules.md,
	// "Parallel layout and version advice"): the upgrade's is the main
	// stream's waits for side-stream kernels plus the gating and routing
	// kernels whole; parallel-strategy's half the dense compute and the
	// time between steps
	meanOf := func(m string) float64 {
		s := 0.0
		for _, rr := range res.Ranks {
			v, ok := rr.Metrics[m]
			require.True(t, ok, m)
			s += v
		}
		return s / float64(len(res.Ranks))
	}
	side := meanOf(analysis.MetricEventWaitMainStreamKernelUs)
	require.Greater(t, side, 0.5*meanOf(analysis.MetricEventWaitMainStreamUs))
	require.NotNil(t, up.SavingUs, "the upgrade gives an estimate")
	require.NotNil(t, ps.SavingUs, "parallel-strategy gives an estimate")
	// the savings are the ledger entries each claims, over its steps
	steps := cm[analysis.MetricLedgerStepsCount]
	require.Equal(t, 4.0, steps)
	require.InDelta(t, (cm[analysis.MetricLedgerStreamWaitUs]+cm[analysis.MetricLedgerRoutingUs])*steps, *up.SavingUs, 0.05)
	require.Zero(t, meanOf(analysis.MetricMoERoutingUs)) // MC2: no routing kernel
	require.InDelta(t, (0.5*(cm[analysis.MetricLedgerAttentionUs]+cm[analysis.MetricLedgerComputeOtherUs])+
		cm[analysis.MetricLedgerBetweenStepsUs])*steps, *ps.SavingUs, 0.05)
	require.Positive(t, *ps.SavingUs)
	require.Equal(t, []Ref{{Rule: "event-wait-skew",
		Reason: "the upgrade's bound holds the main compute stream's waits for side-stream kernels, which event-wait-skew's saving counts too"}}, up.Supersedes)

	dc := finding(rep, "moe-dispatch-combine")
	require.NotNil(t, dc, "%+v", status(rep, "moe-dispatch-combine"))
	require.Regexp(t, `^MoE dispatch \+ combine take [0-9.]+% of the MoE kernels' time at decode batch 1: `, dc.Title)
	require.Contains(t, dc.Fix, "only for W8A8 weights")
	require.Empty(t, dc.Actions, "no fused MC2 edit without W8A8 weights")

	for _, rr := range res.Ranks {
		m := rr.Metrics
		for _, k := range []string{analysis.MetricMoEDispatchLayerUs, analysis.MetricMoECombineLayerUs, analysis.MetricMoEGMMLayerUs,
			analysis.MetricMoEDispatchShare, analysis.MetricHCCLPerLayerCount, analysis.MetricMoELayersCount, analysis.MetricEventWaitMainStreamShare} {
			require.Contains(t, m, k, "rank %d: %s: %s", rr.Rank, k, rr.Unavailable[k])
		}
		require.Equal(t, 8.0, m[analysis.MetricMoELayersCount], "rank %d", rr.Rank)
		require.Equal(t, 4.0, m[analysis.MetricDecodeStepsCount], "rank %d", rr.Rank)
		require.Equal(t, 2.0, m[analysis.MetricEventWaitMainStreamID], "rank %d", rr.Rank)
	}
	for _, k := range []string{analysis.MetricMoEDispatchWaitLayerUs, analysis.MetricMoECombineWaitLayerUs, analysis.MetricMoEDispatchWaitShare} {
		require.Contains(t, res.Cluster.Metrics, k, res.Cluster.Unavailable[k])
	}

	for _, id := range []string{"moe-routing-cumsum", "comm-ep-flashcomm", "graph-capture-sizes"} {
		require.Nil(t, finding(rep, id), "%s must not fire: %+v", id, status(rep, id))
	}

	// with the script: BF16 (no --quantization) keeps fused MC2 out
	rep = evaluate(t, set, res, nil, "model=/models/Qwen3-VL-235B-A22B-Instruct")
	dc = finding(rep, "moe-dispatch-combine")
	require.NotNil(t, dc)
	require.Contains(t, dc.Fix, "Fused MC2 (VLLM_ASCEND_ENABLE_FUSED_MC2) is W8A8-only, so it does not apply to these unquantized weights (/models/Qwen3-VL-235B-A22B-Instruct)")
	require.Contains(t, dc.Fix, "multimodal models from v0.19.1rc1 (/models/Qwen3-VL-235B-A22B-Instruct is multimodal)")
	// W8A8 on rc1: rc1 reads VLLM_ASCEND_ENABLE_FUSED_MC2 (#5156; its
	// FUSED_MC2 path runs dispatch_ffn_combine for an EP group of up to 16),
	// so the variable is the edit
	rep = evaluate(t, set, res, nil, "model=/models/Qwen3-VL-235B-A22B-W8A8", "quantization=ascend")
	dc = finding(rep, "moe-dispatch-combine")
	require.NotNil(t, dc)
	require.Contains(t, dc.Fix, "on A3 (EP up to 16, no MTP, no dynamic EPLB): export VLLM_ASCEND_ENABLE_FUSED_MC2=1 (2 for decode-only nodes).")
	require.NotContains(t, dc.Fix, "it needs v0.13.0rc1 or later")
	require.Len(t, dc.Actions, 1)
	require.Equal(t, fix.SetEnv, dc.Actions[0].Kind)
	require.Equal(t, "VLLM_ASCEND_ENABLE_FUSED_MC2", dc.Actions[0].Name)
	require.Equal(t, "1", dc.Actions[0].Value)
	// the same capture from v0.12.0rc1, which has no such variable: no edit
	sc, ok := tracegen.Lookup("a3-tp4dp4-rc1")
	require.True(t, ok)
	sc.Name, sc.VLLMAscendVersion = "a3-tp4dp4-v0.12.0rc1", "v0.12.0rc1"
	rep = evaluate(t, set, analyzedScenario(t, sc), nil, "model=/models/Qwen3-VL-235B-A22B-W8A8", "quantization=ascend")
	dc = finding(rep, "moe-dispatch-combine")
	require.NotNil(t, dc)
	require.Contains(t, dc.Fix, "it needs v0.13.0rc1 or later (VLLM_ASCEND_ENABLE_FUSED_MC2, #5156), this is v0.12.0rc1.")
	require.Empty(t, dc.Actions)
}

// The after states: rc2 clears the upgrade; TP8 x DP2 clears parallel-strategy
// (the deployment is the recommended one).
func TestA3AfterStates(t *testing.T) {
	set := builtin(t)
	rep := evaluate(t, set, analyzed(t, "a3-tp4dp4-rc2"), nil)
	require.Equal(t, results.StatusClear, status(rep, "vllm-ascend-upgrade").Status)
	require.NotNil(t, finding(rep, "parallel-strategy"))
	res := analyzed(t, "a3-tp8dp2-rc2")
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	tp, _ := fs.Get("tp")
	dp, _ := fs.Get("dp")
	require.Equal(t, 8, tp.Value)
	require.Equal(t, 2, dp.Value)
	rep = evaluate(t, set, res, nil)
	require.Equal(t, results.StatusClear, status(rep, "vllm-ascend-upgrade").Status)
	require.Equal(t, "mc2", mustFact(t, fs, "moe.dispatcher"))
	// TP8 x DP2 is the recommendation for one request in flight: no
	// TP16 x DP1 advice, although the batch is as small and DP > 1
	require.Equal(t, 1.0, res.Cluster.Metrics[analysis.MetricEnginesBusyBatch])
	ps := status(rep, "parallel-strategy")
	require.Equal(t, results.StatusClear, ps.Status, "%+v", ps)
	// the same profile with a smaller TP given would get it: the TP is
	// what keeps it clear
	rep = evaluate(t, set, withoutGroups(res), nil, "tp=4", "dp=2")
	f := finding(rep, "parallel-strategy")
	require.NotNil(t, f, "%+v", status(rep, "parallel-strategy"))
	require.Contains(t, f.Fix, "(TP8xDP1 instead of TP4xDP2)")
}

func mustFact(t *testing.T, fs *FactSet, name string) any {
	t.Helper()
	v, ok := fs.Get(name)
	require.True(t, ok, name)
	return v.Value
}

// The A3 scenario's vLLM log: the busy engine's hit rates and throughput,
// never the last line's (an idle engine's), beside the server's total.
func TestA3ServingFactsAreTheBusyEngines(t *testing.T) {
	dir, _ := testutil.Generate(t, testutil.Scenario(t, "a3-tp4dp4-rc1"))
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{TimelineSample: true})
	require.NoError(t, err)
	res.Serving, _, err = vllmserve.ForProfile(dir, vllmserve.Inputs{})
	require.NoError(t, err)
	require.NotNil(t, res.Serving)
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	get := func(name string) results.FactValue {
		v, ok := fs.Get(name)
		require.True(t, ok, name)
		return v
	}
	require.InDelta(t, 0.895, get("serving.prefix_cache_hit_rate").Value, 1e-9)
	require.InDelta(t, 0.903, get("serving.mm_cache_hit_rate").Value, 1e-9)
	require.Contains(t, get("serving.prefix_cache_hit_rate").Source, "busy engine(s) 000 (mean Running >= 0.5; idle: 001, 002, 003)")
	require.InDelta(t, 18.0, get("serving.engine.generation_tps").Value, 1e-9)
	require.InDelta(t, 21.5, get("serving.generation_tps").Value, 1e-9)
	require.Equal(t, 1.0, get("serving.busy_engines").Value)
	require.Equal(t, 4.0, get("serving.engines").Value)
	require.Equal(t, 1, get("concurrency").Value)
}
