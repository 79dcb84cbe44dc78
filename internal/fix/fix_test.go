package fix

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCombineKeepsEachChangeOnce(t *testing.T) {
	a := Action{Kind: SetEnv, Name: "HCCL_BUFFSIZE", Value: "512", Rule: "env-hygiene"}
	b := Action{Kind: SetEnv, Name: "HCCL_BUFFSIZE", Value: "512", Rule: "comm-ep-flashcomm"}
	c := Action{Kind: UnsetEnv, Name: "ASCEND_LAUNCH_BLOCKING", Rule: "env-hygiene"}
	require.Equal(t, []Action{a, c}, Combine([]Action{a}, []Action{b, c}, nil))
	require.Nil(t, Combine())
}

func TestConflicts(t *testing.T) {
	setTP4 := Action{Kind: SetFlag, Name: "--tensor-parallel-size", Value: "4", Rule: "r1"}
	setTP8 := Action{Kind: SetFlag, Name: "--tensor-parallel-size", Value: "8", Rule: "r2"}
	rmTP := Action{Kind: RemoveFlag, Name: "--tensor-parallel-size", Rule: "r3"}
	full := Action{Kind: MergeJSON, Name: "--compilation-config", Value: `{"cudagraph_mode":"FULL_DECODE_ONLY"}`, Rule: "host-bound-free"}
	fullSizes := Action{Kind: MergeJSON, Name: "--compilation-config", Value: `{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes":[25]}`, Rule: "graph-capture-sizes"}
	piecewise := Action{Kind: MergeJSON, Name: "--compilation-config", Value: `{"cudagraph_mode":"PIECEWISE"}`, Rule: "r4"}
	setCC := Action{Kind: SetFlag, Name: "--compilation-config", Value: `{}`, Rule: "r5"}
	setEnv := Action{Kind: SetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1", Value: "1", Rule: "r6"}
	unsetEnv := Action{Kind: UnsetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1", Rule: "comm-ep-flashcomm"}
	code := Action{Kind: CodeChange, Name: "Cumsum", Value: "fuse it", Rule: "moe-routing-cumsum"}

	// the same value twice, keys of one JSON value that agree, and code
	// changes never conflict
	require.Empty(t, Conflicts([]Action{setTP4, setTP4, full, fullSizes, code, code, setEnv}))

	got := Conflicts([]Action{setTP4, setTP8, rmTP, fullSizes, piecewise, setCC, setEnv, unsetEnv, code})
	var s []string
	for _, c := range got {
		s = append(s, c.String())
	}
	require.Equal(t, []string{
		"flag --tensor-parallel-size: set_flag --tensor-parallel-size 4 (r1) and set_flag --tensor-parallel-size 8 (r2)",
		"flag --tensor-parallel-size: set_flag --tensor-parallel-size 4 (r1) and remove_flag --tensor-parallel-size (r3)",
		"flag --tensor-parallel-size: set_flag --tensor-parallel-size 8 (r2) and remove_flag --tensor-parallel-size (r3)",
		`--compilation-config key "cudagraph_mode": merge_json --compilation-config {"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes":[25]} (graph-capture-sizes) and merge_json --compilation-config {"cudagraph_mode":"PIECEWISE"} (r4)`,
		`--compilation-config key "cudagraph_capture_sizes": merge_json --compilation-config {"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes":[25]} (graph-capture-sizes) and set_flag --compilation-config {} (r5)`,
		`--compilation-config key "cudagraph_mode": merge_json --compilation-config {"cudagraph_mode":"PIECEWISE"} (r4) and set_flag --compilation-config {} (r5)`,
		"env VLLM_ASCEND_ENABLE_FLASHCOMM1: set_env VLLM_ASCEND_ENABLE_FLASHCOMM1 1 (r6) and unset_env VLLM_ASCEND_ENABLE_FLASHCOMM1 (comm-ep-flashcomm)",
	}, s)
}

func TestKinds(t *testing.T) {
	require.Equal(t, []Kind{RemoveFlag, SetFlag, MergeJSON, UnsetEnv, SetEnv, CodeChange}, Kinds)
	require.True(t, Action{Kind: SetEnv}.EditsScript())
	require.False(t, Action{Kind: CodeChange}.EditsScript())
	require.Equal(t, "unset_env X", Action{Kind: UnsetEnv, Name: "X"}.String())
	require.Equal(t, "code_change Cumsum fuse it", Action{Kind: CodeChange, Name: "Cumsum", Value: "fuse it"}.String())
}
