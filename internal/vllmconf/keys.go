package vllmconf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/editdist"
)

// CompilationConfigKeys are the keys vLLM's --compilation-config takes:
// the fields of CompilationConfig (vllm/config/compilation.py) of the
// vLLM releases vLLM-Ascend v0.9–v0.2x runs on, old and new (level and
// mode, use_cudagraph and cudagraph_mode, full_cuda_graph,
// max_capture_size and max_cudagraph_capture_size, ...). Recent vLLM
// refuses any other key (the dataclass forbids extra fields); older ones
// ignore it, so a misspelt key is a setting that silently does nothing.
var CompilationConfigKeys = []string{
	"level", "mode", "debug_dump_path", "cache_dir", "compile_cache_save_format", "backend",
	"custom_ops", "splitting_ops", "compile_mm_encoder", "compile_sizes", "compile_ranges_split_points",
	"inductor_compile_config", "inductor_passes", "use_inductor", "use_cudagraph", "full_cuda_graph",
	"cudagraph_mode", "cudagraph_num_of_warmups", "cudagraph_capture_sizes", "cudagraph_copy_inputs",
	"cudagraph_specialize_lora", "use_inductor_graph_partition", "pass_config",
	"max_cudagraph_capture_size", "max_capture_size", "dynamic_shapes_config", "local_cache_dir",
}

// AdditionalConfigKeys are the top-level keys vLLM-Ascend's
// --additional-config takes (AscendConfig, vllm_ascend/ascend_config.py),
// over the versions: the keys of current main's AscendConfig and the ones
// earlier releases read (the top-level EPLB keys before eplb_config,
// torchair_graph_config until v0.13.0, the scheduler keys before
// scheduler_config, the fine-grained TP sizes before
// finegrained_tp_config). Current vLLM-Ascend refuses any other key;
// v0.13 ignores it.
var AdditionalConfigKeys = []string{
	// current AscendConfig
	"refresh", "enable_cpu_binding", "multistream_dsv4_dsa_overlap", "enable_prefill_mc2",
	"multistream_overlap_shared_expert", "enable_kv_nz", "enable_mc2_hierarchy_comm",
	"enable_reduce_sample", "enable_dsa_cp", "enable_force_eplb", "enable_pcp_o_proj_weight_sharding",
	"draft_window_size", "mix_placement", "pa_shape_list", "mega_moe_max_tokens", "ascend_log_path",
	"enable_fused_mc2", "enable_mlapo", "mlapo_keep_prefill_weights", "msmonitor_use_daemon",
	"enable_transpose_kv_cache_by_block", "weight_nz_mode", "enable_shared_expert_dp",
	"enable_sparse_sfa_c8", "enable_sparse_li_c8", "ascend_compilation_config", "ascend_fusion_config",
	"eplb_config", "rejection_sampler_config", "rl_config", "xlite_graph_config", "finegrained_tp_config",
	"scheduler_config", "dynamic_spec_config", "sparse_kv_offload_config", "dump_config", "dump_config_path",
	"enable_flashcomm1",
	// earlier releases
	"expert_map_path", "eplb_policy_type", "expert_map_record_path", "init_redundancy_expert",
	"dynamic_eplb", "num_iterations_eplb_update", "gate_eplb", "num_wait_worker_iterations",
	"torchair_graph_config", "ascend_scheduler_config", "weight_prefetch_config",
	"chunked_prefill_for_mla", "lmhead_tensor_parallel_size", "oproj_tensor_parallel_size",
	"enable_balance_scheduling", "recompute_scheduler_enable", "short_request_first_config",
	"profiling_chunk_config", "batch_job_sched_config", "enable_prefetch", "enable_npugraph_ex",
}

// ConfigKeyFact names the invalid deployment facts that carry the warning
// about an unknown config key (UnknownKey.Message is their value): deploy
// makes them, rules turns them into warnings.
const ConfigKeyFact = "config_key"

// UnknownKey is a key of a JSON config flag that the flag's config does
// not take, with the known keys nearest to it.
type UnknownKey struct {
	Flag, Key string
	// Nearest are the known keys at the smallest edit distance (up to
	// three); Meant is the one the user meant when that is unambiguous:
	// a single nearest key, at most two edits away.
	Nearest []string
	Meant   string
}

// Message is the warning for the key: what is wrong, what the config does
// with it, and what npuprof reads it as.
func (u UnknownKey) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s key %q is not one the config takes (recent versions refuse it, older ones ignore it, so it sets nothing)", u.Flag, u.Key)
	switch {
	case u.Meant != "":
		fmt.Fprintf(&b, "; did you mean %q? npuprof reads it as that", u.Meant)
	case len(u.Nearest) > 0:
		fmt.Fprintf(&b, "; nearest: %s (ambiguous or far, so npuprof reads it as none)", strings.Join(u.Nearest, ", "))
	}
	return b.String()
}

// CheckKeys returns the keys of a config flag (--compilation-config or
// --additional-config) that its config does not take, in the order given.
func CheckKeys(flag string, keys []string) []UnknownKey {
	var known []string
	switch flag {
	case "--compilation-config":
		known = CompilationConfigKeys
	case "--additional-config":
		known = AdditionalConfigKeys
	default:
		return nil
	}
	var out []UnknownKey
	for _, k := range keys {
		if slices.Contains(known, k) {
			continue
		}
		u := UnknownKey{Flag: flag, Key: k}
		best := -1
		for _, c := range known {
			d := editdist.Distance(strings.ToLower(k), c)
			switch {
			case best < 0 || d < best:
				best, u.Nearest = d, []string{c}
			case d == best:
				u.Nearest = append(u.Nearest, c)
			}
		}
		slices.Sort(u.Nearest)
		if len(u.Nearest) == 1 && best <= 2 && best < len(k)/2 {
			u.Meant = u.Nearest[0]
		}
		if best > max(2, len(k)/2) {
			u.Nearest = nil // nothing close: no suggestion
		}
		if len(u.Nearest) > 3 {
			u.Nearest = u.Nearest[:3]
		}
		out = append(out, u)
	}
	return out
}
