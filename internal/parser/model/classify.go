package model

import (
	"strconv"
	"strings"
)

// The tables in this file are the single definition of how task types,
// names and collective names are classified. Parsers, the trace generator
// and tests all use them.

// computeTaskTypes are hardware task types of compute ops (docs/formats.md#device-task-types).
var computeTaskTypes = map[string]bool{
	"AI_CORE": true, "AI_VECTOR_CORE": true, "AIV_SQE": true, "AIC": true, "AIV": true,
	"MIX_AIC": true, "MIX_AIV": true, "AI_CPU": true, "DSA_SQE": true, "DSA": true,
	"KERNEL_AICORE": true, "KERNEL_AIVEC": true, "KERNEL_AICPU": true,
	// (a real torch.profiler Kineto trace types NLLLoss KERNEL_MIX_AIV)
	"KERNEL_MIX_AIV": true, "KERNEL_MIX_AIC": true,
	"C_CORE_SQE": true, "HOST_CPU_SQE": false,
}

var memcpyTaskTypes = map[string]bool{
	"MEMCPY_ASYNC": true, "PCIE_DMA_SQE": true, "SDMA_SQE": true, "MEMCPY": true,
}

var subtaskTypes = map[string]bool{
	"Notify Wait": true, "Notify Record": true, "Write Value": true, "SDMA": true,
	"NOTIFY_WAIT_SQE": true, "NOTIFY_RECORD_SQE": true, "WRITE_VALUE_SQE": true,
	"Notify_Wait": true, "Notify_Record": true, "Memcpy": true, "Reduce_Inline": true,
}

// otherTaskTypes are the task types a profiler writes that none of the
// tables above holds: the rest of STARS' SQE list and FFTS+'s subtask
// types (docs/formats.md#device-task-types), and the placeholders of old
// or Level0 files (PlaceholderTaskType). They are known, and classed as
// other device tasks.
var otherTaskTypes = map[string]bool{
	"VQ6_SQE": true, "TOF_SQE": true, "VPC_SQE": true, "JPEGE_SQE": true, "JPEGD_SQE": true,
	"ROCCE_SQE": true, "CDQM_SQE": true, "Data Context": true, "Load Context": true,
	"EVENT_WAIT_SQE": true, "EVENT_WAIT": true, "EVENT_RECORD_SQE": true, "EVENT_RECORD": true,
	"PLACE_HOLDER_SQE": true, "HCCL": true, "COMMUNICATION": true,
}

// PlaceholderTaskType reports whether a task type is a placeholder that
// does not name the core: "" (no Task Type), Other (old traces type every
// task so), N/A (Level0's kernel_details.csv) and UNKNOWN.
func PlaceholderTaskType(taskType string) bool {
	switch taskType {
	case "", "Other", "N/A", "UNKNOWN":
		return true
	}
	return false
}

// KnownTaskType reports whether a hardware task type is one a profiler
// writes (any table of this file holds it). A task of another type is
// classed ClassOther; a reader says so, since a damaged type cell
// (AI_CORE → Ai_CORE) would otherwise drop a kernel from every metric in
// silence.
func KnownTaskType(taskType string) bool {
	if _, ok := computeTaskTypes[taskType]; ok {
		return true
	}
	return memcpyTaskTypes[taskType] || subtaskTypes[taskType] || otherTaskTypes[taskType] || PlaceholderTaskType(taskType)
}

// hostTaskNames are names a device task carries when it belongs to no op.
var hostTaskNames = map[string]TaskClass{
	"EVENT_WAIT": ClassEventWait, "EVENT_WAIT_SQE": ClassEventWait,
	"EVENT_RECORD": ClassEventRecord, "EVENT_RECORD_SQE": ClassEventRecord,
	"MEMCPY_ASYNC": ClassMemcpy, "PCIE_DMA_SQE": ClassMemcpy, "SDMA_SQE": ClassMemcpy,
	"PROFILING_ENABLE": ClassPlaceholder, "PROFILING_DISABLE": ClassPlaceholder,
	"PLACE_HOLDER_SQE": ClassPlaceholder,
	"Notify Wait":      ClassCommSubtask, "Notify Record": ClassCommSubtask,
	"Write Value": ClassCommSubtask, "SDMA": ClassCommSubtask,
	"NOTIFY_WAIT_SQE": ClassCommSubtask, "NOTIFY_RECORD_SQE": ClassCommSubtask,
	"WRITE_VALUE_SQE": ClassCommSubtask,
}

// ClassifyTask decides the class of a device task from its hardware task
// type and its name. The name wins for EVENT_* (an EVENT_RECORD may be
// typed PLACE_HOLDER_SQE) and for collectives run as kernels.
func ClassifyTask(taskType, name string) TaskClass {
	if c, ok := hostTaskNames[name]; ok {
		return c
	}
	if IsCommKernelName(name) {
		return ClassCommKernel
	}
	switch {
	case taskType == "EVENT_WAIT_SQE" || taskType == "EVENT_WAIT":
		return ClassEventWait
	case taskType == "EVENT_RECORD_SQE" || taskType == "EVENT_RECORD":
		return ClassEventRecord
	case taskType == "PLACE_HOLDER_SQE":
		return ClassPlaceholder
	case memcpyTaskTypes[taskType]:
		return ClassMemcpy
	case subtaskTypes[taskType]:
		return ClassCommSubtask
	case computeTaskTypes[taskType]:
		return ClassCompute
	case taskType == "HCCL" || taskType == "COMMUNICATION":
		return ClassCommKernel
	}
	// Old traces type every task "Other"; kernel_details at Level0 says
	// N/A. A named op that is not a host task type is a compute kernel.
	if PlaceholderTaskType(taskType) && name != "" && !strings.HasPrefix(name, "hcom_") {
		return ClassCompute
	}
	return ClassOther
}

// IsCommKernelName reports whether a kernel name is a collective executed
// as a kernel (AicpuKernel / AivKernel variants, docs/formats.md#hccl-op-names-and-groups).
func IsCommKernelName(name string) bool {
	return strings.Contains(name, "AicpuKernel") || strings.HasSuffix(name, "AivKernel") || strings.Contains(name, "AivKernel_")
}

// OpTypeFromName derives the op type from an aclnn kernel name
// ({aclnnApi}_{kernelImpl}_{opType}); for other names it returns the name
// with a trailing _<digits> GE node index removed.
func OpTypeFromName(name string) string {
	if strings.HasPrefix(name, "aclnn") {
		if i := strings.LastIndexByte(name, '_'); i >= 0 && i+1 < len(name) {
			return name[i+1:]
		}
		return name
	}
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// FirstDim parses the leading dimension of the first tensor of an `Input
// Shapes` value ("25,4096;25,8" -> 25): digits only, ok=false for an empty
// or non-numeric one.
func FirstDim(shapes string) (int64, bool) {
	s := strings.Trim(shapes, `" `)
	if i := strings.IndexAny(s, ";,"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false // no strconv error to allocate: most cells are not numbers
		}
		v = v*10 + int64(s[i]-'0')
	}
	return v, true
}

// hcclTypes maps the lower-cased camel-case op type of an HCCL name to the
// metric key. Order matters: longest first.
var hcclTypes = []string{
	"batchsendrecv", "reducescatterv", "reducescatter", "allgatherv", "allgather",
	"allreduce", "alltoallvc", "alltoallv", "alltoall", "broadcast", "receive",
	"send", "reduce", "scatter",
}

// HCCLTypes returns every collective type HCCLTypeFromName can return
// (the <type> of the hccl.<type>.* metrics), "unknown" included.
func HCCLTypes() []string {
	return append(append([]string(nil), hcclTypes...), "unknown")
}

// HCCLTypeFromName returns the lower-case collective type of an HCCL op
// name such as hcom_allReduce__586_0_1 (→ allreduce), or "unknown".
// MindSpore's graph-mode names count the same: the scope path and the
// -opN suffix are dropped (Default/network/AllGather-op12 → allgather).
func HCCLTypeFromName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	s := strings.ToLower(name)
	s = strings.TrimPrefix(s, "hcom_")
	s = strings.ReplaceAll(s, "_", "")
	for _, t := range hcclTypes {
		if strings.HasPrefix(s, t) {
			return t
		}
	}
	return "unknown"
}

// HCCLVariant returns "aicpu", "aiv" or "" for an HCCL op name.
func HCCLVariant(name string) string {
	switch {
	case strings.Contains(name, "AicpuKernel"):
		return "aicpu"
	case strings.Contains(name, "AivKernel"):
		return "aiv"
	}
	return ""
}

// HCCLHashSuffix extracts the group-hash token from an HCCL op name:
// {opType}_{hash3}_{index}[_{iteration}] where opType ends with '_'
// (hcom_allReduce__586_0_1 → "586"; hcom_broadcast__483_0 → "483";
// hcom_allReduce_AicpuKernel_503_X_1 → "503").
func HCCLHashSuffix(name string) string {
	rest := name
	if i := strings.Index(rest, "__"); i >= 0 {
		rest = rest[i+2:]
	} else if i := strings.Index(rest, "Kernel_"); i >= 0 {
		rest = rest[i+len("Kernel_"):]
	} else {
		return ""
	}
	if j := strings.IndexByte(rest, '_'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// DoubleHash is msprof's group hash of an HCCL communicator name:
// (h29 << 32) | h131 with 32-bit rolling hashes (docs/formats.md#hccl-op-names-and-groups).
func DoubleHash(s string) uint64 {
	var h29, h131 uint32
	for i := 0; i < len(s); i++ {
		h29 = h29*29 + uint32(s[i])
		h131 = h131*131 + uint32(s[i])
	}
	return uint64(h29)<<32 | uint64(h131)
}

// NewGroup builds a Group with its hash fields filled.
func NewGroup(comm, name string, rank int, global []int) Group {
	h := strconv.FormatUint(DoubleHash(comm), 10)
	suf := h
	if len(suf) > 3 {
		suf = suf[len(suf)-3:]
	}
	return Group{Comm: comm, Name: name, Rank: rank, GlobalRanks: global, Hash: h, HashSuffix: suf}
}
