package results

import (
	"encoding/json"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// ExpertsDoc is the document's top-level "experts" object: per-layer
// expert load (the layer x expert heatmap), the hot experts, per-EP-rank
// load (the per-rank bar chart) and the predicted EPLB effect. Its metrics
// (experts.*, skew.moe.gmm.*) are profile-level and live with the other
// cross-rank metrics in cluster.metrics / cluster.unavailable. Field names
// are a public contract (docs/experts.md).
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type ExpertsDoc struct {
	Source     *ExpertSourceDoc  `json:"source,omitempty"`
	Layers     []ExpertLayerDoc  `json:"layers"`
	HotExperts []HotExpertDoc    `json:"hot_experts"`
	DumpRanks  []RankTokensDoc   `json:"dump_ranks"`
	EPGroups   []EPGroupDoc      `json:"ep_groups"`
	EPRanks    []EPRankDoc       `json:"ep_ranks"`
	EPLB       *EPLBDoc          `json:"eplb,omitempty"`
	LogLayers  []LogLayerDoc     `json:"log_layers"`
	Logs       []model.ExpertLog `json:"logs"`
	Notes      []string          `json:"notes,omitempty"`
}

// ExpertSourceDoc describes the expert input.
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type ExpertSourceDoc struct {
	Path    string   `json:"path"`
	Format  string   `json:"format"`
	Stage   string   `json:"stage,omitempty"`
	Files   []string `json:"files"`
	Experts int      `json:"experts"`
	// Unobserved are the expert ids whose load is unknown.
	Unobserved []int `json:"unobserved,omitempty"`
	// Ranks are the EP ranks with per-slot dumps.
	Ranks []int `json:"ranks,omitempty"`
}

// ExpertLayerDoc is one MoE layer.
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type ExpertLayerDoc struct {
	Layer           int      `json:"layer"`
	Tokens          int64    `json:"tokens"`
	MaxExpert       *int     `json:"max_expert,omitempty"`
	MaxTokens       *int64   `json:"max_tokens,omitempty"`
	MaxOverMean     *float64 `json:"max_over_mean,omitempty"`
	RankMaxOverMean *float64 `json:"rank_max_over_mean,omitempty"`
	EPLBBefore      *float64 `json:"eplb_before,omitempty"`
	EPLBAfter       *float64 `json:"eplb_after,omitempty"`
	// ExpertTokens[e] is expert e's tokens (the heatmap row).
	ExpertTokens []int64 `json:"expert_tokens"`
	// RankTokens[i] is the tokens of rank source.ranks[i].
	RankTokens []int64 `json:"rank_tokens,omitempty"`
}

// HotExpertDoc is one hot expert.
type HotExpertDoc struct {
	Layer       int     `json:"layer"`
	Expert      int     `json:"expert"`
	Tokens      int64   `json:"tokens"`
	Share       float64 `json:"share"`
	MaxOverMean float64 `json:"max_over_mean"`
}

// RankTokensDoc is one rank's tokens over all layers of the dumps.
type RankTokensDoc struct {
	Rank   int   `json:"rank"`
	Tokens int64 `json:"tokens"`
}

// EPGroupDoc is one ep group's GroupedMatmul skew.
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type EPGroupDoc struct {
	GlobalRanks       []int    `json:"global_ranks"`
	Ranks             []int    `json:"ranks"`
	MaxOverMean       float64  `json:"max_over_mean"`
	MaxRank           int      `json:"max_rank"`
	TokensMaxOverMean *float64 `json:"tokens_max_over_mean,omitempty"`
	LostTimeUs        *float64 `json:"lost_time_us,omitempty"`
	LostBy            string   `json:"lost_by,omitempty"`
	LostWhy           string   `json:"lost_unavailable,omitempty"`
}

// EPRankDoc is one EP rank's GroupedMatmul load.
type EPRankDoc struct {
	Rank      int     `json:"rank"`
	Group     int     `json:"group"`
	GMMTimeUs float64 `json:"gmm_time_us"`
	GMMCount  int     `json:"gmm_count"`
	Tokens    *int64  `json:"tokens,omitempty"`
	Hot       bool    `json:"hot"`
}

// EPLBDoc is the predicted effect of `npuprof eplb plan`.
type EPLBDoc struct {
	Ranks        int          `json:"ranks"`
	Redundant    int          `json:"redundant"`
	SlotsPerRank int          `json:"slots_per_rank"`
	BeforeFrom   string       `json:"before_from"`
	Before       RatioSummary `json:"before"`
	After        RatioSummary `json:"after"`
	Command      string       `json:"command"`
}

// RatioSummary is max/mean rank load over layers.
type RatioSummary struct {
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// LogLayerDoc is one layer's logged peak-to-average ratio.
type LogLayerDoc struct {
	Layer int     `json:"layer"`
	PAR   float64 `json:"par"`
}

// MarshalJSON encodes d's fields. A method, as the detail's parts are
// (detail.go), so that a document without experts (null) never builds the
// encoders of their dozen types.
func (d ExpertsDoc) MarshalJSON() ([]byte, error) {
	type fields ExpertsDoc
	return json.Marshal(fields(d))
}
