package tracegen

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// layerSpecs are the kernels of one decode layer of s's program, and
// whether the router gate runs on the side stream.
func layerSpecs(s Scenario) (ks []*kernelSpec, sideGate bool) {
	for _, it := range buildProgram(s).layer {
		if it.k != nil {
			ks = append(ks, it.k)
		}
		sideGate = sideGate || (it.kind == itSide && it.k == kGate)
	}
	return ks, sideGate
}

// The second field report's captures per version (vllm-ascend.md): rc1
// gates through torch_npu's npu_moe_gating_top_k, rc2 through its custom
// moe_gating_top_k (§5.2, #5579); both stay on the MC2 kernels (fused MC2
// is W8A8-only, these weights are BF16: §1.2, §3.1) and run no routing
// kernel (MoeInitRouting* is the AllGather path's, §1.1); rc2 keeps the
// router gate on the side stream but drops the side-stream work the main
// stream waited on.
func TestFieldReport2Versions(t *testing.T) {
	fr := FieldReport2()
	require.Len(t, fr, 3)
	for _, s := range fr {
		rc1 := s.VLLMAscendVersion == "v0.13.0rc1"
		require.Equal(t, rc1, s.TorchNPUGating, s.Name)
		ks, side := layerSpecs(s)
		require.True(t, side, s.Name)
		var types []string
		for _, k := range ks {
			types = append(types, k.opType)
		}
		require.Contains(t, types, "MoeDistributeDispatchV2", s.Name)
		require.Contains(t, types, "MoeDistributeCombineV2", s.Name)
		for _, no := range []string{"DispatchFFNCombine", "DispatchGmmCombineDecode", "MoeInitRoutingCustom", "MoeInitRoutingV2"} {
			require.NotContains(t, types, no, s.Name)
		}
		gating := kTopK
		if rc1 {
			gating = kTopKTorchNPU
		}
		require.Contains(t, ks, gating, s.Name)
		require.Equal(t, "MoeGatingTopK", gating.opType)
		if rc1 {
			require.Equal(t, "npu::npu_moe_gating_top_k", gating.torchOp)
			require.Equal(t, int64(100_000), s.SideStreamNs)
		} else {
			require.Equal(t, "_C_ascend::moe_gating_top_k", gating.torchOp)
			require.Zero(t, s.SideStreamNs, s.Name)
		}
	}
}

// TP8 shrinks the TP-sharded matmuls against TP4 (TPRef): o_proj and
// lm_head by half, QKV from 2304 to 1280 columns per rank.
func TestShardFactor(t *testing.T) {
	fr := FieldReport2()
	tp4, tp8 := fr[1], fr[2]
	require.Equal(t, 4, tp4.tpSize())
	require.Equal(t, 8, tp8.tpSize())
	for _, k := range []shardKind{shardNone, shardCols, shardQKV} {
		require.Equal(t, 1.0, tp4.shardFactor(k))
	}
	require.Equal(t, 0.5, tp8.shardFactor(shardCols))
	require.Equal(t, 1280.0/2304, tp8.shardFactor(shardQKV))
	require.Equal(t, 1.0, tp8.shardFactor(shardNone))
	require.Equal(t, 1280, qkvCols(8)) // vllm-ascend.md §7: QKV out 1280 at TP8
	// no TPRef: every other scenario keeps its durations
	s, ok := Lookup("ep-fc1-cumsum")
	require.True(t, ok)
	require.Equal(t, 1.0, s.shardFactor(shardCols))
}

// The rc1 capture's busy-engine step is the after states' log reference,
// and their vLLM logs report the busy engine's rate scaled by their own
// step: faster steps, more tokens/s.
func TestFieldReport2LogRate(t *testing.T) {
	fr := FieldReport2()
	rc1, err := Generate(t.TempDir(), fr[0])
	require.NoError(t, err)
	ref, ok := rc1.BusyStepUs()
	require.True(t, ok)
	require.InDelta(t, a3RC1BusyStepUs, ref, 1e-6, "a3RC1BusyStepUs is out of date")
	dir := t.TempDir()
	tr, err := Generate(dir, fr[1])
	require.NoError(t, err)
	busy, ok := tr.BusyStepUs()
	require.True(t, ok)
	require.Less(t, busy, ref)
	log, err := os.ReadFile(filepath.Join(dir, VLLMLogFile))
	require.NoError(t, err)
	rate := math.Round(18*ref/busy*10) / 10
	require.Greater(t, rate, 18.0)
	require.Contains(t, string(log), fmt.Sprintf("Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: %.1f tokens/s", rate))
}
