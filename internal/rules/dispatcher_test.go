package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// An MC2 profile (no MoeInitRouting*) still gets the upgrade from
// v0.13.0rc1, naming rc2 with its CANN and torch_npu pair; the Cumsum rule
// is not applicable there and says it is AllGather-only.
func TestRulesOnMC2Dispatcher(t *testing.T) {
	sc := tracegen.DispatcherScenario("mc2")
	sc.Name += "-v0.13.0rc1"
	sc.CANNVersion, sc.TorchNPUVersion = "8.3.RC2", "2.8.0" // rc1's pair
	res := analyzedScenario(t, sc)
	set := builtin(t)
	rep := evaluate(t, set, res, nil, "vllm_ascend_version=v0.13.0rc1", "model=/models/Qwen3-VL-235B-A22B-Instruct")
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	d, ok := fs.Get("moe.dispatcher")
	require.True(t, ok)
	require.Equal(t, "mc2", d.Value)
	require.Equal(t, "profile: rank 0: 24 MoE layers opened by MoeDistributeDispatchV2 (mc2)", d.Source)

	f := finding(rep, "vllm-ascend-upgrade")
	require.NotNil(t, f, "%+v", status(rep, "vllm-ascend-upgrade"))
	require.Contains(t, f.Fix, "to v0.13.0rc2 or later")
	require.Contains(t, f.Fix, "with CANN 8.3.RC2 → 8.5.0, torch_npu 2.8.0 → 2.8.0.post1 and triton-ascend 3.2.0")
	// Qwen3-VL's PRs stay; no side-stream waits: #5962 has nothing to shrink
	require.Contains(t, f.Fix, "#5848 FLASHCOMM1 for Qwen3-VL (")
	require.Contains(t, f.Fix, "Not for this profile: #5332 (the allgather dispatcher; this profile runs mc2); #5962 (nothing to shrink: ")
	require.Contains(t, f.Fix, "/models/Qwen3-VL-235B-A22B-Instruct is the model the +80% was measured on")
	// per rank: 24 gating + 48 GroupedMatmul + 24 dispatch + 24 combine
	require.Contains(t, f.Fix, "This profile runs 120 MoE kernels per rank on the mc2 dispatcher.")

	o := status(rep, "moe-routing-cumsum")
	require.Equal(t, results.StatusNotApplicable, o.Status)
	require.Equal(t, "moe.dispatcher mc2 (rule applies to allgather)", o.Reason)
	require.Contains(t, set.Lookup("moe-routing-cumsum").Why, "AllGather only")

	// FLASHCOMM1's collectives are the AllGather path's; dispatch/combine
	// at batch 25 is not a small batch
	o = status(rep, "comm-ep-flashcomm")
	require.Equal(t, results.StatusNotApplicable, o.Status)
	require.Equal(t, "moe.dispatcher mc2 (rule applies to allgather)", o.Reason)
	require.Equal(t, results.StatusClear, status(rep, "moe-dispatch-combine").Status)

	// the AllGather path: the Cumsum rule still applies, dispatch/combine does not
	rep = evaluate(t, set, analyzed(t, "noep-cumsum"), nil, "vllm_ascend_version=v0.13.0rc1")
	require.Equal(t, results.StatusFired, status(rep, "moe-routing-cumsum").Status)
	o = status(rep, "moe-dispatch-combine")
	require.Equal(t, results.StatusNotApplicable, o.Status)
	require.Equal(t, "moe.dispatcher allgather (rule applies to mc2, fused_mc2, alltoall)", o.Reason)
	require.Equal(t, results.StatusFired, status(rep, "vllm-ascend-upgrade").Status)
	_, err = BuildFacts(res, nil, []string{"moe.dispatcher=deepep"})
	require.ErrorContains(t, err, "expected allgather, mc2, fused_mc2 or alltoall")
}
