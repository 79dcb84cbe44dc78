package msprof

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// Slices join into one JSON array: closing/opening brackets become commas,
// an empty slice and trailing whitespace are harmless.
func TestSliceReaderJoinsArrays(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a", "[{\"a\":1},\n {\"b\":[2]}]\n")
	b := write(t, dir, "b", "\ufeff [ ]  \r\n")
	c := write(t, dir, "c", "[{\"c\":\"]\"}]")
	sr := NewSliceReader([]string{a, b, c})
	data, err := io.ReadAll(sr)
	require.NoError(t, err)
	require.NoError(t, sr.Close())
	require.Equal(t, "[{\"a\":1},\n {\"b\":[2]}, ,{\"c\":\"]\"}]", string(data))
	// the trace reader skips the empty element; strict JSON without it
	var v []map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.Replace(string(data), ", ,", ",", 1)), &v))
	require.Len(t, v, 3)
	require.Equal(t, "]", v[2]["c"])
}

func TestFindPicksNewestExportAndSlicesInOrder(t *testing.T) {
	prof := t.TempDir()
	out := filepath.Join(prof, OutputDir)
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(prof, "device_3"), 0o755))
	for _, n := range []string{"msprof_slice_1_20230919172305.json", "msprof_slice_0_20230919172305.json", "msprof_slice_10_20230919172305.json",
		"op_summary_20230919172304.csv", "op_summary_20230101000000.csv", "task_time_20230919172304.csv", "README.txt"} {
		write(t, out, n, "")
	}
	f := Find(prof)
	require.True(t, f.OutputFound)
	require.Equal(t, []int{3}, f.Devices)
	base := func(ps []string) []string {
		var o []string
		for _, p := range ps {
			o = append(o, filepath.Base(p))
		}
		return o
	}
	require.Equal(t, []string{"msprof_slice_0_20230919172305.json", "msprof_slice_1_20230919172305.json", "msprof_slice_10_20230919172305.json"}, base(f.Timeline))
	require.Equal(t, []string{"op_summary_20230919172304.csv"}, base(f.OpSummary))
	require.Len(t, f.TaskTime, 1)
}

// msprof's raw analyze/communication.json is keyed by op directly.
func TestReadCommunicationRawShape(t *testing.T) {
	raw := `{"hcom_allReduce__586_0_1@17522688603477080586": {"Communication Time Info": {"Start Timestamp(us)": 1736408883704643.212, "Elapse Time(ms)": 79.5, "Transit Time(ms)": 1.5, "Wait Time(ms)": 70, "Synchronization Time(ms)": 60, "Idle Time(ms)": 8}},
	"hcom_send__822_0_1@1": {"Communication Time Info": {"Elapse Time(ms)": 1}},
	"Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 80.5}}}`
	ops, err := ReadCommunication(strings.NewReader(raw), "communication.json")
	require.NoError(t, err)
	require.Len(t, ops, 2)
	require.Equal(t, "collective", ops[0].Kind)
	require.Equal(t, "hcom_allReduce__586_0_1", ops[0].Op)
	require.Equal(t, "17522688603477080586", ops[0].GroupHash)
	require.Equal(t, int64(1736408883704643212), ops[0].Start)
	require.Equal(t, 79.5, ops[0].ElapseMs)
	require.Equal(t, "p2p", ops[1].Kind)
	_, err = ReadCommunication(strings.NewReader("[1,2]"), "x.json")
	require.ErrorContains(t, err, "x.json")
}

func TestReadTaskTime(t *testing.T) {
	csv := "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n" +
		"0,N/A,EVENT_WAIT_SQE,2,5,12.5,1736408883704643.212\t,1736408883704655.712\t\n" +
		"0,aclnnCumsum_CumsumAiCpu_Cumsum,AI_CPU,2,6,30,bad,1\n"
	var rows []TaskRow
	issues, err := ReadTaskTime(strings.NewReader(csv), "task_time.csv", func(r *TaskRow) { rows = append(rows, *r) })
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, TaskRow{Name: "", TaskType: "EVENT_WAIT_SQE", Stream: 2, TaskID: 5, Start: 1736408883704643212, Dur: 12500, Line: 2}, rows[0])
	require.Equal(t, 1, issues.Skipped)
	_, err = ReadTaskTime(strings.NewReader("a,b\n"), "t.csv", func(*TaskRow) {})
	require.ErrorContains(t, err, "kernel_name")
}

// msprof ends every time cell with a tab: a row whose cell lost its tab
// with the bytes before it is skipped; a file whose cells have no tab at
// all is read whole.
func TestReadTaskTimeTabs(t *testing.T) {
	const head = "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n"
	for _, c := range []struct {
		name, rows string
		skipped    []int
	}{
		{"tabs", "0,N/A,EVENT_WAIT_SQE,2,5,12.5,1736408883704643.212\t,1736408883704655.712\t\n" +
			"0,N/A,EVENT_WAIT_SQE,2,6,12.5,1736408883704743.212\t,1736408883704755.71\n" +
			"0,N/A,EVENT_WAIT_SQE,2,7,12.5,1736408883704843.21,1736408883704855.712\t\n" +
			"0,N/A,EVENT_WAIT_SQE,2,8,12.5,1736408883704943.212\t,1736408883704955.712\t\n", []int{3, 4}},
		{"no tabs", "0,N/A,EVENT_WAIT_SQE,2,5,12.5,1736408883704643.212,1736408883704655.712\n" +
			"0,N/A,EVENT_WAIT_SQE,2,6,12.5,1736408883704743.212,1736408883704755.712\n", nil},
	} {
		var rows []TaskRow
		issues, err := ReadTaskTime(strings.NewReader(head+c.rows), "task_time.csv", func(r *TaskRow) { rows = append(rows, *r) })
		require.NoError(t, err, c.name)
		require.Equal(t, c.skipped, issues.Lines, c.name)
		require.Len(t, rows, strings.Count(c.rows, "\n")-len(c.skipped), c.name)
	}
}

// Rows whose cells cannot be one task's are skipped and counted: a chunk
// duplicated across two rows (more cells than the header, or as many but
// a task_time(us) that is not stop - start) and a stream id that is not a
// number.
func TestReadTaskTimeSkipsJoinedRows(t *testing.T) {
	csv := "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n" +
		"0,MatMulV2_35d10dad93c2560be4d166867ff50e19,AI_CORE,2,11016,4.33,1736410582432102.898\t,1736410582432107.228\t\n" +
		"0,MatMulV2_35d10dad93c2560be4d166867ff50e19,AI_CORE,2,11016,4.33,1736410582432102.898\t,1736410582432107.22,AI_CORE,2,11016,4.33,1736410582432102.898\t,1736410582432107.228\t\n" +
		"0,N/A,EVENT_WAIT_SQE,2,11053,12.329,173641052.309\t,1736410582433322.727\t\n" +
		"0,N/A,EVENT_WAIT_SQE,4\t.},805,2.515,1736432075.519\t,1736432078.034\t\n" +
		"0,N/A,EVENT_WAIT_SQE,4,805,2.515,1736432075.519\t,1736432078.034\t\n"
	var rows []TaskRow
	issues, err := ReadTaskTime(strings.NewReader(csv), "task_time.csv", func(r *TaskRow) { rows = append(rows, *r) })
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, []int{2, 6}, []int{rows[0].Line, rows[1].Line})
	require.Equal(t, 3, issues.Skipped)
	require.Equal(t, []int{3, 4, 5}, issues.Lines)
	require.Equal(t, map[string]int{"wrong number of cells": 1, "task_time(us) is not task_stop(us) - task_start(us)": 1, "non-numeric stream_id": 1}, issues.Reasons)
}
