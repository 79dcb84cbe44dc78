package summary

import (
	"os"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/stretchr/testify/require"
)

func readKernels(t *testing.T, path string) ([]KernelRow, RowIssues) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []KernelRow
	issues, err := ReadKernelDetails(f, path, func(k *KernelRow) { rows = append(rows, *k) })
	require.NoError(t, err)
	return rows, issues
}

// Row counts come from Python's csv module over the same files.
func TestKernelDetailsSamples(t *testing.T) {
	cases := []struct {
		rel           string
		rows, skipped int
		hccl          int
	}{
		{"xiaobingling93-pixel-Ascend-mstt/profiler/msprof_analyze/test/ut/advisor/advisor_backend/compute_advice/kernel_details.csv", 591, 0, -1},
		{"xiaobingling93-pixel-Ascend-mstt/profiler/msprof_analyze/test/ut/advisor/compute_advice/data/kernel_details.csv", 29, 0, -1},
		{"Ascend-msinsight/server/src/test/test_data/test_rank_1/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 22, 0, -1},
		// The committed excerpt has one row with 31 of 32 cells: skipped and counted.
		{"Ascend-msinsight/server/src/test/test_data/test_rank_0/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 20, 1, -1},
		{"Ascend-msinsight/test/data/pytorch/text/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 191, 0, 4},
		{"Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 191, 0, 4},
		{"Ascend-msinsight/test/data/pytorch/text/level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 191, 0, 4},
	}
	for _, c := range cases {
		t.Run(c.rel[strings.LastIndex(c.rel[:len(c.rel)-20], "/")+1:], func(t *testing.T) {
			rows, issues := readKernels(t, testutil.Sample(t, c.rel))
			require.Len(t, rows, c.rows)
			require.Equal(t, c.skipped, issues.Skipped)
			if c.hccl >= 0 {
				n := 0
				for _, r := range rows {
					if r.IsCollective() {
						n++
					}
				}
				require.Equal(t, c.hccl, n)
			}
		})
	}
}

func TestKernelDetailsLevel1Values(t *testing.T) {
	rows, _ := readKernels(t, testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
	r := rows[0]
	require.Equal(t, "trans_TransData_0", r.Name)
	require.Equal(t, "TransData", r.Type)
	require.Equal(t, "AI_VECTOR_CORE", r.Core)
	require.Equal(t, int64(1736408883704643212), r.Start) // "1736408883704643.212\t"
	require.Equal(t, int64(53741), r.Dur)
	require.Equal(t, int32(2), r.Stream)
	require.Equal(t, 50, r.StepID)
	require.Equal(t, "32,3,224,224", r.InputShapes)
}

func TestKernelDetailsMalformed(t *testing.T) {
	in := "Name,Type,Accelerator Core,Start Time(us),Duration(us)\r\n" +
		"a,A,AI_CORE,100.5\t,2\r\n" +
		"b,B,AI_CORE,N/A,2\r\n" +
		"c,C,AI_CORE,101\r\n" +
		"d,N/A,N/A,102,1.25,\r\n"
	var rows []KernelRow
	issues, err := ReadKernelDetails(strings.NewReader(in), "k.csv", func(k *KernelRow) { rows = append(rows, *k) })
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, "", rows[1].Type)
	require.Equal(t, int64(1250), rows[1].Dur)
	require.Equal(t, 2, issues.Skipped)
	require.Equal(t, []int{3, 4}, issues.Lines)
	w := issues.Warning("k.csv")
	require.NotNil(t, w)
	require.Contains(t, w.Message, "non-numeric time: 1")

	_, err = ReadKernelDetails(strings.NewReader("Foo,Bar\n1,2\n"), "k.csv", func(*KernelRow) {})
	require.ErrorIs(t, err, ErrUnknownHeader)
	require.Contains(t, err.Error(), "k.csv")
}

func TestStepTraceTimeSamples(t *testing.T) {
	for _, c := range []struct {
		rel  string
		comp float64
		prep bool
	}{
		{"Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", 8873.756000000001, true},
		{"Ascend-msinsight/server/src/test/test_data/test_rank_0/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", -1, false},
	} {
		f, err := os.Open(testutil.Sample(t, c.rel))
		require.NoError(t, err)
		rows, issues, err := ReadStepTraceTime(f, c.rel)
		f.Close()
		require.NoError(t, err)
		require.Zero(t, issues.Skipped)
		require.NotEmpty(t, rows)
		if c.comp >= 0 {
			require.Equal(t, c.comp, rows[0].Computing)
			require.Equal(t, "50", rows[0].Step)
		}
		require.Equal(t, c.prep, rows[0].HasPreparing)
	}
}

func TestProfilerInfoAndMetadata(t *testing.T) {
	f, err := os.Open(testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/profiler_info_0.json"))
	require.NoError(t, err)
	info, err := ReadProfilerInfo(f, "profiler_info_0.json")
	f.Close()
	require.NoError(t, err)
	require.Equal(t, 0, info.Rank)
	require.Equal(t, "Level1", info.ProfilerLevel)
	require.Equal(t, []string{"text"}, info.ExportType)
	require.True(t, info.HasSchedule)

	f, err = os.Open(testutil.Sample(t, "Ascend-msinsight/server/src/test/test_data/metadata/profiler_metadata.json"))
	require.NoError(t, err)
	md, err := ReadProfilerMetadata(f, "profiler_metadata.json")
	f.Close()
	require.NoError(t, err)
	require.NotEmpty(t, md.Groups)
	names := map[string]bool{}
	for _, g := range md.Groups {
		names[g.Name] = true
		require.Len(t, g.HashSuffix, 3)
	}
	require.True(t, names["tp"] || names["dp"], "groups: %v", names)
	require.Contains(t, md.Other, "distributed_args")
}

func TestCommunicationSamples(t *testing.T) {
	for _, rel := range []string{
		"Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
		"Ascend-msinsight/server/src/test/test_data/test_rank_0/ASCEND_PROFILER_OUTPUT/communication.json",
	} {
		f, err := os.Open(testutil.Sample(t, rel))
		require.NoError(t, err)
		ops, err := ReadCommunication(f, rel)
		f.Close()
		require.NoError(t, err)
		require.NotEmpty(t, ops)
		for _, o := range ops {
			require.NotEmpty(t, o.GroupHash)
			require.True(t, strings.HasPrefix(o.Op, "hcom_"), o.Op)
		}
	}
}
