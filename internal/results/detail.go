package results

import "encoding/json"

// The detail: what the terminal summary and the HTML report show beyond
// the JSON contract, held by the document so that the writers read nothing
// else: the document's "detail" (document-level, ranks[].detail,
// cluster.detail). Times are the passes' own nanoseconds (the contract has
// µs), so a sum over ranks is exact. Package internal/results/assemble sets it (for a
// run that writes an output that reads it, see render.Output.Detail);
// `--format json` leaves it out, `--format json-full` writes it, so a
// saved document renders as its run did (docs/json.md, "Detail").

// Detail is the document-level part of the detail.
type Detail struct {
	// Built: the detail is there (built from a run, or read back from a
	// document written with it); false for a contract-only document.
	Built bool `json:"built"`
	// InputErrors are the failures that belong to no rank (the
	// document's errors list them with the ranks' and the cluster's).
	InputErrors []PassErrorDoc `json:"input_errors"`
	// Evaluated: rules ran (the summary then lists their outcomes and the
	// findings' evidence).
	Evaluated bool `json:"evaluated"`
	// RuleSet are the rules and budgets evaluated (assemble.AddRuleSet); nil when
	// not recorded.
	RuleSet []RuleInfo `json:"rule_set"`
}

// Stat is a count and a total duration (ns).
type Stat struct {
	Count int   `json:"count"`
	Total int64 `json:"total_ns"`
}

// RankDetail is one rank's part of the view.
type RankDetail struct {
	Format string         `json:"format"`
	Errors []PassErrorDoc `json:"errors"`
	// Groups (parallel_group_info) and Env (profiler_metadata.json
	// ENV_VARIABLES) are the HTML report's facts.
	Groups []ParallelGroup   `json:"groups"`
	Env    map[string]string `json:"env"`
	// Steps are the steps pass's breakdowns in ns (nil without steps).
	Steps []StepNs `json:"steps"`
	// HCCL .. Sample are the passes' results, nil when the pass did not
	// run.
	HCCL      *HCCLDetail      `json:"hccl"`
	MoE       *MoEDetail       `json:"moe"`
	EventWait *EventWaitDetail `json:"event_wait"`
	Kernels   *KernelsDetail   `json:"kernels"`
	// Timeline is set when the timeline pass ran.
	Timeline *TimelineDetail `json:"timeline"`
	Sample   *TimelineSample `json:"sample"`
}

// ParallelGroup is one group of parallel_group_info.
type ParallelGroup struct {
	Comm        string `json:"comm"`
	Name        string `json:"name"`
	GlobalRanks []int  `json:"global_ranks"`
}

// StepNs is one step's breakdown in ns. CommUnavailable, when set, says
// why communication, not overlapped and free were not measured.
type StepNs struct {
	Step            int    `json:"step"`
	Window          int64  `json:"window_ns"`
	Computing       int64  `json:"computing_ns"`
	Communication   int64  `json:"communication_ns"`
	NotOverlapped   int64  `json:"not_overlapped_ns"`
	Free            int64  `json:"free_ns"`
	CommUnavailable string `json:"comm_unavailable"`
}

// HaveComm reports whether the step's communication was measured.
func (s StepNs) HaveComm() bool { return s.CommUnavailable == "" }

// HCCLDetail is the hccl pass's collectives.
type HCCLDetail struct {
	// ByTypeGroup is keyed "type@group"; group "?" when unknown.
	ByTypeGroup  map[string]Stat `json:"by_type_group"`
	UnknownGroup Stat            `json:"unknown_group"`
	// Types and Groups in a stable order.
	Types  []string `json:"types"`
	Groups []string `json:"groups"`
}

// MoEDetail is the moe pass's routing path.
type MoEDetail struct {
	Routing     Stat `json:"routing"`
	Cumsum      Stat `json:"cumsum"`
	CumsumAICPU Stat `json:"cumsum_aicpu"`
	GMM         Stat `json:"gmm"`
	Dispatch    Stat `json:"dispatch"`
	Combine     Stat `json:"combine"`
	// Positions are the MoE layers by position (means over steps, µs).
	Positions       []MoEPosition `json:"positions"`
	PositionsCapped bool          `json:"positions_capped"`
}

// MoEPosition is one MoE layer position: mean routing and Cumsum time (µs).
type MoEPosition struct {
	RoutingUs float64 `json:"routing_us"`
	CumsumUs  float64 `json:"cumsum_us"`
}

// EventWaitDetail is the eventwait pass's waits.
type EventWaitDetail struct {
	Streams []StreamWait `json:"streams"`
	// Longest are the longest waits, longest first.
	Longest []Wait `json:"longest"`
}

// StreamWait is EVENT_WAIT time on one stream; Span is the stream's first
// start to last end (ns); Compute: the stream carries compute kernels.
type StreamWait struct {
	Stream  int32 `json:"stream"`
	Wait    Stat  `json:"wait"`
	Span    int64 `json:"span_ns"`
	Compute bool  `json:"compute"`
}

// Wait is one long EVENT_WAIT (ns) and the task that ran after it on its
// stream (HasNext false when none did).
type Wait struct {
	Stream   int32  `json:"stream"`
	Start    int64  `json:"start_ns"`
	Dur      int64  `json:"dur_ns"`
	NextName string `json:"next_name"`
	NextDur  int64  `json:"next_dur_ns"`
	HasNext  bool   `json:"has_next"`
}

// KernelsDetail is the kernels pass's top compute kernels.
type KernelsDetail struct {
	Top []KernelStat `json:"top"`
}

// KernelStat is one kernel name: Total in ns, the rest µs.
type KernelStat struct {
	Name   string  `json:"name"`
	OpType string  `json:"op_type"`
	Core   string  `json:"core"`
	Count  int     `json:"count"`
	Total  int64   `json:"total_ns"`
	Mean   float64 `json:"mean_us"`
	P50    float64 `json:"p50_us"`
	P99    float64 `json:"p99_us"`
}

// TimelineDetail is the timeline pass's window.
type TimelineDetail struct {
	WindowStart int64 `json:"window_start_ns"`
	HaveWindow  bool  `json:"have_window"`
}

// TimelineSample is a rank's sampled device timeline (the HTML mini
// timeline): the median-length step, the middle step, or the capture.
type TimelineSample struct {
	Median  *SampleWindow `json:"median"`
	Middle  *SampleWindow `json:"middle"`
	Capture *SampleWindow `json:"capture"`
}

// SampleWindow is one sampled window (ns); Step -1: not a step window.
// kept: the detail's own declaration (--format json-full); alike the contract's types in shape (tagged fields), not in logic
type SampleWindow struct {
	Step   int          `json:"step"`
	Start  int64        `json:"start_ns"`
	End    int64        `json:"end_ns"`
	Sliced bool         `json:"sliced"`
	Lanes  []SampleLane `json:"lanes"`
	Boxes  []SampleBox  `json:"boxes"`
	Names  []string     `json:"names"`
	Tasks  int          `json:"tasks"`
}

// SampleLane is a device stream, or the HCCL ops of one group.
type SampleLane struct {
	HCCL   bool   `json:"hccl"`
	Stream int32  `json:"stream"`
	Group  string `json:"group"`
}

// SampleBox is one box: Kind in the mini timeline's legend order, Start
// and End ns from the window's start, Name an index into Names.
type SampleBox struct {
	Lane  int32 `json:"lane"`
	Kind  uint8 `json:"kind"`
	Start int64 `json:"start_ns"`
	End   int64 `json:"end_ns"`
	Name  int32 `json:"name"`
	Count int32 `json:"count"`
	// KindTime is a merged box's time by kind (ns, in Kind's order):
	// what the box is made of (nil for one task).
	KindTime []int64 `json:"kind_time_ns,omitempty"`
}

// ClusterDetail is the cross-rank part of the view.
type ClusterDetail struct {
	Errors  []PassErrorDoc `json:"errors"`
	Skew    *SkewDetail    `json:"skew"`
	Arrival *ArrivalDetail `json:"arrival"`
	Experts *ExpertsDetail `json:"experts"`
	// Ledger is the step-time ledger of each step's critical rank (nil:
	// none), for the terminal's ledger section and the HTML stacked bars.
	Ledger *LedgerDetail `json:"ledger"`
}

// LedgerDetail is the step-time ledger per step: Causes names the
// ledger's causes (ledger.<cause>.time_us), each step's Us holds their
// µs in that order.
type LedgerDetail struct {
	Causes []string           `json:"causes"`
	Steps  []LedgerStepDetail `json:"steps"`
}

// LedgerStepDetail is one step on its critical rank: its wall time and
// the causes' µs (in LedgerDetail.Causes order; they sum to TimeUs).
// kept: the detail's own declaration (--format json-full); alike the contract's types in shape (tagged fields), not in logic
type LedgerStepDetail struct {
	Step   int       `json:"step"`
	Rank   int       `json:"rank"`
	Phase  string    `json:"phase,omitempty"`
	TimeUs float64   `json:"time_us"`
	Us     []float64 `json:"us"`
	// ServiceCause is the service cause of the step's time, when the
	// service profile's batches were joined to the device steps: what its
	// batch ran, "prefill" (a prefill, mixed into decode or alone) or
	// "decode" (service.join.step_batches[].cause), and ServiceBatchRow
	// that batch.csv row. An annotation of the step: its time stays
	// split over the causes above. "" and nil when not matched.
	ServiceCause    string `json:"service_cause,omitempty"`
	ServiceBatchRow *int   `json:"service_batch_row,omitempty"`
}

// SkewDetail is the skew pass's verdict.
type SkewDetail struct {
	Window []SkewStatDoc `json:"window"`
	Slow   []SlowRank    `json:"slow"`
}

// SlowRank is a rank named as an outlier; Step -1: over the window.
type SlowRank struct {
	Rank   int    `json:"rank"`
	Step   int    `json:"step"`
	Reason string `json:"reason"`
}

// ArrivalDetail is the arrival pass's matched collectives: Wait is every
// rank's wait for the last arrival (ns, summed).
type ArrivalDetail struct {
	Matched int            `json:"matched"`
	Wait    int64          `json:"wait_ns"`
	Groups  []GroupArrival `json:"groups"`
}

// GroupArrival is one communicator instance; LastRank (-1: none) arrived
// last LastCount times.
type GroupArrival struct {
	Comm        string `json:"comm"`
	Group       string `json:"group"`
	Ranks       []int  `json:"ranks"`
	Collectives int    `json:"collectives"`
	LastRank    int    `json:"last_rank"`
	LastCount   int    `json:"last_count"`
}

// ExpertsDetail is the experts pass's result.
type ExpertsDetail struct {
	// Loads is the expert input, nil when there is none.
	Loads     *ExpertLoadsDetail `json:"loads"`
	Hot       []HotExpertDoc     `json:"hot"`
	DumpRanks []RankTokensDoc    `json:"dump_ranks"`
	EPLB      *EPLBDetail        `json:"eplb"`
	EP        *EPSkewDetail      `json:"ep"`
	// PlanCommand writes the plan EPLB predicts.
	PlanCommand string `json:"plan_command"`
}

// ExpertLoadsDetail is the expert input: tokens per layer and expert.
type ExpertLoadsDetail struct {
	Source     string            `json:"source"`
	Format     string            `json:"format"`
	Stage      string            `json:"stage"`
	NumExperts int               `json:"num_experts"`
	Layers     []ExpertLayerLoad `json:"layers"`
	// Observed[e] says expert e's load is known (nil: every expert's).
	Observed []bool   `json:"observed"`
	Notes    []string `json:"notes"`
}

// ExpertLayerLoad is one layer's tokens per expert.
type ExpertLayerLoad struct {
	ID     int     `json:"id"`
	Tokens []int64 `json:"tokens"`
}

// HasLoads reports whether there is a load to draw.
func (x *ExpertLoadsDetail) HasLoads() bool { return x != nil && len(x.Layers) > 0 && x.NumExperts > 0 }

// IsObserved reports whether expert e's load is known.
func (x *ExpertLoadsDetail) IsObserved(e int) bool {
	return x.Observed == nil || (e >= 0 && e < len(x.Observed) && x.Observed[e])
}

// EPLBDetail is the predicted EPLB effect (max and mean rank load).
type EPLBDetail struct {
	Ranks     int          `json:"ranks"`
	Redundant int          `json:"redundant"`
	Before    RatioSummary `json:"before"`
	After     RatioSummary `json:"after"`
}

// EPSkewDetail is the per-EP-rank GroupedMatmul load; Worst indexes Groups.
type EPSkewDetail struct {
	Ranks  []EPRankLoad  `json:"ranks"`
	Groups []EPGroupSkew `json:"groups"`
	Worst  int           `json:"worst"`
}

// EPRankLoad is one EP rank's GroupedMatmul work (GMM in ns).
type EPRankLoad struct {
	Rank       int   `json:"rank"`
	Group      int   `json:"group"`
	GMM        Stat  `json:"gmm"`
	Tokens     int64 `json:"tokens"`
	HaveTokens bool  `json:"have_tokens"`
	Hot        bool  `json:"hot"`
}

// EPGroupSkew is one EP group's GroupedMatmul skew.
type EPGroupSkew struct {
	Ranks       []int   `json:"ranks"`
	MaxOverMean float64 `json:"max_over_mean"`
	MaxRank     int     `json:"max_rank"`
}

// The detail's three parts encode as their fields. They are methods so
// that a document written without its detail (--format json, which
// leaves the zero detail out) never builds the encoders of the detail's
// types: encoding/json builds a struct's field encoders on first use,
// and the detail's dozens of types are a measurable share of a JSON-only
// run (docs/performance.md's callgrind count).

// MarshalJSON encodes d's fields.
func (d Detail) MarshalJSON() ([]byte, error) {
	type fields Detail
	return json.Marshal(fields(d))
}

// MarshalJSON encodes d's fields.
func (d RankDetail) MarshalJSON() ([]byte, error) {
	type fields RankDetail
	return json.Marshal(fields(d))
}

// MarshalJSON encodes d's fields.
func (d ClusterDetail) MarshalJSON() ([]byte, error) {
	type fields ClusterDetail
	return json.Marshal(fields(d))
}
