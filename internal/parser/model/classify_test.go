package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDoubleHash(t *testing.T) {
	// docs/formats.md#hccl-op-names-and-groups: verified on the S25 DB and its op names hcom_allReduce__210_*.
	require.Equal(t, uint64(17148521525495523210), DoubleHash("90.91.105.46%enp189s0f0_60000_0_1736410538306028"))
	g := NewGroup("90.91.105.46%enp189s0f0_60000_0_1736410538306028", "tp", 0, nil)
	require.Equal(t, "210", g.HashSuffix)
}

func TestHCCLNames(t *testing.T) {
	for name, want := range map[string][3]string{
		"hcom_allReduce__586_0_1":            {"allreduce", "586", ""},
		"hcom_broadcast__483_0":              {"broadcast", "483", ""},
		"hcom_allGather__275_237_1":          {"allgather", "275", ""},
		"hcom_reduceScatter__001_3_1":        {"reducescatter", "001", ""},
		"hcom_alltoallv__900_1_1":            {"alltoallv", "900", ""},
		"hcom_alltoall__900_1_1":             {"alltoall", "900", ""},
		"hcom_batchSendRecv__12_0_1":         {"batchsendrecv", "12", ""},
		"hcom_allReduce_AicpuKernel_503_X_1": {"allreduce", "503", "aicpu"},
		"hcom_send__822_0":                   {"send", "822", ""},
		// MindSpore graph-mode names: scope path, primitive, -opN
		"Default/network/AllGather-op12":        {"allgather", "", ""},
		"Gradients/Default/ReduceScatter-op3":   {"reducescatter", "", ""},
		"recompute_Default/model/AlltoAllV-op7": {"alltoallv", "", ""},
	} {
		require.Equal(t, want[0], HCCLTypeFromName(name), name)
		require.Equal(t, want[1], HCCLHashSuffix(name), name)
		require.Equal(t, want[2], HCCLVariant(name), name)
	}
}

func TestClassifyTask(t *testing.T) {
	require.Equal(t, ClassCompute, ClassifyTask("AI_CORE", "aclnnMm_MatMulCommon_MatMulV2"))
	require.Equal(t, ClassCompute, ClassifyTask("AI_CPU", "aclnnCumsum_CumsumAiCpu_Cumsum"))
	require.Equal(t, ClassEventWait, ClassifyTask("EVENT_WAIT_SQE", "EVENT_WAIT"))
	require.Equal(t, ClassEventRecord, ClassifyTask("PLACE_HOLDER_SQE", "EVENT_RECORD"))
	require.Equal(t, ClassPlaceholder, ClassifyTask("PLACE_HOLDER_SQE", "PROFILING_ENABLE"))
	require.Equal(t, ClassMemcpy, ClassifyTask("PCIE_DMA_SQE", "MEMCPY_ASYNC"))
	require.Equal(t, ClassCommSubtask, ClassifyTask("Notify Wait", "Notify Wait"))
	require.Equal(t, ClassCommSubtask, ClassifyTask("SDMA", "SDMA"))
	require.Equal(t, ClassCommKernel, ClassifyTask("AI_VECTOR_CORE", "allreduceAivKernel"))
	require.Equal(t, ClassCompute, ClassifyTask("Other", "trans_Cast_0"))
	require.Equal(t, ClassMemcpy, ClassifyTask("Other", "MEMCPY_ASYNC"))
	require.Equal(t, ClassCompute, ClassifyTask("", "Conv2D1"))
}

func TestOpTypeFromName(t *testing.T) {
	require.Equal(t, "Cumsum", OpTypeFromName("aclnnCumsum_CumsumAiCpu_Cumsum"))
	require.Equal(t, "MoeInitRoutingCustom", OpTypeFromName("aclnnMoeInitRoutingCustom_MoeInitRoutingCustom_MoeInitRoutingCustom"))
	require.Equal(t, "trans_TransData", OpTypeFromName("trans_TransData_0"))
	require.Equal(t, "FlashAttentionScore", OpTypeFromName("FlashAttentionScore"))
}

func TestFirstDim(t *testing.T) {
	for _, c := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"25,4096;128,4096,3072", 25, true},
		{`"8;8,7168"`, 8, true},
		{" 1024 ", 1024, true},
		{"", 0, false},
		{"ND", 0, false},
		{"-1,4096", 0, false},
		{"1234567890123456789,2", 0, false}, // 19 digits: more than the loop keeps exact
	} {
		n, ok := FirstDim(c.in)
		require.Equal(t, c.ok, ok, c.in)
		require.Equal(t, c.n, n, c.in)
	}
}
