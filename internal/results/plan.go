package results

import "fmt"

// The fix plan and the predictions the plan package makes of the findings'
// fixes: the document's "plan" and each finding's "predicted".

// BeforeAfter is a step time before and after a change (µs per decode
// step).
type BeforeAfter struct {
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

// StepChange is a predicted change of the decode step: its time (the mean
// time from one decode step's start to the next) before and after, that
// change and the decode throughput change at the same batch. UpperBound:
// the effect could not be replayed exactly and this is the most it can
// gain. A fix's prediction, a plan step and the plan's total each hold
// one (embedded: its keys are theirs).
type StepChange struct {
	StepTimeUs          BeforeAfter `json:"step_time_us"`
	StepTimeChangePct   float64     `json:"step_time_change_pct"`
	ThroughputChangePct float64     `json:"throughput_change_pct"`
	UpperBound          bool        `json:"upper_bound"`
}

// Prediction is what a fix alone (with what it requires) is predicted to
// change on the measured profile, and on what basis.
type Prediction struct {
	StepChange
	Basis string `json:"basis"`
}

// Plan is one fix plan: the fixes ordered by predicted gain and applied
// cumulatively (each step predicted on the timeline the earlier ones
// left), what was left out and why, and the combined changes
// (docs/json.md, "plan").
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type Plan struct {
	Steps []PlanStep `json:"steps"`
	// StepChange is the total: its UpperBound is set when at least one
	// step is an upper bound.
	StepChange
	LeftOut     []LeftOut   `json:"left_out,omitempty"`
	DeployDiff  string      `json:"deploy_diff"`
	CodePatches []CodePatch `json:"code_patches,omitempty"`
	// HostTuning is the host OS tuning offered beside the plan when the
	// host holds the device back: optional commands, never in DeployDiff.
	HostTuning *HostTuning `json:"host_tuning,omitempty"`
	// WhatIf is the decode replayed at the target concurrency (--fact
	// concurrency, or vLLM's) when the capture ran a smaller batch, and
	// the rules judged there; nil without a larger target.
	WhatIf *WhatIf `json:"whatif,omitempty"`
}

// WhatIf is the target-concurrency what-if: the capture's decode steps
// rebatched to the batch one replica runs at the target concurrency, the
// rules evaluated again on the metrics the replay predicts there, and the
// rules whose verdict or predicted gain changes (docs/rules.md, "The
// target-concurrency what-if").
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type WhatIf struct {
	// Concurrency is the target: concurrent requests over every replica;
	// Source says where it came from.
	Concurrency int    `json:"concurrency"`
	Source      string `json:"source"`
	// Replicas are the data-parallel replicas the concurrency is shared
	// over; Batch is one replica's decode batch at the target (rounded
	// up, at most --max-num-seqs) and BatchObserved the capture's.
	Replicas      int `json:"replicas"`
	Batch         int `json:"batch"`
	BatchObserved int `json:"batch_observed"`
	// StepTimeUs is the measured decode step time and the one predicted at
	// the target batch (µs); the throughput change counts the batch's
	// tokens (tokens/s is batch over step time).
	StepTimeUs          BeforeAfter `json:"step_time_us"`
	ThroughputChangePct float64     `json:"throughput_change_pct"`
	// Metrics are the metrics the replay predicts at the target, which
	// the rules read there in place of the measured ones (every other
	// metric keeps its measured value).
	Metrics map[string]float64 `json:"metrics"`
	// Findings are the rules whose verdict or predicted gain differs at
	// the target, in the order of the rule set.
	Findings []WhatIfFinding `json:"findings"`
	Basis    string          `json:"basis"`
}

// WhatIfFinding is one rule judged now and at the target concurrency:
// whether it fires, and its fix's replayed step-time change (absent when
// its fix is not replayed there), with a sentence that says what changes.
// kept: a contract type's own declaration, alike other contract types in shape only
type WhatIfFinding struct {
	Rule                    string   `json:"rule"`
	FiredNow                bool     `json:"fired_now"`
	FiredAtTarget           bool     `json:"fired_at_target"`
	StepTimeChangePctNow    *float64 `json:"step_time_change_pct_now,omitempty"`
	StepTimeChangePctTarget *float64 `json:"step_time_change_pct_at_target,omitempty"`
	Note                    string   `json:"note"`
}

// HostTuning is optional host OS tuning (root, on every node), apart from
// the plan's deploy diff: why it is offered (Reason, the JSON's "why": a
// message composed from data, translated as one; a rule's Why is its
// own text), and its commands.
type HostTuning struct {
	Reason string     `json:"why"`
	Lines  []HostLine `json:"lines"`
}

// HostLine is one host tuning command, what it does, and whether the
// --deploy script already runs it.
type HostLine struct {
	Command  string `json:"command"`
	What     string `json:"what"`
	InScript bool   `json:"in_script"`
}

// PlanStep is one fix of the plan, predicted on the timeline the earlier
// steps left.
type PlanStep struct {
	Rule string `json:"rule"`
	StepChange
	Requires []string `json:"requires"`
	Needs    string   `json:"needs,omitempty"`
	Basis    string   `json:"basis,omitempty"`
}

// LeftOut is a fired rule's fix the plan does not hold, and why.
type LeftOut struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// CodePatch is a unified diff of one source file.
type CodePatch struct {
	File string `json:"file"`
	Diff string `json:"diff"`
}

// Impossible says why the plan holds a step time that cannot be ("" when
// every step is possible): a step time not finite or not positive, a step
// that makes the step slower, or a total outside -100%..0%.
func (p *Plan) Impossible() string {
	bad := func(v float64) bool { return !(v > 0) || v > 1e300 }
	for i, s := range p.Steps {
		switch {
		case bad(s.StepTimeUs.Before) || bad(s.StepTimeUs.After):
			return fmt.Sprintf("step %d (%s) goes from %v to %v µs: not a step time", i+1, s.Rule, s.StepTimeUs.Before, s.StepTimeUs.After)
		case s.StepTimeUs.After > s.StepTimeUs.Before:
			return fmt.Sprintf("step %d (%s) makes the step slower (%v -> %v µs)", i+1, s.Rule, s.StepTimeUs.Before, s.StepTimeUs.After)
		}
	}
	if bad(p.StepTimeUs.Before) || bad(p.StepTimeUs.After) || !(p.StepTimeChangePct >= -100 && p.StepTimeChangePct <= 0) {
		return fmt.Sprintf("its total goes from %v to %v µs (%v%%): not a step time change", p.StepTimeUs.Before, p.StepTimeUs.After, p.StepTimeChangePct)
	}
	return ""
}
