package results

// The view: what the terminal summary and the HTML report show beyond the
// JSON contract, held by the document so that the writers read nothing
// else. Times are the passes' own nanoseconds (the document has µs), so a
// sum over ranks is exact; metrics keep the passes' values (the document's
// drop non-finite ones). Every view field is excluded from the JSON
// (`json:"-"`): the document's bytes do not change. Package results/build
// sets them (build.AddView; cmd adds them only for the outputs that read
// them); a document read back by Read has none (its writers are the JSON
// and the diff, which read the contract only).

// View is the document-level part of the view.
type View struct {
	// Built: the document was built from a run (results/build), so the view is
	// there; false for a document read back from JSON.
	Built bool
	// InputErrors are the failures that belong to no rank (the
	// document's errors list them with the ranks' and the cluster's).
	InputErrors []PassErrorDoc
	// Evaluated: rules ran (the summary then lists their outcomes and the
	// findings' evidence).
	Evaluated bool
	// RuleSet are the rules and budgets evaluated (build.AddRuleSet); nil when
	// not recorded.
	RuleSet []RuleInfo
}

// Stat is a count and a total duration (ns).
type Stat struct {
	Count int
	Total int64
}

// RankView is one rank's part of the view.
type RankView struct {
	Format string
	// Metrics are the passes' values as they set them.
	Metrics map[string]float64
	Errors  []PassErrorDoc
	// Groups (parallel_group_info) and Env (profiler_metadata.json
	// ENV_VARIABLES) are the HTML report's facts.
	Groups []ParallelGroup
	Env    map[string]string
	// Steps are the steps pass's breakdowns in ns (nil without steps).
	Steps []StepNs
	// HCCL .. Sample are the passes' results, nil when the pass did not
	// run.
	HCCL      *HCCLView
	MoE       *MoEView
	EventWait *EventWaitView
	Kernels   *KernelsView
	// Timeline is set when the timeline pass ran.
	Timeline *TimelineView
	Sample   *TimelineSample
}

// ParallelGroup is one group of parallel_group_info.
type ParallelGroup struct {
	Comm        string
	Name        string
	GlobalRanks []int
}

// StepNs is one step's breakdown in ns. CommUnavailable, when set, says
// why communication, not overlapped and free were not measured.
type StepNs struct {
	Step                                                  int
	Window, Computing, Communication, NotOverlapped, Free int64
	CommUnavailable                                       string
}

// HaveComm reports whether the step's communication was measured.
func (s StepNs) HaveComm() bool { return s.CommUnavailable == "" }

// HCCLView is the hccl pass's collectives.
type HCCLView struct {
	// ByTypeGroup is keyed "type@group"; group "?" when unknown.
	ByTypeGroup  map[string]Stat
	UnknownGroup Stat
	// Types and Groups in a stable order.
	Types, Groups []string
}

// MoEView is the moe pass's routing path.
type MoEView struct {
	Routing, Cumsum, CumsumAICPU, GMM, Dispatch, Combine Stat
	// Positions are the MoE layers by position (means over steps, µs).
	Positions       []MoEPosition
	PositionsCapped bool
}

// MoEPosition is one MoE layer position: mean routing and Cumsum time (µs).
type MoEPosition struct {
	RoutingUs, CumsumUs float64
}

// EventWaitView is the eventwait pass's waits.
type EventWaitView struct {
	Streams []StreamWait
	// Longest are the longest waits, longest first.
	Longest []Wait
}

// StreamWait is EVENT_WAIT time on one stream; Span is the stream's first
// start to last end (ns); Compute: the stream carries compute kernels.
type StreamWait struct {
	Stream  int32
	Wait    Stat
	Span    int64
	Compute bool
}

// Wait is one long EVENT_WAIT (ns) and the task that ran after it on its
// stream (HasNext false when none did).
type Wait struct {
	Stream     int32
	Start, Dur int64
	NextName   string
	NextDur    int64
	HasNext    bool
}

// KernelsView is the kernels pass's top compute kernels.
type KernelsView struct {
	Top []KernelStat
}

// KernelStat is one kernel name: Total in ns, the rest µs.
type KernelStat struct {
	Name, OpType, Core string
	Count              int
	Total              int64
	Mean, P50, P99     float64
}

// TimelineView is the timeline pass's window.
type TimelineView struct {
	WindowStart int64
	HaveWindow  bool
}

// TimelineSample is a rank's sampled device timeline (the HTML mini
// timeline): the median-length step, the middle step, or the capture.
type TimelineSample struct {
	Median, Middle, Capture *SampleWindow
}

// SampleWindow is one sampled window (ns); Step -1: not a step window.
// kept: the document's copy of analysis.SampleWindow: results imports no analysis
type SampleWindow struct {
	Step       int
	Start, End int64
	Sliced     bool
	Lanes      []SampleLane
	Boxes      []SampleBox
	Names      []string
	Tasks      int
}

// SampleLane is a device stream, or the HCCL ops of one group.
type SampleLane struct {
	HCCL   bool
	Stream int32
	Group  string
}

// SampleBox is one box: Kind in the mini timeline's legend order, Start
// and End ns from the window's start, Name an index into Names.
type SampleBox struct {
	Lane       int32
	Kind       uint8
	Start, End int64
	Name       int32
	Count      int32
}

// ClusterView is the cross-rank part of the view.
type ClusterView struct {
	// Metrics are the cluster passes' values as they set them.
	Metrics map[string]float64
	Errors  []PassErrorDoc
	Skew    *SkewView
	Arrival *ArrivalView
	Experts *ExpertsView
}

// SkewView is the skew pass's verdict.
type SkewView struct {
	Window []SkewStatDoc
	Slow   []SlowRank
}

// SlowRank is a rank named as an outlier; Step -1: over the window.
type SlowRank struct {
	Rank, Step int
	Reason     string
}

// ArrivalView is the arrival pass's matched collectives: Wait is every
// rank's wait for the last arrival (ns, summed).
type ArrivalView struct {
	Matched int
	Wait    int64
	Groups  []GroupArrival
}

// GroupArrival is one communicator instance; LastRank (-1: none) arrived
// last LastCount times.
type GroupArrival struct {
	Comm, Group string
	Ranks       []int
	Collectives int
	LastRank    int
	LastCount   int
}

// ExpertsView is the experts pass's result.
type ExpertsView struct {
	// Loads is the expert input, nil when there is none.
	Loads     *ExpertLoadsView
	Hot       []HotExpertDoc
	DumpRanks []RankTokensDoc
	EPLB      *EPLBView
	EP        *EPSkewView
	// PlanCommand writes the plan EPLB predicts.
	PlanCommand string
}

// ExpertLoadsView is the expert input: tokens per layer and expert.
type ExpertLoadsView struct {
	Source, Format, Stage string
	NumExperts            int
	Layers                []ExpertLayerLoad
	// Observed[e] says expert e's load is known (nil: every expert's).
	Observed []bool
	Notes    []string
}

// ExpertLayerLoad is one layer's tokens per expert.
type ExpertLayerLoad struct {
	ID     int
	Tokens []int64
}

// HasLoads reports whether there is a load to draw.
func (x *ExpertLoadsView) HasLoads() bool { return x != nil && len(x.Layers) > 0 && x.NumExperts > 0 }

// IsObserved reports whether expert e's load is known.
func (x *ExpertLoadsView) IsObserved(e int) bool {
	return x.Observed == nil || (e >= 0 && e < len(x.Observed) && x.Observed[e])
}

// EPLBView is the predicted EPLB effect (max and mean rank load).
type EPLBView struct {
	Ranks, Redundant int
	Before, After    RatioSummary
}

// EPSkewView is the per-EP-rank GroupedMatmul load; Worst indexes Groups.
type EPSkewView struct {
	Ranks  []EPRankLoad
	Groups []EPGroupSkew
	Worst  int
}

// EPRankLoad is one EP rank's GroupedMatmul work (GMM in ns).
type EPRankLoad struct {
	Rank, Group int
	GMM         Stat
	Tokens      int64
	HaveTokens  bool
	Hot         bool
}

// EPGroupSkew is one EP group's GroupedMatmul skew.
type EPGroupSkew struct {
	Ranks       []int
	MaxOverMean float64
	MaxRank     int
}
