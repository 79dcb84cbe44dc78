// Package tracegen writes synthetic torch_npu profiler output directories
// (`*_ascend_pt`, docs/formats.md#folder-names) for a vLLM-Ascend Qwen3-MoE decode run
// and returns the exact ground truth of every metric npuprof computes.
//
// The output mimics a mid-version (CANN 8.0-era, torch_npu 2.5) Level1 text
// export, per rank:
//
//	<dir>/dp{d}_pp0_tp{t}_dcp0_ep{e}_rank{r}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt/
//	    profiler_info_{r}.json        mid shape + torch_npu_version/cann_version, rank_id
//	    profiler_metadata.json        ENV_VARIABLES + parallel_group_info (tp, ep, default_group, dp, pp)
//	    ASCEND_PROFILER_OUTPUT/
//	        trace_view.json           bare array; Python, CANN, Ascend Hardware, HCCL,
//	                                  Overlap Analysis, AI Core Freq, HBM processes
//	        kernel_details.csv        CRLF, TAB after start times, """a,b;c""" shapes
//	        step_trace_time.csv       one row per ProfilerStep, or one row with empty Step
//	        communication.json        "step<N>" blocks, or a single "step" block
//	<dir>/npuprof_truth.json          Truth (Generate only)
//
// GenerateLayout writes the same run in msprof's layout (PROF_* folders with
// mindstudio_profiler_output/msprof_*.json, op_summary_*.csv, task_time_*.csv,
// communication_statistic_*.csv, api_statistic_*.csv and
// analyze/communication.json) or torch_npu's db layout
// (ascend_pytorch_profiler_{rank}.db in the pristine schema of the real rank1
// sample, plus analysis.db), with the same ground truth: see Layout.
//
// Every time is an integer number of nanoseconds internally; writers print
// `ts` as a string with exactly three decimals and `dur` as a JSON number
// with at most three decimals, so the ground truth (computed from the same
// integers by this package's own interval code) is exact.
//
// Generation is deterministic: the same Scenario (Seed included) always
// produces byte-identical files, and GenerateRank writes exactly the folder
// Generate writes for that rank. The trace is streamed through bufio
// writers one decode step at a time (three replayed passes: Python events,
// device events, flows), so memory stays flat: a 1 GB trace_view.json takes
// about 10 s and 15 MB of RAM. SizedScenario picks Steps for a target size.
//
// Pitfalls deliberately present (see Scenarios for which scenario has what):
//
//   - Ascend Hardware and HCCL process/thread metadata come after their
//     slices; identify processes by process_name, never by pid arithmetic.
//   - HCCL FFTS+ subtasks ("Notify Wait", "Write Value", "SDMA") on the comm
//     streams and HCCL "Plane k" small tasks (Notify_Wait, Notify_Record,
//     Memcpy, Reduce_Inline) lie inside the big ops: neither compute nor
//     extra HCCL time.
//   - With AivComm, an `allreduceAivKernel` (MIX_AIV) / `allgatherAivKernel`,
//     `reduce_scatterAivKernel` (AI_VECTOR_CORE) row on the comm stream
//     exactly coincides with its HCCL big op: communication, not compute, and
//     not a kernel_details row.
//   - EVENT_WAIT (EVENT_WAIT_SQE) and EVENT_RECORD (EVENT_RECORD_SQE, ~10 %
//     typed PLACE_HOLDER_SQE) tasks sit on the compute stream 2 and the comm
//     streams 4 (tp) / 5 (ep); some last 0 ns (`"dur": 0`).
//   - A PROFILING_ENABLE placeholder on stream 0 opens the device window.
//   - With SamplerCumsum, `aclnnCumsum_CumsumAiCore_Cumsum` (Type Cumsum,
//     AI_VECTOR_CORE) runs once per step in the sampler: not MoE routing.
//   - The per-step logits `hcom_allGather_` on the tp group exists in every
//     scenario: it is not FLASHCOMM1.
//   - `AI Core Freq` / `HBM` counter (`C`) events must be skipped.
package tracegen
