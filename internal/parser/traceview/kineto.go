package traceview

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Kineto's Chrome trace (PyTorch's torch.profiler with torch_npu's
// PrivateUse1 plugin, saved by tensorboard_trace_handler as
// {worker}.{time_ns}.pt.trace.json or by export_chrome_trace) is another
// schema than torch_npu's trace_view.json (a real one:
// Ascend/msinsight server/src/test/test_data/torchnpu/*.pt.trace.json):
//
//   - an object: "schemaVersion", "deviceProperties", "distributedInfo"
//     ({"rank": r, ...} in distributed runs), "baseTimeNanoseconds",
//     then "traceEvents";
//   - ts is a JSON number of µs relative to baseTimeNanoseconds, with 3
//     decimals ("ts": 4307764842639.312): parsed from its decimal text,
//     the absolute time is baseTimeNanoseconds + ts·1000 ns;
//   - the device is the process named "NPU" whose pid is the device id,
//     its threads "NPU stream {id}" (tid = stream); device work is
//     cat "kernel" (args "streamId", "type": KERNEL_AICORE, KERNEL_AIVEC,
//     KERNEL_MIX_AIV, ...), "gpu_memcpy", "gpu_memset"; collectives are
//     kernels named hcom_* (or typed HCCL / COMMUNICATION);
//   - the host process is named after the program (python, python3, ...)
//     and labelled "CPU": cpu_op slices, user_annotation ProfilerStep#N,
//     python_function; "ac2g" flows join a privateuse1_runtime launch (not
//     the torch op) to its kernel, so no op -> kernel links are read;
//   - no EVENT_WAIT / EVENT_RECORD tasks, no HCCL plane tasks, no Overlap
//     Analysis: what needs them is unavailable (Availability.SyncNote).

// procKineto is the device process of a Kineto trace ("NPU").
const procKineto = procHCCL + 1

// procOverlap is the profiler's own "Overlap Analysis" process: its
// slices are read for their span and sums per kind (model.OwnOverlap).
const procOverlap = procKineto + 1

// kinetoHead is what the header of a Kineto trace says.
type kinetoHead struct {
	base    int64 // baseTimeNanoseconds, 0 when absent
	rank    int   // distributedInfo.rank + 1, 0 when absent
	world   int   // distributedInfo.world_size, 0 when absent
	baseSet bool
	// kineto: the header has a key only Kineto's writer puts there
	// (kinetoKeys), so the object is a torch.profiler trace even when
	// no NPU process follows
	kineto bool
	// devName is the first deviceProperties entry's name ("NVIDIA
	// A100-PG509-200"); torch_npu writes an empty deviceProperties
	devName string
}

// kinetoKeys are the header keys of Kineto's writer (a real torch_npu
// trace has schemaVersion, deviceProperties, displayTimeUnit,
// baseTimeNanoseconds; CUDA ones add distributedInfo).
var kinetoKeys = []string{`"schemaVersion"`, `"deviceProperties"`, `"distributedInfo"`, `"baseTimeNanoseconds"`}

// read takes baseTimeNanoseconds, distributedInfo's rank and the first
// device's name from a piece of the header text (the bytes before
// "traceEvents").
func (h *kinetoHead) read(b []byte) {
	for _, k := range kinetoKeys {
		h.kineto = h.kineto || bytes.Contains(b, []byte(k))
	}
	if h.devName == "" {
		h.devName = firstDeviceName(b)
	}
	if !h.baseSet {
		if v, ok := intAfter(b, `"baseTimeNanoseconds"`); ok && v >= 0 {
			h.base, h.baseSet = v, true
		}
	}
	if h.rank == 0 {
		if i := bytes.Index(b, []byte(`"distributedInfo"`)); i >= 0 {
			if v, ok := intAfter(b[i:], `"rank"`); ok && v >= 0 && v < 1<<20 {
				h.rank = int(v) + 1
			}
		}
	}
	if h.world == 0 {
		if i := bytes.Index(b, []byte(`"distributedInfo"`)); i >= 0 {
			if v, ok := intAfter(b[i:], `"world_size"`); ok && v > 0 && v < 1<<20 {
				h.world = int(v)
			}
		}
	}
}

// firstDeviceName is the "name" of the first object of deviceProperties
// in b, "" when the array is empty or not in b whole enough.
func firstDeviceName(b []byte) string {
	i := bytes.Index(b, []byte(`"deviceProperties"`))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(b[i+len(`"deviceProperties"`):], " \t\r\n:")
	if len(rest) == 0 || rest[0] != '[' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != '{' {
		return ""
	}
	end := bytes.IndexByte(rest, '}')
	if end < 0 {
		return ""
	}
	j := bytes.Index(rest[:end], []byte(`"name"`))
	if j < 0 {
		return ""
	}
	v := bytes.TrimLeft(rest[j+len(`"name"`):end], " \t\r\n:")
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	k := bytes.IndexByte(v[1:], '"')
	if k < 0 {
		return ""
	}
	return string(v[1 : 1+k])
}

// intAfter parses the integer value of the key at its first occurrence in b.
func intAfter(b []byte, key string) (int64, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(b[i+len(key):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n\"")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	v, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	return v, err == nil
}

// memcpyType is the task type of Kineto's memory copies and sets.
var memcpyType = []byte("MEMCPY")

// kinetoSlice decides a slice of a Kineto trace (an object with
// traceEvents) of a process of the given kind: skip device-side
// annotations and the capture's span, else the trace_view task type its
// Kineto kernel type or category is (nil when none). Kineto writes
// metadata first, but the kind may not be known yet: what a category says
// is decided without it, and a slice of another category than a kernel's
// or a copy's is logged as such (fOther) for build to count and skip in
// the NPU process, so that a read in parts decides as a sequential one.
func kinetoSlice(ev *event, kind int) (tt []byte, skip bool) {
	cat := string(ev.cat.b)
	switch cat {
	case "gpu_user_annotation", "Trace":
		return nil, true
	case "gpu_memcpy", "gpu_memset":
		return memcpyType, false
	}
	if ev.kType.set && !ev.taskType.set {
		return kinetoTaskType(ev.kType.b), false
	}
	return nil, false
}

// kinetoTaskTypes are the task types of trace_view.json that Kineto's
// kernel types are (MSPTI's KERNEL_* names, CANN's task types).
var kinetoTaskTypes = map[string][]byte{
	"KERNEL_AICORE": []byte("AI_CORE"), "KERNEL_AIVEC": []byte("AI_VECTOR_CORE"), "KERNEL_AICPU": []byte("AI_CPU"),
	"KERNEL_MIX_AIC": []byte("MIX_AIC"), "KERNEL_MIX_AIV": []byte("MIX_AIV"),
}

// kinetoTaskType is the trace_view task type of a Kineto kernel type.
func kinetoTaskType(b []byte) []byte {
	if t, ok := kinetoTaskTypes[string(b)]; ok {
		return t
	}
	return b
}

// kinetoOpType is the op type of a Kineto kernel name, which is the
// kernel binary's: "{op type}_{32 hex digits}_{mode}_{tiling key}"
// ("ReduceSum_7a09f5b7af4126487a7f726a9aac7548_high_performance_82100900",
// "NLLLoss_aadf7331de6cbc0134917036f7feef64_high_performance__kernel0" in
// Ascend/msinsight's torchnpu trace) gives the part before the hash; other
// names ("MatMulV2_ND_ND_FP32_FP32_true_false_all_65537") what
// model.OpTypeFromName gives.
func kinetoOpType(name string) string {
	for i := 1; i+33 <= len(name); i++ {
		if name[i] != '_' {
			continue
		}
		if e := i + 33; isHex32(name[i+1:e]) && (e == len(name) || name[e] == '_') {
			return name[:i]
		}
	}
	return model.OpTypeFromName(name)
}

// opType is the op type of a device task's name: a Kineto kernel's
// (kinetoOpType) or a trace_view task's (model.OpTypeFromName).
func (rd *reader) opType(name string) string {
	if rd.sawKineto {
		return kinetoOpType(name)
	}
	return model.OpTypeFromName(name)
}

// isHex32 reports whether s is 32 lowercase hex digits.
func isHex32(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// kinetoCollective reports whether a Kineto device slice is a collective.
func kinetoCollective(name, taskType string) bool {
	return strings.HasPrefix(name, "hcom_") || taskType == "HCCL" || taskType == "COMMUNICATION"
}

// absTS adds the header's base time to a Kineto ts; ok is false when the
// sum leaves int64.
func (rd *reader) absTS(ts int64) (int64, bool) {
	b := rd.src.head.base
	if b == 0 {
		return ts, true
	}
	if ts > math.MaxInt64-b || ts < math.MinInt64+b {
		return 0, false
	}
	return ts + b, true
}

// kinetoDevice takes the device id from the pid of a Kineto device
// process (Kineto writes a device's slices with pid = its device id).
func (rd *reader) kinetoDevice(pid int64) {
	rd.sawKineto = true
	if rd.device < 0 && pid >= 0 && pid < 1<<16 {
		rd.device = int(pid)
	}
}

// foreignLabel reports whether a process label names another
// accelerator than an Ascend NPU: Kineto labels a CUDA or ROCm device
// "GPU {id}" and an MTIA one "MTIA {id}" (the HolisticTraceAnalysis test
// traces), torch_npu's "NPU {id}" or "Ascend NPU".
func foreignLabel(l string) bool {
	for _, p := range []string{"GPU ", "MTIA ", "XPU ", "HPU "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// notNPU is the error for a Kineto trace of another accelerator (a
// process labelled GPU/MTIA and no NPU process): its kernels are not an
// NPU's, and reading only its host side would report a device-less rank
// as if the NPU had done nothing.
func (rd *reader) notNPU(file string) error {
	if rd.foreign == "" || rd.sawKineto {
		return nil
	}
	dev := ""
	if n := rd.src.head.devName; n != "" {
		dev = fmt.Sprintf(", deviceProperties %q", n)
	}
	return fmt.Errorf("%s: not an Ascend NPU trace: a torch.profiler (Kineto) trace of another accelerator (process labelled %q%s); expected torch_npu's Kineto trace, whose device is a process named \"NPU\", or an Ascend profile (trace_view.json, a *_ascend_pt or PROF_* folder, a profiler .db)", file, rd.foreign, dev)
}

// kinetoFinish records what a Kineto trace cannot give, its rank, and the
// slices of its NPU process that were neither kernels nor copies (other,
// the first one's name id + 1).
func (rd *reader) kinetoFinish(rank *model.Rank, file string, other int, otherName uint32) {
	if other > 0 {
		rank.Warnings = append(rank.Warnings, model.Warning{File: file, Count: other,
			Message: fmt.Sprintf("skipped %d slice(s) of the NPU process that are neither kernels nor memory copies (the first: %q): npuprof does not know what they are", other, rd.in.str(otherName-1))})
	}
	if !rd.sawKineto && !rd.src.head.kineto {
		return
	}
	if rank.Format == "" || rank.Format == model.FormatTorchNPUText {
		// a trace of this schema named under any name
		rank.Format = model.FormatTorchNPUChrome
	}
	rank.Have.SyncNote = file + " is a Kineto trace (torch.profiler): it records kernels and memory copies, not the EVENT_WAIT / EVENT_RECORD tasks of trace_view.json"
	if rank.WorldSize == 0 && rd.src.head.world > 0 {
		rank.WorldSize, rank.WorldSizeFrom = rd.src.head.world, file+" distributedInfo.world_size"
	}
	if rank.Rank < 0 && rd.src.head.rank > 0 {
		rank.Rank = rd.src.head.rank - 1
	}
	if !rd.sawKineto && !rank.Have.Timeline {
		// (HolisticTraceAnalysis tests/data/cpu_only: torch.profiler with
		// CPU activity only)
		rank.Have.TimelineNote = file + " is a Kineto trace (torch.profiler) without an \"NPU\" device process: only host activity was recorded (profile with torch_npu.profiler.ProfilerActivity.NPU for the device)"
	}
}
