package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each workload matcher's string test agrees with its regexp.
func TestWorkloadMatchersAgreeWithTheirRegexps(t *testing.T) {
	names := []string{"", "_C_ascend::grouped_matmul", "x_C_ascend::", "vLLM::forward", "VLLM", "vlm", "my_vllm_op",
		"autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward", "AddmmBackward12", "Backward0x", "Backwar",
		"Optimizer.step#AdamW.step", "Optimizer.zero_grad", "xOptimizer.step", "torch/optim/adam.py", "Reducer::reduce",
		"reducer::x", "c10d::ddp.reducer", "ddpxreducer", "MEGATRON.core", "MindSpeed-LLM", "mindspee", "MatMulGrad",
		"MatMulGradV2", "MatMulGradV", "MatMulGradV2x", "GradWithSomething", "SoftmaxBackprop", "Grad", "xgrad",
		"MatMulGrad12", "@VLLM[", "{MEGATRON}", "mindspeed"}
	for _, m := range workloadMatchers {
		for _, n := range names {
			require.Equal(t, m.re().MatchString(n), m.match(n), "%s on %q", m.what, n)
		}
	}
	// a name that is not ASCII goes through the regexp: "ſ" folds to "s"
	m := &workloadMatchers[5]
	require.True(t, m.matches("mindſpeed"))
}
