package vllmconf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersionsIn(t *testing.T) {
	for _, c := range []struct {
		line string
		want []Version
	}{
		{"pip install vllm-ascend==0.13.0rc1 torch_npu==2.8.0.post1", []Version{
			{"vllm_ascend_version", "v0.13.0rc1", "vllm-ascend==0.13.0rc1"}, {"torch_npu_version", "2.8.0.post1", "torch_npu==2.8.0.post1"}}},
		{"vllm==0.13.0", []Version{{"vllm_version", "v0.13.0", "vllm==0.13.0"}}},
		{"torch-npu            2.7.1.dev20250724", []Version{{"torch_npu_version", "2.7.1.dev20250724", "pip list: torch-npu 2.7.1.dev20250724"}}},
		{"docker run quay.io/ascend/vllm-ascend:v0.13.0rc2-a3 bash", []Version{{"vllm_ascend_version", "v0.13.0rc2", "image tag"}}},
		{"FROM ascendai/cann:8.3.rc2-910b-ubuntu22.04-py3.11", []Version{{"cann_version", "8.3.RC2", "image tag"}}},
		{"./Ascend-cann-toolkit_8.5.0_linux-aarch64.run --install", []Version{{"cann_version", "8.5.0", "CANN toolkit"}}},
		{"(APIServer pid=1) INFO 01-24 10:00:00 [api_server.py:1885] vLLM API server version 0.13.0", []Version{{"vllm_version", "v0.13.0", "vLLM API server version"}}},
		{"INFO 01-24 [core.py:93] Initializing a V1 LLM engine (v0.13.0) with config: model='x'", []Version{{"vllm_version", "v0.13.0", "vLLM engine start-up line"}}},
		{"myvllm==1.0.0 vllm-ascend-extra 1.2", nil},
		{"Engine 000: Avg prompt throughput: 0.0 tokens/s", nil},
	} {
		got, _ := VersionsIn(c.line, "")
		require.Equal(t, c.want, got, c.line)
	}
	got, next := VersionsIn("Name: vllm_ascend", "")
	require.Empty(t, got)
	require.Equal(t, "vllm_ascend_version", next)
	got, next = VersionsIn("Version: 0.13.0rc2", next)
	require.Equal(t, []Version{{"vllm_ascend_version", "v0.13.0rc2", "pip show"}}, got)
	require.Empty(t, next)
}
