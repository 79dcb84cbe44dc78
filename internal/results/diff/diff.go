// Package diff holds the diff document (schema npuprof.diff/v1): what
// changed between two analysis documents, as package compare measures it
// and `npuprof diff` writes it (package render's diff writers read it;
// `check --baseline` embeds it). Field names are a public contract
// (docs/diff.md).
package diff

import (
	"sort"
)

// Schema is the diff document's schema id.
const Schema = "npuprof.diff/v1"

// Side describes one of the two documents.
type Side struct {
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Ranks []int  `json:"ranks"`
	// Steps is the number of steps per rank the per-step normalization
	// divides by (ProfilerStep#N count, else the metric
	// decode.steps.count); 0 when neither is known.
	Steps int `json:"steps"`
	// StepsFrom names where Steps came from.
	StepsFrom string `json:"steps_from,omitempty"`
	// Partial lists the ranks of this side whose trace_view.json or
	// kernel_details.csv was cut short, with the reason; absent when every
	// file was whole. Every compared quantity that read one of them names
	// it in its own partial[] (PartialRef).
	Partial []PartialRank `json:"partial,omitempty"`
}

// MetricDelta is one metric before and after. Before and After are means
// over the ranks that measured the metric (per rank: that rank's value).
// A side that did not measure it has a nil value and, when the document
// said why, the reason.
// kept: the diff document's own declaration; alike the analysis contract's types in shape, not in logic
type MetricDelta struct {
	Metric string   `json:"metric"`
	Before *float64 `json:"before"`
	After  *float64 `json:"after"`
	// Delta is After − Before; nil unless both were measured.
	Delta *float64 `json:"delta"`
	// Pct is Delta / Before × 100; nil when Before is 0 or missing.
	Pct *float64 `json:"pct"`
	// BeforeMissing / AfterMissing say why a side has no value.
	BeforeMissing string `json:"before_unavailable,omitempty"`
	AfterMissing  string `json:"after_unavailable,omitempty"`
	// Partial names the ranks, per side, whose value of the metric went
	// into Before or After from a file cut short (a cross-rank metric: every
	// partial rank of the side); absent when both values are whole.
	Partial []PartialRef `json:"partial,omitempty"`
}

// Changed reports whether the metric differs between the sides (or exists
// on one side only).
func (m MetricDelta) Changed() bool {
	if m.Delta == nil {
		return (m.Before == nil) != (m.After == nil)
	}
	return *m.Delta != 0
}

// RankDelta is one rank present on both sides.
type RankDelta struct {
	Rank    int           `json:"rank"`
	Metrics []MetricDelta `json:"metrics"`
}

// StepDelta is one per-step quantity: its mean per step over every step
// of every rank (µs).
type StepDelta struct {
	Quantity string `json:"quantity"` // window, computing, communication, communication_not_overlapped, free
	UsChange
	// Partial names the partial ranks whose steps went into a mean (with
	// ProfilerStep#N rows), or whose metric did (with decode.steps.count).
	Partial []PartialRef `json:"partial,omitempty"`
}

// UsChange is a time before and after (µs), After − Before and that
// change in percent of Before (nil when Before is 0). A step quantity and
// a ledger entry each hold one (embedded: its keys are theirs).
type UsChange struct {
	BeforeUs float64  `json:"before_us"`
	AfterUs  float64  `json:"after_us"`
	DeltaUs  float64  `json:"delta_us"`
	Pct      *float64 `json:"pct"`
}

// Collective status values.
// kept: the diff document's own declaration; alike the analysis contract's types in shape, not in logic
const (
	StatusGone    = "gone"
	StatusNew     = "new"
	StatusChanged = "changed"
	StatusSame    = "same"
)

// CollectiveDelta is one (type, group) of HCCL big ops: count and time per
// rank (mean over the ranks of each side), and per step when both sides
// know their step count.
type CollectiveDelta struct {
	Type   string `json:"type"`
	Group  string `json:"group"`
	Status string `json:"status"` // gone, new, changed, same
	// Per rank (mean over ranks).
	BeforeCount float64 `json:"before_count"`
	AfterCount  float64 `json:"after_count"`
	BeforeUs    float64 `json:"before_us"`
	AfterUs     float64 `json:"after_us"`
	// Per step per rank; absent when a side's step count is unknown.
	BeforeCountPerStep *float64 `json:"before_count_per_step,omitempty"`
	AfterCountPerStep  *float64 `json:"after_count_per_step,omitempty"`
	// Partial names the partial ranks whose collectives went into the means.
	Partial []PartialRef `json:"partial,omitempty"`
}

// KernelDelta is one compute kernel matched by op type and name: its total
// time per step, mean over ranks (µs). A kernel outside a side's top list
// counts as absent there (Before or After 0, Status new or gone).
type KernelDelta struct {
	Name        string   `json:"name"`
	OpType      string   `json:"op_type,omitempty"`
	Core        string   `json:"core,omitempty"`
	Status      string   `json:"status"` // gone, new, changed, same
	BeforeUs    float64  `json:"before_us_per_step"`
	AfterUs     float64  `json:"after_us_per_step"`
	DeltaUs     float64  `json:"delta_us_per_step"`
	Pct         *float64 `json:"pct"`
	BeforeCount float64  `json:"before_count_per_step"`
	AfterCount  float64  `json:"after_count_per_step"`
	// Partial names the partial ranks whose kernel list went into the means.
	Partial []PartialRef `json:"partial,omitempty"`
}

// Finding status values.
// kept: the diff document's own declaration; alike the analysis contract's types in shape, not in logic
const (
	FindingResolved = "resolved"
	FindingNew      = "new"
	FindingPersists = "persists"
)

// FindingDelta is one rule's finding on either side.
type FindingDelta struct {
	Rule     string `json:"rule"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	Status   string `json:"status"` // resolved, new, persists
	// PredictedUs is the saving_us the rule predicted on the before side
	// (per rank, over the before capture); for a new finding, the after
	// side's prediction. nil (JSON null) when the rule gave no estimate
	// on that side: never 0 for "not estimated".
	PredictedUs *float64 `json:"predicted_saving_us"`
	// MeasuredUs is the measured decrease of MeasuredMetric (mean over
	// ranks, the after side scaled to the before side's step count);
	// nil with MeasuredMissing when it cannot be measured.
	MeasuredUs      *float64 `json:"measured_saving_us"`
	MeasuredMetric  string   `json:"measured_metric,omitempty"`
	MeasuredMissing string   `json:"measured_unavailable,omitempty"`
	// Ratio is MeasuredUs / PredictedUs (how much of the promise was kept).
	Ratio *float64 `json:"measured_over_predicted,omitempty"`
	// Partial names, per side, the ranks whose cut file fed the finding
	// itself (the analysis document's findings[].partial, on the side the
	// finding was found); absent when its inputs were whole.
	Partial []PartialRef `json:"partial,omitempty"`
	// SavingUncertain carries the finding's saving_uncertain on the side
	// whose prediction PredictedUs is: it was estimated from partial
	// metrics, and is neither a lower nor an upper bound.
	SavingUncertain bool `json:"saving_uncertain,omitempty"`
	// MeasuredPartial names the ranks whose value of MeasuredMetric, on
	// either side, was computed from a file cut short: MeasuredUs (and
	// Ratio) rest on it.
	MeasuredPartial []PartialRef `json:"measured_partial,omitempty"`
	// StatusPartial names, for a resolved finding, the after side's partial
	// ranks (for a new one, the before side's): the finding's absence there
	// was judged on files cut short, so the status may come from the cut.
	StatusPartial []PartialRef `json:"status_partial,omitempty"`
	// StepTime is, for a resolved finding whose before side predicted its
	// fix, the predicted vs the measured decode step-time change.
	StepTime *StepChange `json:"step_time,omitempty"`
}

// Result is a comparison: the diff document (schema npuprof.diff/v1).
// kept: the diff document's own declaration; alike the analysis contract's types in shape, not in logic
type Result struct {
	Schema string `json:"schema"`
	Before Side   `json:"before"`
	After  Side   `json:"after"`
	// Overall: every metric, mean over ranks, sorted by name.
	Overall []MetricDelta `json:"overall"`
	// Ranks: every rank present on both sides, its metrics sorted by name.
	Ranks []RankDelta `json:"ranks"`
	// Steps: the per-step time; nil (with Unavailable["steps"]) when a side
	// has no steps.
	Steps       []StepDelta       `json:"steps"`
	Collectives []CollectiveDelta `json:"collectives"`
	Kernels     []KernelDelta     `json:"kernels"`
	Findings    []FindingDelta    `json:"findings"`
	// Plan is the before side's fix plan: its predicted step-time change
	// vs the measured one (absent without a plan).
	Plan *StepChange `json:"plan,omitempty"`
	// StepTime is the step time per step on each side with its spread
	// over the steps, and its change (absent, with
	// Unavailable["step_time"], when a side measured none).
	StepTime *StepTimeDelta `json:"step_time,omitempty"`
	// Ledger is each step-time ledger entry per step before and after,
	// most shrunk first, with the before side's findings whose fix removes
	// it (absent, with Unavailable["ledger"], when a side has no ledger).
	Ledger []LedgerDelta `json:"ledger,omitempty"`
	// Serving compares the serving context (vLLM log, bench results).
	Serving []MetricDelta `json:"serving,omitempty"`
	// Service compares the service profiles (MS Service Profiler): the
	// service.* metrics of each side's service section.
	Service []MetricDelta `json:"service,omitempty"`
	// Notes are facts about the comparison (ranks on one side only, ...).
	Notes []string `json:"notes,omitempty"`
	// Unavailable says why a part could not be compared.
	Unavailable map[string]string `json:"unavailable"`
	// Run is what the writers read of the run that writes them: never
	// saved.
	Run RunInfo `json:"-"`
}

// RunInfo is the options of the diff run that writes a comparison:
// AllMetrics (--all) lists unchanged metrics too in the text; Version is
// the npuprof that compared, in the HTML footer.
type RunInfo struct {
	AllMetrics bool
	Version    string
	// Lang is the language of the text and the page (--lang: en or zh).
	Lang string
	// Width is the text's width in columns (COLUMNS or the terminal's); 0:
	// the text's lines are as wide as their rows.
	Width int
	// ASCIIUnits spells µs as us in the text (check --baseline's
	// comparison, part of a summary on a locale that is not UTF-8:
	// results.TextOptions.ASCIIUnits).
	ASCIIUnits bool
}

// Metric returns the overall delta of one metric.
func (r *Result) Metric(name string) (MetricDelta, bool) {
	i := sort.Search(len(r.Overall), func(i int) bool { return r.Overall[i].Metric >= name })
	if i < len(r.Overall) && r.Overall[i].Metric == name {
		return r.Overall[i], true
	}
	return MetricDelta{}, false
}

// Step returns the per-step delta of one quantity.
func (r *Result) Step(q string) (StepDelta, bool) {
	for _, s := range r.Steps {
		if s.Quantity == q {
			return s, true
		}
	}
	return StepDelta{}, false
}

// Finding returns the delta of one rule's finding.
func (r *Result) Finding(rule string) (FindingDelta, bool) {
	for _, f := range r.Findings {
		if f.Rule == rule {
			return f, true
		}
	}
	return FindingDelta{}, false
}

// Collective returns the delta of one (type, group).
func (r *Result) Collective(typ, group string) (CollectiveDelta, bool) {
	for _, c := range r.Collectives {
		if c.Type == typ && c.Group == group {
			return c, true
		}
	}
	return CollectiveDelta{}, false
}

// StepQuantities are the per-step quantities compared, in display order.
var StepQuantities = []string{"window", "computing", "communication", "communication_not_overlapped", "free"}

// StepChange is a predicted and a measured decode step-time change (%),
// with the ratio measured / predicted; the step time is decode.step.time_us
// (the mean time from one decode step's start to the next) on both sides.
// kept: the diff document's own declaration; alike the analysis contract's types in shape, not in logic
type StepChange struct {
	PredictedPct *float64 `json:"predicted_step_time_change_pct"`
	MeasuredPct  *float64 `json:"measured_step_time_change_pct"`
	// Ratio is MeasuredPct / PredictedPct; absent on a finding whose
	// measured change also holds other fixes (MeasuredWith), and on a plan
	// not applied exactly (Applied.WholePlan false).
	Ratio *float64 `json:"measured_over_predicted,omitempty"`
	// UpperBound: the prediction is an upper bound of the gain.
	UpperBound bool `json:"upper_bound,omitempty"`
	// Unavailable says why the measured change is missing.
	Unavailable string `json:"unavailable,omitempty"`
	// NotCredited is, on a resolved finding's step_time, why the measured
	// change is not credited to its fix: none of the ledger entries its
	// fix removes shrank (no Ratio then, and no other finding's
	// measured_with names it).
	NotCredited string `json:"not_credited,omitempty"`
	// MeasuredWith is, on a resolved finding's step_time when two or more
	// resolved findings carried a prediction, the other ones (rule ids,
	// sorted): the measured change holds their fixes too, so it is no
	// measure of this finding's prediction and there is no Ratio; the plan
	// row compares the fixes together.
	MeasuredWith []string `json:"measured_with,omitempty"`
	// Applied is, on the plan, which of the plan's steps the measured
	// change holds: present unless the resolved findings that carried a
	// prediction are the plan's one step. When they are not exactly the
	// plan's steps there is no Ratio (see PlanApplied.Ratio).
	Applied *PlanApplied `json:"applied,omitempty"`
}

// PlanApplied says which fixes of the before side's plan the after side
// shows applied: a plan step is applied when its finding was resolved.
type PlanApplied struct {
	// Steps are the plan's steps whose finding was resolved, in plan order.
	Steps []string `json:"steps"`
	// NotApplied are the plan's steps whose finding persists (the fix was
	// not applied, or did not clear the finding), in plan order.
	NotApplied []string `json:"steps_not_applied"`
	// OutsidePlan are the resolved findings that carried a prediction but
	// are no plan step (left out of it), sorted.
	OutsidePlan []string `json:"outside_plan"`
	// WholePlan: the resolved findings that carried a prediction are
	// exactly the plan's steps, so the plan's prediction is the one to
	// compare the measured change with.
	WholePlan bool `json:"whole_plan"`
	// PredictedPct is, when Steps are the plan's first steps (at least
	// one, not all) and OutsidePlan is empty, their cumulative predicted
	// step-time change (%): the plan steps' step_time_change_pct
	// compounded, rounded to 0.01. Absent otherwise: no plan number
	// predicts another subset of its steps.
	PredictedPct *float64 `json:"predicted_step_time_change_pct,omitempty"`
	// Ratio is the plan row's measured change over PredictedPct.
	Ratio *float64 `json:"measured_over_predicted,omitempty"`
	// UpperBound: one of the applied steps is an upper bound, so is
	// PredictedPct.
	UpperBound bool `json:"upper_bound,omitempty"`
}

// StepTimeSide is one side's step time per step.
type StepTimeSide struct {
	// MeanUs is the mean step time per step; MinUs, MaxUs and StdevUs
	// its spread over the steps (nil when only a mean is known).
	MeanUs  float64  `json:"mean_us"`
	MinUs   *float64 `json:"min_us"`
	MaxUs   *float64 `json:"max_us"`
	StdevUs *float64 `json:"stdev_us"`
	// Steps is how many steps the mean is over; From where the step
	// times come from.
	Steps int    `json:"steps"`
	From  string `json:"from"`
}

// StepTimeDelta is the step time per step before and after.
type StepTimeDelta struct {
	Before StepTimeSide `json:"before"`
	After  StepTimeSide `json:"after"`
	// Pct is the change of the mean, in percent.
	Pct *float64 `json:"pct"`
}

// LedgerDelta is one step-time ledger entry (ledger.<cause>.time_us, per
// step on the critical rank) before and after.
type LedgerDelta struct {
	Entry string `json:"entry"`
	UsChange
	// Shrank: the entry shrank by at least LedgerShrinkShare of the
	// before side's step time.
	Shrank bool `json:"shrank"`
	// Rules are the before side's findings whose fix removes this entry.
	Rules []string `json:"rules,omitempty"`
}

// LedgerShrinkShare is the least decrease of a ledger entry, as a share of
// the before side's step time, that counts as shrinking: smaller changes
// are within what two captures of one deployment differ by.
const LedgerShrinkShare = 0.005
