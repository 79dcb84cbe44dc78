package model

import "fmt"

// Expert-load input formats (ExpertLoads.Format). The values appear in the
// JSON document (`experts.source.format`) and are a public contract.
const (
	// ExpertFormatMindIEDump is MindIE's load-balancing dump:
	// {prefill|decode}_{rank}.csv (+ model_gen_config.json, and optionally
	// {prefill|decode}_global_deployment.json).
	ExpertFormatMindIEDump = "mindie_dump"
	// ExpertFormatCSV is npuprof's plain `layer,expert,tokens` CSV.
	ExpertFormatCSV = "layer_expert_csv"
	// ExpertFormatLog is vLLM-Ascend / vLLM log lines only (no per-expert
	// counts, only the imbalance the serving process logged).
	ExpertFormatLog = "log"
)

// ExpertLoads is the per-expert token load of one serving stage of an MoE
// model, with whatever placement and logged imbalance came with it.
// Profiling data has no per-expert counts (docs/formats.md#expert-loads); these come from
// dumps, a user CSV or logs, read by package internal/inputs/expertload.
//
// Tokens are routed token-expert pairs (a token sent to k experts counts k
// times), summed over the collection window of the input.
// kept: the export manifest's declaration of the loads; alike the contract's types in shape, not in logic
type ExpertLoads struct {
	// Source is the file or folder the loads were read from.
	Source string `json:"source"`
	// Files lists every file read, in the order read.
	Files []string `json:"files"`
	// Format is one of the ExpertFormat* values.
	Format string `json:"format"`
	// Stage is "decode", "prefill", or "" when the input does not say.
	Stage string `json:"stage"`

	// NumExperts is the number of logical experts; expert ids are
	// 0..NumExperts-1. Zero when only logs were read.
	NumExperts int `json:"num_experts"`
	// Observed[e] is false for an expert the input says nothing about (a
	// dump of some ranks only). Nil means every expert was observed.
	Observed []bool `json:"observed"`
	// Layers holds one entry per MoE layer, ordered by ID.
	Layers []ExpertLayer `json:"layers"`

	// RankIDs are the EP ranks whose per-slot loads were measured (dump
	// file rank numbers, ascending); ExpertLayer.RankTokens follows this
	// order. Empty for inputs without per-slot loads.
	RankIDs []int `json:"rank_ids"`
	// Placement is the expert placement the loads were measured under
	// (from a deployment JSON of the same stage), nil when unknown.
	Placement *Deployment `json:"placement"`
	// PlacementFromSlots: no deployment JSON fits the dumps, and Placement
	// is the slot-position layout (rank r, slot s holds expert r*slots+s)
	// assumed to map their slots to experts: vLLM's default contiguous
	// layout, not an expert map that was read.
	PlacementFromSlots bool `json:"placement_from_slots"`

	// Config is model_gen_config.json, nil when absent.
	Config *MoEGenConfig `json:"config"`
	// Logs are the imbalance lines found in logs, in file order.
	Logs []ExpertLog `json:"logs"`
	// Notes are observations about the input that never stop the analysis
	// (stale appended dumps dropped, deployment shape mismatch, ...).
	Notes []string `json:"notes"`
}

// ExpertLayer is the load of one MoE layer.
type ExpertLayer struct {
	// ID is the MoE layer index as the input gives it (0-based for MindIE
	// dumps and vLLM-Ascend expert maps).
	ID int `json:"layer"`
	// Tokens[e] is the load of logical expert e (all its replicas summed).
	Tokens []int64 `json:"tokens"`
	// RankTokens[i] is the measured load of rank RankIDs[i] (sum of its
	// slots); nil when the input has no per-slot loads.
	RankTokens []int64 `json:"rank_tokens"`
}

// Total returns the layer's total load.
func (l *ExpertLayer) Total() int64 {
	var n int64
	for _, v := range l.Tokens {
		n += v
	}
	return n
}

// HasLoads reports whether per-expert loads are present.
func (x *ExpertLoads) HasLoads() bool { return x != nil && len(x.Layers) > 0 && x.NumExperts > 0 }

// IsObserved reports whether expert e has data.
func (x *ExpertLoads) IsObserved(e int) bool {
	return x.Observed == nil || (e >= 0 && e < len(x.Observed) && x.Observed[e])
}

// Validate checks the invariants every reader must leave behind.
func (x *ExpertLoads) Validate() error {
	if x.NumExperts < 0 {
		return fmt.Errorf("experts: negative expert count %d", x.NumExperts)
	}
	if x.Observed != nil && len(x.Observed) != x.NumExperts {
		return fmt.Errorf("experts: %d observed flags for %d experts", len(x.Observed), x.NumExperts)
	}
	for i := range x.Layers {
		l := &x.Layers[i]
		if len(l.Tokens) != x.NumExperts {
			return fmt.Errorf("experts: layer %d has %d expert loads, want %d", l.ID, len(l.Tokens), x.NumExperts)
		}
		if i > 0 && x.Layers[i-1].ID >= l.ID {
			return fmt.Errorf("experts: layers out of order (%d after %d)", l.ID, x.Layers[i-1].ID)
		}
		if l.RankTokens != nil && len(l.RankTokens) != len(x.RankIDs) {
			return fmt.Errorf("experts: layer %d has %d rank loads for %d ranks", l.ID, len(l.RankTokens), len(x.RankIDs))
		}
		for _, v := range l.Tokens {
			if v < 0 {
				return fmt.Errorf("experts: layer %d has a negative load", l.ID)
			}
		}
	}
	return nil
}

// MoEGenConfig is MindIE's model_gen_config.json.
type MoEGenConfig struct {
	NumMoELayers             int `json:"num_moe_layers"`
	CollectionInterval       int `json:"collection_Interval"`
	NumExperts               int `json:"num_of_experts"`
	NumSelectedExperts       int `json:"num_of_selected_experts"`
	NumDanglingSharedExperts int `json:"num_dangling_shared_experts"`
}

// Deployment is an expert placement: for each MoE layer, the global
// (logical) expert id held by each local slot of each EP rank. It is the
// model of vLLM-Ascend's expert-map JSON (expert_map_path /
// expert_map_record_path) and MindIE's {stage}_global_deployment.json.
type Deployment struct {
	Layers []DeploymentLayer `json:"layers"`
}

// DeploymentLayer is the placement of one MoE layer.
type DeploymentLayer struct {
	// ID is the MoE layer index (layer_id).
	ID int `json:"layer"`
	// Devices[d] lists the expert id in each local slot of EP rank d
	// (device_id d).
	Devices [][]int `json:"devices"`
}

// Ranks returns the number of EP ranks of the first layer (0 when empty).
func (d *Deployment) Ranks() int {
	if d == nil || len(d.Layers) == 0 {
		return 0
	}
	return len(d.Layers[0].Devices)
}

// SlotsPerRank returns the slot count of rank 0 of the first layer.
func (d *Deployment) SlotsPerRank() int {
	if d.Ranks() == 0 {
		return 0
	}
	return len(d.Layers[0].Devices[0])
}

// Uniform reports whether every layer has the same number of ranks and
// every rank the same number of slots (what vLLM-Ascend's reader needs to
// build its placement tensor).
func (d *Deployment) Uniform() bool {
	r, s := d.Ranks(), d.SlotsPerRank()
	for _, l := range d.Layers {
		if len(l.Devices) != r {
			return false
		}
		for _, dev := range l.Devices {
			if len(dev) != s {
				return false
			}
		}
	}
	return true
}

// ExpertLog is one imbalance line found in a serving log. Kind names the
// producer's line (see internal/inputs/expertload for the exact spellings) and Values
// holds its numbers under fixed keys: "mean", "max", "min" (the current
// peak-to-average ratio of per-rank load, summarised over layers),
// "updated_mean", "updated_max" (after the EPLB algorithm's new placement),
// "par" with Layer >= 0 (one layer's ratio), and "avg_tokens",
// "max_tokens", "balancedness" (upstream vLLM, balancedness = avg/max).
type ExpertLog struct {
	File   string             `json:"file"`
	Line   int                `json:"line"`
	Kind   string             `json:"kind"`
	Layer  int                `json:"layer"`
	Model  string             `json:"model,omitempty"`
	Values map[string]float64 `json:"values"`
}

// Expert log kinds (ExpertLog.Kind).
const (
	// LogMoELoadStats: vLLM-Ascend v0.13-v0.15
	// `[ModelRunner][MOE_load_stats] Peak-to-Average-Ratio: Mean=…, Max=…, Min=…`.
	LogMoELoadStats = "moe_load_stats"
	// LogMoELoadStatsLayer: vLLM-Ascend v0.13-v0.15 (DEBUG)
	// `[ModelRunner][MOE_load_stats][Layer N] PAR=…`.
	LogMoELoadStatsLayer = "moe_load_stats_layer"
	// LogExpertHotness: vLLM-Ascend v0.16-v0.20
	// `[Expert Hotness] Current: mean=…, max=…, Updated: mean=…, max=…`.
	LogExpertHotness = "expert_hotness"
	// LogHotnessImbalance: vLLM-Ascend v0.21+
	// `[eplb/worker] Expert hotness imbalance, current: mean=… max=…, updated: mean=… max=…`.
	LogHotnessImbalance = "expert_hotness_imbalance"
	// LogEPLBStep: upstream vLLM
	// `EPLB step: [N for model M: ]avg_tokens=…, max_tokens=…, balancedness=…`.
	LogEPLBStep = "vllm_eplb_step"
)
