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

// A header version npuprof does not know still yields the columns it can
// identify by name, and says so; a column it cannot pin down is an error
// naming the file and what was expected.
func TestKernelDetailsUnknownHeaderFallsBackToNames(t *testing.T) {
	in := "op_name,OP_TYPE,task_type,start_time (us),Task Wait Time(us),duration (us),stream_id,Input Shapes\n" +
		"aclnnMm_MatMulCommon_MatMulV2,MatMulV2,AI_CORE,100.5,0,2,7,\"\"\"3,4\"\"\"\n"
	var rows []KernelRow
	issues, err := ReadKernelDetails(strings.NewReader(in), "k.csv", func(k *KernelRow) { rows = append(rows, *k) })
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, KernelRow{StepID: -1, Device: -1, Name: "aclnnMm_MatMulCommon_MatMulV2", Type: "MatMulV2", Core: "AI_CORE",
		Start: 100500, Dur: 2000, Stream: 7, InputShapes: "3,4", Line: 2, NameID: 1, TypeID: 1, ShapesID: 1}, rows[0])
	ws := issues.Warnings("k.csv")
	require.Len(t, ws, 1)
	require.Equal(t, `unknown header version; columns identified by name: core: "task_type", dur: "duration (us)", name: "op_name", start: "start_time (us)", stream: "stream_id", type: "OP_TYPE"`, ws[0].Message)

	// loose rules: "Kernel Name", "Begin... Start (us)", "Elapsed Duration(us)"
	in = "Kernel Name,Launch Start Timestamp(us),Elapsed Duration(us)\nk,1,2\n"
	rows = nil
	issues, err = ReadKernelDetails(strings.NewReader(in), "k.csv", func(k *KernelRow) { rows = append(rows, *k) })
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, int64(1000), rows[0].Start)
	require.Contains(t, issues.Header, `start: "Launch Start Timestamp(us)"`)

	// two columns could be the start: refuse to guess
	in = "Name,Host Start(us),Device Start(us),Duration(us)\nk,1,2,3\n"
	_, err = ReadKernelDetails(strings.NewReader(in), "k.csv", func(*KernelRow) {})
	require.ErrorIs(t, err, ErrUnknownHeader)
	require.Equal(t, `k.csv: unknown header: no "Start Time(us)" column (found Name,Host Start(us),Device Start(us),Duration(us))`, err.Error())

	// a time column in another unit is never read as µs
	in = "Name,Start Time(ns),Duration(ns)\nk,1,2\n"
	_, err = ReadKernelDetails(strings.NewReader(in), "k.csv", func(*KernelRow) {})
	require.ErrorIs(t, err, ErrUnknownHeader)
}

// Rows with out-of-range numbers are skipped and counted, never wrapped.
func TestKernelDetailsOutOfRange(t *testing.T) {
	in := "Name,Start Time(us),Duration(us),Stream ID,Step Id\n" +
		"a,9223372036854000.000,1000,1,1\n" + // start+dur overflows int64 ns
		"a2,92233720368547750000,1,1,1\n" + // start itself out of range
		"b,1,1,4294967298,99999999999\n" // stream and step out of range: unknown
	var rows []KernelRow
	issues, err := ReadKernelDetails(strings.NewReader(in), "k.csv", func(k *KernelRow) { rows = append(rows, *k) })
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, int32(-1), rows[0].Stream)
	require.Equal(t, -1, rows[0].StepID)
	require.Equal(t, 2, issues.Skipped)
	require.Equal(t, []int{2, 3}, issues.Lines)
	require.Equal(t, map[string]int{"time out of range": 2}, issues.Reasons)
}

// A line longer than MaxLineBytes stops the read with an error naming the
// line; the rows before it are kept. Memory stays bounded.
func TestCSVLineLimit(t *testing.T) {
	defer func(v int) { MaxLineBytes = v }(MaxLineBytes)
	MaxLineBytes = 1 << 10
	in := "Name,Start Time(us),Duration(us)\na,1,1\nb,2," + strings.Repeat("9", 2000) + "\nc,3,1\n"
	var rows []KernelRow
	_, err := ReadKernelDetails(strings.NewReader(in), "k.csv", func(k *KernelRow) { rows = append(rows, *k) })
	require.Error(t, err)
	require.Contains(t, err.Error(), "k.csv: ")
	require.Contains(t, err.Error(), "line 3 is longer than")
	require.Len(t, rows, 1)

	_, _, err = ReadStepTraceTime(strings.NewReader("Step,Computing,Communication(Not Overlapped),Communication,Free\n"+strings.Repeat("1", 2000)), "s.csv")
	require.ErrorContains(t, err, "line 2 is longer than")
}

// NaN and Inf are not times.
func TestStepTraceTimeNonFinite(t *testing.T) {
	in := "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n" +
		"1,NaN,1,2,3,4\n2,1,Inf,2,3,4\n3,1,1,2,3,4\n4,1,1\n"
	rows, issues, err := ReadStepTraceTime(strings.NewReader(in), "s.csv")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, "3", rows[0].Step)
	require.Equal(t, 3, issues.Skipped)
	require.Equal(t, []int{2, 3, 5}, issues.Lines)
	w := issues.Warning("s.csv")
	require.Equal(t, "skipped malformed rows (non-numeric time: 2, wrong number of cells: 1)", w.Message)
	require.Equal(t, 3, w.Count)

	_, _, err = ReadStepTraceTime(strings.NewReader(""), "s.csv")
	require.EqualError(t, err, "s.csv: empty file, expected a step_trace_time.csv header")
}

// JSON readers refuse files beyond their size limit with a message that
// says so, instead of a confusing "unexpected EOF".
func TestJSONSizeLimit(t *testing.T) {
	defer func(v int64) { MaxCommunicationBytes = v }(MaxCommunicationBytes)
	MaxCommunicationBytes = 1 << 20
	in := `{"step1":{"collective":{"a@1":{"Communication Time Info":{"x":"` + strings.Repeat("y", 2<<20) + `"}}}}}`
	_, err := ReadCommunication(strings.NewReader(in), "communication.json")
	require.ErrorContains(t, err, "larger than the 1 MiB npuprof reads")

	// exactly at the limit is fine
	in = `{"step1":{}}`
	MaxCommunicationBytes = int64(len(in))
	_, err = ReadCommunication(strings.NewReader(in), "communication.json")
	require.NoError(t, err)
}

// An op whose times are out of range is skipped; the others are kept and
// the error (a warning for callers) says how many and which.
func TestCommunicationOutOfRange(t *testing.T) {
	in := `{"step1":{"collective":{"a@1":{"Communication Time Info":{"Elapse Time(ms)":1e999}},"b@1":{"Communication Time Info":{"Elapse Time(ms)":0.5}}}}}`
	ops, err := ReadCommunication(strings.NewReader(in), "communication.json")
	require.EqualError(t, err, `communication.json: skipped 1 op(s) with a time out of range (first "step1/collective/a@1")`)
	require.Len(t, ops, 1)
	require.Equal(t, "b", ops[0].Op)
	require.Equal(t, 0.5, ops[0].ElapseMs)
}

// The Device_id column (torch_npu's new header, msprof's op_summary) gives
// each row its device; a row without one, or without the column, is -1.
func TestKernelDetailsDeviceID(t *testing.T) {
	read := func(in string) []int {
		var devs []int
		_, err := ReadKernelDetails(strings.NewReader(in), "k.csv", func(k *KernelRow) { devs = append(devs, k.Device) })
		require.NoError(t, err)
		return devs
	}
	require.Equal(t, []int{3, -1, 12, -1}, read("Device_id,Name,Start Time(us),Duration(us)\n3,k,1,2\n,k,1,2\n 12 ,k,1,2\nx,k,1,2\n"))
	require.Equal(t, []int{-1}, read("Name,Start Time(us),Duration(us)\nk,1,2\n"))
}
