package pipeline_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// warned reports whether a rank's warnings name file and contain s.
func warned(rr *analysis.RankResult, file, s string) bool {
	for _, w := range rr.Warnings {
		if strings.HasSuffix(w.File, file) && strings.Contains(w.Message, s) {
			return true
		}
	}
	return false
}

// analyzeRanks analyzes dir and checks it holds n ranks.
func analyzeRanks(t *testing.T, dir string, n int) *analysis.Result {
	t.Helper()
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, n)
	return res
}

// sameMetrics checks that every rank of split measures what one did: the
// same metrics, the same values, the same unavailable ones.
func sameMetrics(t *testing.T, one *analysis.RankResult, split []*analysis.RankResult, label string) {
	t.Helper()
	require.NotEmpty(t, one.Metrics)
	for i, rr := range split {
		require.Equal(t, len(one.Metrics), len(rr.Metrics), "%s: rank %d measures as many metrics", label, i)
		for k, v := range one.Metrics {
			require.Contains(t, rr.Metrics, k, "%s rank %d", label, i)
			require.Equal(t, v, rr.Metrics[k], "%s rank %d: %s", label, i, k)
		}
		for k := range one.Unavailable {
			require.Contains(t, rr.Unavailable, k, "%s rank %d", label, i)
		}
	}
}

// withSecondDevice rewrites a torch_npu trace_view.json with every event
// of its NPU processes (Ascend Hardware, HCCL, Overlap Analysis, the
// counters, their flow ends) written again for device 1: torch_npu's
// packed pid ((pid << 10) | (sort index << 5) | device) plus one, as
// its pid_device_map does for a second device driven by the same process.
func withSecondDevice(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	var evs []json.RawMessage
	require.NoError(t, dec.Decode(&evs))
	type head struct {
		Ph, Name string
		Pid      json.Number
		Args     struct{ Labels string }
	}
	heads := make([]head, len(evs))
	npu := map[json.Number]bool{}
	for i, e := range evs {
		require.NoError(t, json.Unmarshal(e, &heads[i]))
		if h := heads[i]; h.Ph == "M" && h.Name == "process_labels" && h.Args.Labels == "NPU" {
			npu[h.Pid] = true
		}
	}
	require.Len(t, npu, 10, "the real capture's NPU processes")
	// the events as written (the readers' fast path knows torch_npu's
	// key order), each NPU one followed by its device-1 copy
	var out bytes.Buffer
	out.WriteString("[")
	n := 0
	for i, e := range evs {
		if i > 0 {
			out.WriteString(",\n")
		}
		out.Write(e)
		if !npu[heads[i].Pid] {
			continue
		}
		p, err := heads[i].Pid.Int64()
		require.NoError(t, err)
		require.Zero(t, p&31, "device 0's packed pid")
		re := regexp.MustCompile(`"pid":\s*` + heads[i].Pid.String() + `\b`)
		require.True(t, re.Match(e))
		out.WriteString(",\n")
		out.Write(re.ReplaceAll(e, []byte(fmt.Sprintf(`"pid": %d`, p+1))))
		n++
	}
	require.Greater(t, n, 5000)
	out.WriteString("]")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
}

// One process driving two devices writes both into one trace_view.json
// (one set of NPU processes per device) and one step_trace_time.csv (a
// Device_id row per device): npuprof makes one rank of each device, and
// each measures what the single-device capture does. The files are the
// real Level1 capture's, rewritten at run time with a second device that
// repeats the first.
func TestMultiDeviceTextSplitsIntoRanks(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	one := analyzeRanks(t, src, 1).Ranks[0]

	dir := t.TempDir()
	copyTree(t, src, dir)
	out := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT")
	withSecondDevice(t, filepath.Join(out, "trace_view.json"))
	// a second device's step row (the new header's leading Device_id)
	st := filepath.Join(out, "step_trace_time.csv")
	b, err := os.ReadFile(st)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	require.Len(t, lines, 2)
	two := "Device_id," + lines[0] + "\n0," + lines[1] + "\n1," + lines[1] + "\n"
	require.NoError(t, os.WriteFile(st, []byte(two), 0o644))

	res := analyzeRanks(t, dir, 2)
	sameMetrics(t, one, res.Ranks, "trace_view.json + step_trace_time.csv")
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Rank)
		require.Equal(t, i, rr.Device)
		require.True(t, warned(rr, "trace_view.json", "holds devices 0, 1 and names no rank per device: this rank is device "+strconv.Itoa(i)+"'s, numbered by its device id"), "%v", rr.Warnings)
	}
	// an export holds the two ranks, and reads back as them
	exp := filepath.Join(t.TempDir(), "export")
	_, err = pipeline.Export(context.Background(), dir, exp, pipeline.ExportOptions{Workers: 1})
	require.NoError(t, err)
	sameMetrics(t, one, analyzeRanks(t, exp, 2).Ranks, "its Parquet export")

	// the summaries alone (no trace, no kernel_details.csv) split too: the
	// step rows and op_statistic.csv's, rewritten with a Device_id row per
	// device
	require.NoError(t, os.Remove(filepath.Join(out, "trace_view.json")))
	require.NoError(t, os.Remove(filepath.Join(out, "kernel_details.csv")))
	opst := filepath.Join(out, "op_statistic.csv")
	b, err = os.ReadFile(opst)
	require.NoError(t, err)
	lines = strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
	var per strings.Builder
	per.WriteString("Device_id," + lines[0] + "\n")
	for _, d := range []string{"0", "1"} {
		for _, l := range lines[1:] {
			per.WriteString(d + "," + l + "\n")
		}
	}
	require.NoError(t, os.WriteFile(opst, []byte(per.String()), 0o644))
	onlySteps := t.TempDir()
	copyTree(t, src, onlySteps, "trace_view.json", "kernel_details.csv")
	one = analyzeRanks(t, onlySteps, 1).Ranks[0]
	res = analyzeRanks(t, dir, 2)
	sameMetrics(t, one, res.Ranks, "step_trace_time.csv + op_statistic.csv")
	require.Contains(t, one.Metrics, analysis.MetricKernelComputeUs)
}

// A trace_view.json of two "Ascend Hardware" processes that no label or
// packed pid places on a device cannot be split: npuprof says so.
func TestMultiDeviceUnsplittableIsNamed(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	dir := t.TempDir()
	copyTree(t, src, dir)
	tv := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	b, err := os.ReadFile(tv)
	require.NoError(t, err)
	s := strings.TrimRight(string(b), " \r\n")
	extra := `, {"ph": "M", "name": "process_name", "pid": 1000, "tid": 0, "args": {"name": "Ascend Hardware"}}` +
		`, {"ph": "X", "name": "aclnnMul_MulAiCore_Mul", "pid": 1000, "tid": 2, "ts": "1736408883750000.000", "dur": 5.0, "args": {"Task Type": "AI_CORE"}}]`
	require.NoError(t, os.WriteFile(tv, []byte(s[:len(s)-1]+extra), 0o644))
	rr := analyzeRanks(t, dir, 1).Ranks[0]
	require.True(t, warned(rr, "trace_view.json", "holds 2 device processes (\"Ascend Hardware\", or a Kineto trace's \"NPU\") whose pids and process_labels do not name a device each, so they cannot be split"), "%v", rr.Warnings)
}

// The DB export of one process driving two devices (TASK and
// COMMUNICATION_OP rows with a deviceId each, a RANK_DEVICE_MAP row per
// device, analysis.db StepTraceTime rows with a deviceId) splits into one
// rank per device, numbered by RANK_DEVICE_MAP, each measuring what the
// single-device export does. The files are the real (pristine) rank 1
// export's, rewritten at run time with a device 0 that repeats device 1.
func TestMultiDeviceDBSplitsIntoRanks(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/db/level1/rank1_ascend_pt")
	one := analyzeRanks(t, src, 1).Ranks[0]
	require.Equal(t, 1, one.Rank)

	dir := t.TempDir()
	copyTree(t, src, dir)
	out := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT")
	exec := func(path string, stmts ...string) {
		t.Helper()
		db, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		defer db.Close()
		for _, q := range stmts {
			_, err := db.Exec(q)
			require.NoError(t, err, q)
		}
	}
	exec(filepath.Join(out, "ascend_pytorch_profiler_1.db"),
		`INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, contextId, streamId, taskId, modelId)
		 SELECT startNs, endNs, 0, connectionId, globalTaskId, globalPid, taskType, contextId, streamId, taskId, modelId FROM TASK WHERE deviceId = 1`,
		`ALTER TABLE COMMUNICATION_OP ADD COLUMN deviceId INTEGER`,
		`UPDATE COMMUNICATION_OP SET deviceId = 1`,
		`INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, groupName, opId, relay, retry, dataType, algType, count, opType, deviceId)
		 SELECT opName, startNs, endNs, connectionId, groupName, opId + 1000000, relay, retry, dataType, algType, count, opType, 0 FROM COMMUNICATION_OP`,
		`INSERT INTO RANK_DEVICE_MAP (rankId, deviceId) VALUES (0, 0)`)
	exec(filepath.Join(out, "analysis.db"),
		`ALTER TABLE StepTraceTime ADD COLUMN deviceId INTEGER`,
		`UPDATE StepTraceTime SET deviceId = 1`,
		`INSERT INTO StepTraceTime SELECT step, computing, communication_not_overlapped, overlapped, communication, free, stage, bubble,
		 communication_not_overlapped_and_exclude_receive, preparing, 0 FROM StepTraceTime`)

	res := analyzeRanks(t, dir, 2)
	sameMetrics(t, one, res.Ranks, "ascend_pytorch_profiler_1.db")
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Rank)
		require.Equal(t, i, rr.Device)
		require.True(t, warned(rr, ".db", fmt.Sprintf("this rank is device %d's (rank %d by RANK_DEVICE_MAP)", i, i)), "%v", rr.Warnings)
	}

	// without COMMUNICATION_OP's deviceId, the collectives cannot be
	// split: each rank says so, and measures no collective
	exec(filepath.Join(out, "ascend_pytorch_profiler_1.db"),
		`DELETE FROM COMMUNICATION_OP WHERE deviceId = 0`,
		`ALTER TABLE COMMUNICATION_OP DROP COLUMN deviceId`)
	res = analyzeRanks(t, dir, 2)
	for _, rr := range res.Ranks {
		require.NotContains(t, rr.Metrics, analysis.MetricCommunicationUs)
		require.Contains(t, rr.Unavailable[analysis.MetricCommunicationUs], "does not say the device of")
		require.Equal(t, one.Metrics[analysis.MetricComputingUs], rr.Metrics[analysis.MetricComputingUs])
	}
}

// A torch.profiler (Kineto) trace of one process driving two NPUs holds
// one "NPU" process per device (pid = the device id): npuprof makes one
// rank of each, each measuring what the one-device trace does. tracegen's
// Kineto trace, rewritten at run time with a device 1 that repeats
// device 0.
func TestMultiDeviceKinetoSplitsIntoRanks(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 1, 2, 2
	dir, _ := testutil.GenerateLayout(t, sc, tracegen.LayoutTorchNPUChrome)
	one := analyzeRanks(t, dir, 1).Ranks[0]
	require.Equal(t, 0, one.Device)
	traces, err := filepath.Glob(filepath.Join(dir, "*.pt.trace.json"))
	require.NoError(t, err)
	require.Len(t, traces, 1)
	b, err := os.ReadFile(traces[0])
	require.NoError(t, err)
	var out []string
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"pid": 0,`) {
			out = append(out, l)
			continue
		}
		ev, comma := strings.CutSuffix(l, ",")
		out = append(out, ev+",")
		l = strings.Replace(ev, `"pid": 0,`, `"pid": 1,`, 1)
		if comma {
			l += ","
		}
		out = append(out, l)
		n++
	}
	require.Greater(t, n, 100)
	require.NoError(t, os.WriteFile(traces[0], []byte(strings.Join(out, "\n")), 0o644))
	res := analyzeRanks(t, dir, 2)
	sameMetrics(t, one, res.Ranks, "Kineto trace")
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Device)
		require.False(t, warned(rr, "", "communication_statistic says"), "%v", rr.Warnings)
	}
}

// withDeviceRows rewrites a CSV of one device (kernel_details.csv,
// op_summary_*.csv, step_trace_time.csv) as one process driving two
// writes it: a leading Device_id column (where the header has none), the
// rows of device 0 and then the same rows again for device 1, their
// start times (a 16-digit µs cell) moved later by shift µs.
func withDeviceRows(t *testing.T, path string, shift int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
	require.Greater(t, len(lines), 1, path)
	lead := !strings.HasPrefix(lines[0], "Device_id,")
	start := regexp.MustCompile(`,(\d{16})(\.\d+\s*),`)
	var w strings.Builder
	if lead {
		w.WriteString("Device_id,")
	}
	w.WriteString(lines[0] + "\n")
	for _, d := range []int{0, 1} {
		for _, l := range lines[1:] {
			if d == 1 {
				l = start.ReplaceAllStringFunc(l, func(c string) string {
					m := start.FindStringSubmatch(c)
					us, err := strconv.ParseInt(m[1], 10, 64)
					require.NoError(t, err)
					return fmt.Sprintf(",%d%s,", us+shift, m[2])
				})
			}
			if lead {
				w.WriteString(strconv.Itoa(d) + ",")
			} else {
				_, rest, ok := strings.Cut(l, ",")
				require.True(t, ok)
				l = rest
				w.WriteString(strconv.Itoa(d) + ",")
			}
			w.WriteString(l + "\n")
		}
	}
	require.NoError(t, os.WriteFile(path, []byte(w.String()), 0o644))
}

// A summaries-only rank (no trace_view.json) of one process driving two
// devices holds both devices' rows in kernel_details.csv (its Device_id
// column) and step_trace_time.csv: npuprof makes one rank of each device,
// each measuring what the single-device summaries do, its steps (Step Id)
// bounded by its own device's kernels. The real Level1 capture's files,
// rewritten at run time with a second device that repeats the first one
// second later.
func TestMultiDeviceKernelDetailsSplitsIntoRanks(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	onlySummaries := t.TempDir()
	copyTree(t, src, onlySummaries, "trace_view.json")
	one := analyzeRanks(t, onlySummaries, 1).Ranks[0]
	require.Contains(t, one.Metrics, analysis.MetricKernelComputeUs)
	require.Contains(t, one.Metrics, analysis.MetricCommunicationUs)

	dir := t.TempDir()
	copyTree(t, src, dir, "trace_view.json")
	out := filepath.Join(dir, "ASCEND_PROFILER_OUTPUT")
	withDeviceRows(t, filepath.Join(out, "kernel_details.csv"), 1_000_000)
	withDeviceRows(t, filepath.Join(out, "step_trace_time.csv"), 0)
	res := analyzeRanks(t, dir, 2)
	sameMetrics(t, one, res.Ranks, "kernel_details.csv + step_trace_time.csv")
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Rank)
		require.Equal(t, i, rr.Device)
		require.True(t, warned(rr, "kernel_details.csv", "holds devices 0, 1 and names no rank per device: this rank is device "+strconv.Itoa(i)+"'s, numbered by its device id"), "%v", rr.Warnings)
	}
	exp := filepath.Join(t.TempDir(), "export")
	_, err := pipeline.Export(context.Background(), dir, exp, pipeline.ExportOptions{Workers: 1})
	require.NoError(t, err)
	sameMetrics(t, one, analyzeRanks(t, exp, 2).Ranks, "its Parquet export")

	// a step_trace_time.csv whose rows name no device is no device's:
	// each rank says so
	b, err := os.ReadFile(filepath.Join(src, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "step_trace_time.csv"), b, 0o644))
	for i, rr := range analyzeRanks(t, dir, 2).Ranks {
		require.True(t, warned(rr, "step_trace_time.csv", fmt.Sprintf("holds no row of device %d (its rows name no device, or other devices)", i)), "%v", rr.Warnings)
	}

	// without step_trace_time.csv the steps are the Step Id's bounds:
	// each device's own
	require.NoError(t, os.Remove(filepath.Join(onlySummaries, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")))
	require.NoError(t, os.Remove(filepath.Join(out, "step_trace_time.csv")))
	one = analyzeRanks(t, onlySummaries, 1).Ranks[0]
	res = analyzeRanks(t, dir, 2)
	sameMetrics(t, one, res.Ranks, "kernel_details.csv")
	want := analysis.StepsOf(one)
	require.Len(t, want, 1)
	for i, rr := range res.Ranks {
		got := analysis.StepsOf(rr)
		require.Len(t, got, 1)
		require.Equal(t, want[0].Breakdown, got[0].Breakdown, "rank %d", i)
		require.Equal(t, want[0].Tasks, got[0].Tasks, "rank %d", i)
		require.Equal(t, want[0].DeviceStart+int64(i)*1_000_000_000, got[0].DeviceStart, "rank %d: its own device's kernels", i)
	}

	// a row of no device: the rows cannot be split, and npuprof says so
	kd := filepath.Join(out, "kernel_details.csv")
	b, err = os.ReadFile(kd)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	lines[len(lines)-2] = strings.Replace(lines[len(lines)-2], "1,", ",", 1)
	require.NoError(t, os.WriteFile(kd, []byte(strings.Join(lines, "")), 0o644))
	rr := analyzeRanks(t, dir, 1).Ranks[0]
	require.True(t, warned(rr, "kernel_details.csv", "holds the rows of 2 devices (Device_id 0, 1), but 1 row(s) name no device: npuprof cannot split the rows by device"), "%v", rr.Warnings)
}

// msprof's op_summary_*.csv of one process driving two devices (its
// Device_id column), with no msprof_*.json or task_time_*.csv, splits the
// same way: one rank per device, each measuring what the one-device
// op_summary does. tracegen's msprof text export (no real sample has an
// op_summary), rewritten at run time with a device 1 that repeats device
// 0 one second later.
func TestMultiDeviceOpSummarySplitsIntoRanks(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 1, 2, 2
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutMsprofText)
	prof := filepath.Join(dir, truth.Ranks[0].Dir)
	out := filepath.Join(prof, "mindstudio_profiler_output")
	glob := func(pattern string) []string {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(out, pattern))
		require.NoError(t, err)
		return m
	}
	for _, p := range append(glob("msprof_*.json"), glob("task_time_*.csv")...) {
		require.NoError(t, os.Remove(p))
	}
	one := analyzeRanks(t, prof, 1).Ranks[0]
	require.Equal(t, 0, one.Device)
	require.Contains(t, one.Metrics, analysis.MetricKernelComputeUs)
	require.Contains(t, one.Metrics, analysis.MetricCommunicationUs)

	sums := glob("op_summary_*.csv")
	require.Len(t, sums, 1)
	withDeviceRows(t, sums[0], 1_000_000)
	for _, p := range glob("communication_statistic_*.csv") {
		withDeviceRows(t, p, 0)
	}
	res := analyzeRanks(t, prof, 2)
	sameMetrics(t, one, res.Ranks, "op_summary_*.csv")
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Rank)
		require.Equal(t, i, rr.Device)
		require.True(t, warned(rr, ".csv", "holds devices 0, 1 and names no rank per device: this rank is device "+strconv.Itoa(i)+"'s, numbered by its device id"), "%v", rr.Warnings)
		require.False(t, warned(rr, "", "communication_statistic says"), "%v", rr.Warnings)
	}

	// msprof's slices gather every device's rows of one slice; here
	// slice 0 holds device 0's rows and slice 1 device 1's: the rank
	// splits as the one file did
	b, err := os.ReadFile(sums[0])
	require.NoError(t, err)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	half := (len(lines) - 1) / 2
	require.True(t, strings.HasPrefix(lines[half+1], "1,") && strings.HasPrefix(lines[half], "0,"))
	ts := strings.TrimPrefix(filepath.Base(sums[0]), "op_summary_")
	for k, rows := range [][]string{lines[1 : half+1], lines[half+1:]} {
		slice := filepath.Join(out, fmt.Sprintf("op_summary_slice_%d_%s", k, ts))
		require.NoError(t, os.WriteFile(slice, []byte(lines[0]+strings.Join(rows, "")+"\n"), 0o644))
	}
	require.NoError(t, os.Remove(sums[0]))
	require.Len(t, glob("op_summary_*.csv"), 2)
	res = analyzeRanks(t, prof, 2)
	sameMetrics(t, one, res.Ranks, "op_summary_slice_{0,1}_*.csv")
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Device)
	}
}
