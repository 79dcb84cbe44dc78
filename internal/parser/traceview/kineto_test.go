package traceview

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// A Kineto trace in the layout of a real one (torch.profiler with torch_npu,
// *.pt.trace.json): the header's base time, an NPU process whose pid is
// the device, kernels typed in args "type" on "NPU stream" threads, a
// collective kernel, a host process named after the program and labelled
// CPU, ProfilerStep#N as a user_annotation, ac2g flows, a "Spans" process
// without a name, instants with empty pids.
func TestReadKineto(t *testing.T) {
	trace := `{
  "schemaVersion": 1,
  "deviceProperties": [],
  "distributedInfo": {"backend": "hccl", "rank": 3, "world_size": 4},
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1782967788000000000,
  "traceEvents": [
  {"ph": "M", "name": "process_name", "ts": 4307764768892.280, "pid": 5, "tid": 0, "args": {"name": "NPU"}},
  {"ph": "M", "name": "process_labels", "ts": 4307764768892.280, "pid": 5, "tid": 0, "args": {"labels": "Ascend NPU"}},
  {"ph": "M", "name": "process_name", "ts": 4307764768892.280, "pid": 3466812, "tid": 0, "args": {"name": "python3"}},
  {"ph": "M", "name": "process_labels", "ts": 4307764768892.280, "pid": 3466812, "tid": 0, "args": {"labels": "CPU"}},
  {"ph": "M", "name": "thread_name", "ts": 4307764768892.280, "pid": 5, "tid": 47, "args": {"name": "NPU stream 47"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 3466812, "tid": 3466812, "ts": 4307764842000.000, "dur": 2000.5},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 3466812, "tid": 3466812, "ts": 4307764842600.000, "dur": 40.000, "args": {"External id": 531, "Input Dims": [[32, 10], [10, 1024]]}},
  {"ph": "X", "cat": "privateuse1_runtime", "name": "MatMulV2_ND_ND_FP32_false_true_all_66243", "pid": 3466812, "tid": 3466812, "ts": 4307764842639.312, "dur": 0.000},
  {"ph": "s", "id": 483, "pid": 3466812, "tid": 3466812, "ts": 4307764842639.312, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "MatMulV2_ND_ND_FP32_false_true_all_66243", "pid": 5, "tid": 47, "ts": 4307764842639.312, "dur": 8.840, "args": {"streamId": 47, "type": "KERNEL_AICORE"}},
  {"ph": "f", "id": 483, "pid": 5, "tid": 47, "ts": 4307764842639.312, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "kernel", "name": "NLLLoss_aadf7331de6cbc0134917036f7feef64_high_performance__kernel0", "pid": 5, "tid": 47, "ts": 4307764843340.006, "dur": 14.000, "args": {"streamId": 47, "type": "KERNEL_MIX_AIV"}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 5, "tid": 47, "ts": 4307764842000.000, "dur": 2000.5},
  {"ph": "X", "cat": "kernel", "name": "hcom_allReduce__586_0_1", "pid": 5, "tid": 48, "ts": 4307764843400.000, "dur": 100.250, "args": {"streamId": 48, "type": "KERNEL_AICPU"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 5, "tid": 47, "ts": 4307764843600.100, "dur": 3.000, "args": {"streamId": 47}},
  {"ph": "X", "cat": "python_function", "name": "torch/optim/adam.py(902): adam", "pid": 3466812, "tid": 3466812, "ts": 4307764845050.428, "dur": 1902.520, "args": {"Python id": 1452}},
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 4307764768622.560, "dur": 78802.080, "args": {"Op count": 0}},
  {"ph": "M", "name": "process_sort_index", "ts": 4307764768622.560, "pid": "Spans", "tid": 0, "args": {"sort_index": 536870912}},
  {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 4307764854714.210}
  ],"traceName": "profiler_output/tensorboard/msprof_3466812.1787275553016492530.pt.trace.json" }
`
	r := model.NewRank("x")
	st, err := Read(strings.NewReader(trace), "w.pt.trace.json", r)
	require.NoError(t, err)
	require.False(t, st.Truncated)
	require.Empty(t, r.Warnings)
	const base = 1782967788000000000
	require.Equal(t, 5, r.Device)
	require.Equal(t, 3, r.Rank)
	require.Equal(t, []model.Step{{ID: 7, Start: base + 4307764842000000, End: base + 4307764844000500}}, r.Steps)
	require.Equal(t, []model.FrameworkOp{{Start: base + 4307764842600000, Dur: 40000, Name: r.Intern("aten::mm"), Thread: r.Threads.ID(3466812)}}, r.FrameworkOps)
	require.Len(t, r.Tasks, 3)
	mm := r.Tasks[0]
	require.Equal(t, int64(base+4307764842639312), mm.Start)
	require.Equal(t, int64(8840), r.Dur(&mm))
	require.Equal(t, "AI_CORE", r.Str(r.TaskType(&mm)), "KERNEL_AICORE")
	require.Equal(t, int32(47), r.Stream(&mm))
	require.Equal(t, model.ClassCompute, r.Class(&mm))
	require.Equal(t, model.ClassCompute, r.Class(&r.Tasks[1]), "KERNEL_MIX_AIV")
	require.Equal(t, model.ClassMemcpy, r.Class(&r.Tasks[2]))
	require.Len(t, r.HCCL, 1)
	require.Equal(t, "allreduce", r.Str(r.HCCL[0].Type))
	require.Equal(t, int64(base+4307764843400000), r.HCCL[0].Start)
	require.Equal(t, int64(100250), r.HCCL[0].Dur)
	require.True(t, r.Have.Timeline)
	require.True(t, r.Have.HCCL)
	require.Contains(t, r.Have.SyncNote, "Kineto trace")
	require.Empty(t, r.Links, "ac2g flows join the runtime launch, not the op")
}

// Kineto writes one key per line, a number's comma on the next line and
// metadata first; the trace reads the same whatever the layout.
func TestReadKinetoPretty(t *testing.T) {
	ev := func(ph, cat, name string, pid, tid int, ts, dur, args string) string {
		s := "  {\n    \"ph\": \"" + ph + "\",\n"
		if cat != "" {
			s += "    \"cat\": \"" + cat + "\",\n"
		}
		s += "    \"name\": \"" + name + "\",\n    \"pid\": " + strconv.Itoa(pid) + ",\n    \"tid\": " + strconv.Itoa(tid) + ",\n    \"ts\": " + ts
		if dur != "" {
			s += ",\n    \"dur\": " + dur + "\n"
		}
		if args != "" {
			s += "    ,\n    \"args\": {\n      " + args + "\n    }\n"
		} else {
			s += "\n"
		}
		return s + "  }"
	}
	evs := []string{
		ev("M", "", "process_name", 0, 0, "4307764768892.280", "", `"name": "NPU"`),
		ev("M", "", "process_labels", 0, 0, "4307764768892.280", "", `"labels": "Ascend NPU"`),
		ev("M", "", "process_name", 3466812, 0, "4307764768892.280", "", `"name": "python"`),
		ev("M", "", "process_labels", 3466812, 0, "4307764768892.280", "", `"labels": "CPU"`),
		ev("M", "", "thread_name", 0, 47, "4307764768892.280", "", `"name": "NPU stream 47"`),
		ev("X", "cpu_op", "aten::mm", 3466812, 3467863, "4307764833561.168", "34.000",
			`"External id": 531,"Record function id": 71, "Concrete Inputs": ["", ""], "Input type": ["float", "float"], "Input Strides": [[10, 1], [1024, 1]], "Input Dims": [[32, 10], [10, 1024]], "Ev Idx": 18`),
		ev("X", "privateuse1_runtime", "MatMulV2_ND_ND_FP32_FP32_false_false_all_65537", 3466812, 3467863, "4307764843926.598", "0.000", ""),
		ev("X", "kernel", "MatMulV2_ND_ND_FP32_FP32_false_false_all_65537", 0, 47, "4307764843926.598", "12.320", `"streamId": 47, "type": "KERNEL_AICORE"`),
		ev("X", "kernel", "ReduceSum_7a09f5b7af4126487a7f726a9aac7548_high_performance_82100900", 0, 47, "4307764843998.339", "6.660", `"streamId": 47, "type": "KERNEL_MIX_AIV"`),
	}
	trace := " {\n    \"schemaVersion\": 1,\n    \"deviceProperties\": [],\n\n      \"trace_id\": \"76CA06DF5FC64BFD935F8135F637B4A1\",\n" +
		"    \"displayTimeUnit\": \"ms\",\n    \"baseTimeNanoseconds\": 1782967788000000000,\n    \"traceEvents\": [\n\n" +
		strings.Join(evs, ",\n") + "\n  ],\"traceName\": \"profiler_output/tensorboard/w.pt.trace.json\" }\n"
	r := model.NewRank("x")
	_, err := Read(strings.NewReader(trace), "w.pt.trace.json", r)
	require.NoError(t, err)
	require.Empty(t, r.Warnings)
	const base = 1782967788000000000
	require.Equal(t, 0, r.Device)
	require.Equal(t, -1, r.Rank, "no distributedInfo")
	require.Equal(t, []model.FrameworkOp{{Start: base + 4307764833561168, Dur: 34000, Name: r.Intern("aten::mm"), Thread: r.Threads.ID(3467863)}}, r.FrameworkOps)
	require.Len(t, r.Tasks, 2)
	require.Equal(t, int64(base+4307764843926598), r.Tasks[0].Start)
	require.Equal(t, int64(12320), r.Dur(&r.Tasks[0]))
	require.Equal(t, "AI_CORE", r.Str(r.TaskType(&r.Tasks[0])))
	require.Equal(t, "MIX_AIV", r.Str(r.TaskType(&r.Tasks[1])))
	require.Equal(t, int32(47), r.Stream(&r.Tasks[1]))
}

// A Kineto trace read in parts gives what one sequential read gives: the
// header's base time and the processes' kinds reach every part.
func TestReadKinetoSplit(t *testing.T) {
	s := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	s.Ranks, s.Layers, s.Steps = 2, 3, 4
	dir, truth := testutil.GenerateLayout(t, s, tracegen.LayoutTorchNPUChrome)
	data, err := os.ReadFile(filepath.Join(dir, truth.Ranks[0].Dir))
	require.NoError(t, err)
	for _, parts := range []int{2, 3, 5} {
		checkSplit(t, data, parts)
	}
	r := model.NewRank("r")
	_, err = Read(bytes.NewReader(data), "t.pt.trace.json", r)
	require.NoError(t, err)
	require.NotEmpty(t, r.Tasks)
	require.NotEmpty(t, r.HCCL)
	require.Len(t, r.Steps, 4)
}

// kinetoCPUOnly is a Kineto trace in the layout of a real CPU-only one
// (HolisticTraceAnalysis tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz:
// empty deviceProperties, distributedInfo with pg_config after the rank,
// no device process, a host process labelled CPU whatever its name, a
// ProfilerStep, gloo collectives as user_annotation on other threads).
const kinetoCPUOnly = `{
  "schemaVersion": 1,
  "deviceProperties": [
  ],
  "distributedInfo": {"backend": "gloo", "rank": 34, "world_size": 300, "pg_count": 10, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo,cuda:gloo", "pg_size": 300, "ranks": [0, 1, 2]}], "pg_version": 0},
  "username": "x",
  "traceName": "rank-34.pt.trace.json",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1719853884000000000,
  "traceEvents": [
  {
    "ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 1074, "tid": 3553,
    "ts": 1212075548353.304, "dur": 173209.713,
    "args": {
      "External id": 3, "Record function id": 0, "Ev Idx": 0
    }
  },
  {
    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#551", "pid": 1074, "tid": 1074,
    "ts": 1212075529876.817, "dur": 210109.162,
    "args": {
      "External id": 1, "Record function id": 0, "Ev Idx": 5
    }
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1074, "tid": 1074,
    "ts": 1212076812889.310, "dur": 2.503,
    "args": {
      "External id": 7, "Record function id": 0, "Ev Idx": 6
    }
  },
  {
    "name": "process_name", "ph": "M", "ts": 1212075525586.016, "pid": 1074, "tid": 0,
    "args": {
      "name": "pyper:trainer:8:2"
    }
  },
  {
    "name": "process_labels", "ph": "M", "ts": 1212075525586.016, "pid": 1074, "tid": 0,
    "args": {
      "labels": "CPU"
    }
  },
  {
    "ph": "X", "cat": "Trace", "ts": 1212075525586.016, "dur": 1289526.102,
    "pid": "Spans", "tid": "PyTorch Profiler",
    "name": "PyTorch Profiler (0)",
    "args": {
      "Op count": 0
    }
  },
  {
    "name": "Record Window End", "ph": "i", "s": "g",
    "pid": "", "tid": "", "ts": 1212076832503.044
  }
],
  "traceName": "rank-34.pt.trace.json"
}`

// A CPU-only Kineto trace (torch.profiler without the device activity)
// is read as one: its rank from distributedInfo, its steps and host ops
// at baseTimeNanoseconds + ts, and no device, said as such (not as a
// trace_view.json without an Ascend Hardware process).
func TestReadKinetoCPUOnly(t *testing.T) {
	r := model.NewRank("x")
	_, err := Read(strings.NewReader(kinetoCPUOnly), "rank-34.json", r)
	require.NoError(t, err)
	require.Empty(t, r.Warnings)
	require.Equal(t, model.FormatTorchNPUChrome, r.Format, "named *.json, the header says Kineto")
	require.Equal(t, 34, r.Rank)
	const base = 1719853884000000000
	require.Equal(t, []model.Step{{ID: 551, Start: base + 1212075529876817, End: base + 1212075529876817 + 210109162}}, r.Steps)
	require.Equal(t, []model.FrameworkOp{{Start: base + 1212076812889310, Dur: 2503, Name: r.Intern("aten::empty"), Thread: r.Threads.ID(1074)}}, r.FrameworkOps)
	require.Empty(t, r.Tasks)
	require.False(t, r.Have.Timeline)
	require.Contains(t, r.Have.TimelineNote, `rank-34.json is a Kineto trace (torch.profiler) without an "NPU" device process`)
	require.Equal(t, -1, r.Device)
}

// kinetoCUDA is a Kineto trace of a CUDA GPU in the layout of real ones
// (HolisticTraceAnalysis tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz:
// distributedInfo, deviceProperties naming the GPUs, the device a process
// named after the program and labelled "GPU 0", kernels with args
// device/stream, cuda_runtime launches on the host).
func kinetoCUDA(metaLast bool) string {
	meta := `  {"name": "process_name", "ph": "M", "ts": 1694039959446568.000, "pid": 0, "tid": 0, "args": {"name": "python3.10"}},
  {"name": "process_labels", "ph": "M", "ts": 1694039959446568.000, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}`
	evs := []string{`  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 948300, "tid": 948300,
    "ts": 1694039959446570.000, "dur": 7.000,
    "args": {
      "External id": 15, "cbid": 211, "correlation": 17
    }
  }`, `  {
    "ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0, "tid": 7,
    "ts": 1694039959446580.000, "dur": 2.000,
    "args": {
      "External id": 15, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 17
    }
  }`}
	if metaLast {
		evs = append(evs, meta)
	} else {
		evs = append([]string{meta}, evs...)
	}
	return `{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA A100-PG509-200", "totalGlobalMem": 42297524224,
      "computeMajor": 8, "computeMinor": 0
    }
  ],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
  "traceEvents": [
` + strings.Join(evs, ",\n") + `
],
  "traceName": "event_sync_trace.json"
}`
}

// A Kineto trace of another accelerator than an NPU is refused with an
// error that names the file, what it is and what was expected, whether
// the device's label comes before or after its slices, read whole or in
// parts.
func TestReadKinetoGPURefused(t *testing.T) {
	defer func(v int64) { MinSplitBytes = v }(MinSplitBytes)
	MinSplitBytes = 0
	for _, last := range []bool{false, true} {
		trace := kinetoCUDA(last)
		_, err := Read(strings.NewReader(trace), "event_sync_trace.json.gz", model.NewRank("x"))
		require.EqualError(t, err, `event_sync_trace.json.gz: not an Ascend NPU trace: a torch.profiler (Kineto) trace of another accelerator (process labelled "GPU 0", deviceProperties "NVIDIA A100-PG509-200"); expected torch_npu's Kineto trace, whose device is a process named "NPU", or an Ascend profile (trace_view.json, a *_ascend_pt or PROF_* folder, a profiler .db)`)
		for _, parts := range []int{2, 3} {
			_, err := ReadFile(strings.NewReader(trace), int64(len(trace)), "t.json", model.NewRank("x"), parts)
			require.ErrorContains(t, err, `t.json: not an Ascend NPU trace`, "parts %d", parts)
			require.ErrorContains(t, err, `"GPU 0"`, "parts %d", parts)
		}
	}
	// an MTIA one (deviceProperties empty: the label alone)
	mtia := strings.Replace(strings.Replace(kinetoCUDA(false), `"GPU 0"`, `"MTIA 9"`, 1), `"name": "NVIDIA A100-PG509-200", `, ``, 1)
	_, err := Read(strings.NewReader(mtia), "m.json", model.NewRank("x"))
	require.EqualError(t, err, `m.json: not an Ascend NPU trace: a torch.profiler (Kineto) trace of another accelerator (process labelled "MTIA 9"); expected torch_npu's Kineto trace, whose device is a process named "NPU", or an Ascend profile (trace_view.json, a *_ascend_pt or PROF_* folder, a profiler .db)`)
}

// realExcerpt is an excerpt of a real torch_npu Kineto trace (see
// testdata/kineto/README.md): its header and metadata as they are, 13
// cpu_op slices, the last 24 kernels with their launches and flows, and
// the trailer, each event byte for byte.
const realExcerpt = "testdata/kineto/msprof_3466812.excerpt.pt.trace.json"

// The real excerpt reads exactly. The expected values were computed from
// the file independently (Python's json with decimal.Decimal, ts·1000 and
// dur·1000 as integers): 24 kernels (cat "kernel"), durations summing to
// 194144 ns, the first at 4307764842639.312 µs, the last ending at
// 4307764844697.273 µs; 12 KERNEL_AIVEC, 8 KERNEL_AICORE, 4 KERNEL_MIX_AIV;
// 13 cpu_op slices on the autograd thread 3467863.
func TestReadKinetoRealExcerpt(t *testing.T) {
	f, err := os.Open(realExcerpt)
	require.NoError(t, err)
	defer f.Close()
	r := model.NewRank("x")
	_, err = Read(f, "msprof_3466812.excerpt.pt.trace.json", r)
	require.NoError(t, err)
	require.Empty(t, r.Warnings)
	require.Equal(t, model.FormatTorchNPUChrome, r.Format)
	require.Equal(t, 0, r.Device, "the NPU process is pid 0 (its stream's thread_name has pid 47)")
	require.Equal(t, -1, r.Rank, "no distributedInfo")
	const base = 1782967788000000000
	require.Len(t, r.Tasks, 24)
	var sum int64
	types := map[string]int{}
	for _, k := range r.Tasks {
		sum += r.Dur(&k)
		types[r.Str(r.TaskType(&k))]++
		require.Equal(t, model.ClassCompute, r.Class(&k))
		require.Equal(t, int32(47), r.Stream(&k))
	}
	require.Equal(t, int64(194144), sum)
	require.Equal(t, map[string]int{"AI_VECTOR_CORE": 12, "AI_CORE": 8, "MIX_AIV": 4}, types)
	require.Equal(t, int64(base+4307764842639312), r.Tasks[0].Start)
	last := r.Tasks[len(r.Tasks)-1]
	require.Equal(t, int64(base+4307764844697273), last.Start+r.Dur(&last))
	require.Equal(t, "ReduceSum", r.Str(r.OpType(&last)), "the op type before the kernel hash")
	require.Equal(t, "MatMulV2_ND_ND_ND_FP32_FP32_FP32_false_true_all", r.Str(r.OpType(&r.Tasks[0])))
	require.Len(t, r.FrameworkOps, 13)
	require.Equal(t, model.FrameworkOp{Start: base + 4307764832845418, Dur: 366040, Name: r.Intern("autograd::engine::evaluate_function: NllLossBackward0"), Thread: r.Threads.ID(3467863)}, r.FrameworkOps[0])
	require.Empty(t, r.HCCL)
	require.Empty(t, r.Steps)
	require.Empty(t, r.Links)
	require.True(t, r.Have.Timeline)
	// read in parts: the same
	data, err := os.ReadFile(realExcerpt)
	require.NoError(t, err)
	for _, parts := range []int{2, 4} {
		checkSplit(t, data, parts)
	}
}

// Kineto kernel names give the op type before the kernel hash; names
// without a hash what model.OpTypeFromName gives.
func TestKinetoOpType(t *testing.T) {
	cases := [][2]string{
		{"NLLLoss_aadf7331de6cbc0134917036f7feef64_high_performance__kernel0", "NLLLoss"},
		{"ForeachMulScalar_e573c2f50baae431b4b3f11dd4fbf7b1_high_performance_2", "ForeachMulScalar"},
		{"Cast_39a266ce9a8d7d9ead33f6686e936b72", "Cast"},
		{"MatMulV2_ND_ND_FP32_FP32_true_false_all_65537", "MatMulV2_ND_ND_FP32_FP32_true_false_all"},
		{"_aadf7331de6cbc0134917036f7feef64_x", "_aadf7331de6cbc0134917036f7feef64_x"},
		{"X_AADF7331DE6CBC0134917036F7FEEF64_high", "X_AADF7331DE6CBC0134917036F7FEEF64_high"},
		{"hcom_allReduce__586_0_1", "hcom_allReduce__586_0"},
	}
	for _, c := range cases {
		require.Equal(t, c[1], kinetoOpType(c[0]), c[0])
	}
}

// A slice of the NPU process that is no kernel, copy or annotation (a
// category Kineto may write for the device that npuprof does not know,
// here the real excerpt's last kernel recategorised) is skipped with a
// warning that counts it and names its category, never silently; read in
// parts, the same.
func TestReadKinetoUnknownDeviceSlice(t *testing.T) {
	data, err := os.ReadFile(realExcerpt)
	require.NoError(t, err)
	i := bytes.LastIndex(data, []byte(`"cat": "kernel"`))
	require.Positive(t, i)
	data = append(append(append([]byte{}, data[:i]...), `"cat": "collective_comm"`...), data[i+len(`"cat": "kernel"`):]...)
	r := model.NewRank("x")
	_, err = Read(bytes.NewReader(data), "t.pt.trace.json", r)
	require.NoError(t, err)
	require.Len(t, r.Tasks, 23)
	require.Equal(t, []model.Warning{{File: "t.pt.trace.json", Count: 1, Message: `skipped 1 slice(s) of the NPU process that are neither kernels nor memory copies (the first: "ReduceSum_7a09f5b7af4126487a7f726a9aac7548_high_performance_82100900"): npuprof does not know what they are`}}, r.Warnings)
	for _, parts := range []int{2, 3} {
		checkSplit(t, data, parts)
	}
}
