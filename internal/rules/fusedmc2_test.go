package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// Fused MC2 in the form the running vLLM-Ascend reads: the environment
// variable up to v0.20.1, the --additional-config key enable_fused_mc2 from
// v0.20.2rc1 (#9064), the key with a note giving the variable when the
// version is unknown.
func TestFusedMC2EditByVersion(t *testing.T) {
	// the A3 capture after the upgrade, its version left out of the profile
	// so that --fact gives it
	sc, ok := tracegen.Lookup("a3-tp4dp4-rc2")
	require.True(t, ok)
	sc.Name += "-noversion"
	sc.VLLMAscendVersion = ""
	res := analyzedScenario(t, sc)
	script, err := deploy.Parse("serve.sh", "vllm serve /models/Qwen3-235B-A22B-W8A8 --quantization ascend --tensor-parallel-size 4 --data-parallel-size 4 --enable-expert-parallel --additional-config '{\"enable_cpu_binding\":true}'\n")
	require.NoError(t, err)
	for _, c := range []struct {
		facts     []string
		diff, not string
		fix       string
	}{
		{[]string{"vllm_ascend_version=v0.13.0rc2"}, "+export VLLM_ASCEND_ENABLE_FUSED_MC2=1", "enable_fused_mc2", "export VLLM_ASCEND_ENABLE_FUSED_MC2=1 (2 for decode-only nodes)"},
		{[]string{"vllm_ascend_version=v0.20.2rc1"}, `"enable_fused_mc2":1`, "export VLLM_ASCEND_ENABLE_FUSED_MC2", `--additional-config '{"enable_fused_mc2":1}' (2 for decode-only nodes; v0.20.2rc1 reads the key, #9064)`},
		{nil, `"enable_fused_mc2":1`, "export VLLM_ASCEND_ENABLE_FUSED_MC2", "the vLLM-Ascend version is unknown: the form v0.20.2rc1 and later read (#9064); earlier ones read export VLLM_ASCEND_ENABLE_FUSED_MC2=1"},
	} {
		f := finding(evaluate(t, builtin(t), res, script, c.facts...), "moe-dispatch-combine")
		require.NotNil(t, f, "%v %+v", c.facts, status(evaluate(t, builtin(t), res, script, c.facts...), "moe-dispatch-combine"))
		require.Contains(t, f.Diff, c.diff, "%v", c.facts)
		require.NotContains(t, f.Diff, c.not, "%v", c.facts)
		require.Contains(t, f.Fix, c.fix, "%v", c.facts)
	}
}
