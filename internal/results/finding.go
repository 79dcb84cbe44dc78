package results

// The findings the rules produce (package rules fills them, package plan
// adds their predictions and code patches): the document's "findings".

// Severity levels, lowest first.
const (
	SeverityInfo   = "info"
	SeverityLow    = "low"
	SeverityMedium = "medium"
	SeverityHigh   = "high"
)

// SeverityRank orders severities (higher is worse); unknown is 0.
func SeverityRank(s string) int {
	switch s {
	case SeverityLow:
		return 1
	case SeverityMedium:
		return 2
	case SeverityHigh:
		return 3
	}
	return 0
}

// Evidence is one measured number behind a finding.
type Evidence struct {
	Metric string  `json:"metric"`
	Rank   *int    `json:"rank,omitempty"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit,omitempty"`
	Note   string  `json:"note,omitempty"`
	// PartialRanks are the ranks whose value of Metric, folded into
	// Value, was computed from a file cut short (see Finding.Partial).
	PartialRanks []int `json:"partial_ranks,omitempty"`
}

// Where a finding used a partial metric (PartialInput.UsedIn), in this
// order.
const (
	UsedInWhen     = "when"     // the condition that made the rule fire
	UsedInSaving   = "saving"   // the estimated saving
	UsedInSeverity = "severity" // an auto severity (saving / device window)
	UsedInRanks    = "ranks"    // the ranks the finding names
	UsedInEvidence = "evidence" // an evidence value
	UsedInText     = "text"     // the title, fix or an edit's value
)

// PartialInput is one rank whose metrics a finding read were computed from
// a file cut short (analysis.RankResult.PartialMetrics): each such value
// covers only the complete part of the file and says nothing of the rest.
type PartialInput struct {
	Rank int `json:"rank"`
	// Reason is the rank's partial_reason: the file, where it was cut and
	// what was analyzed.
	Reason string `json:"reason"`
	// Metrics the finding read on this rank, sorted. A cluster metric
	// (skew.*, collectives.*, ...) is listed under every partial rank: it
	// is computed from every rank.
	Metrics []string `json:"metrics"`
	// UsedIn says where: when, saving, severity, ranks, evidence, text.
	UsedIn []string `json:"used_in"`
	// Baseline is true when the rank is one of the --baseline document's
	// (a budget's baseline value, baseline_metric()), not of this capture.
	Baseline bool `json:"baseline,omitempty"`
}

// Finding is one rule that fired.
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type Finding struct {
	Rule     string     `json:"rule"`
	Severity string     `json:"severity"`
	Title    string     `json:"title"`
	Ranks    []int      `json:"ranks"`
	Evidence []Evidence `json:"evidence"`
	Fix      string     `json:"fix"`
	// Diff is the finding's script actions as a unified diff of the
	// deployment script (--deploy), made after the plan (rules' Report.
	// ApplyFixes).
	Diff string `json:"diff,omitempty"`
	// DiffError says why the finding's edits could not be applied to the
	// deployment script (--deploy): the finding stands, without a diff.
	DiffError string `json:"diff_error,omitempty"`
	// SavingUs is the rule's saving estimate, µs per rank over the
	// capture; nil (JSON null) when the rule gives none: it has no saving
	// expression, or one that could not be evaluated (the evidence's
	// saving_us note says why). Never 0 for "not estimated".
	SavingUs *float64 `json:"saving_us"`
	Docs     string   `json:"docs,omitempty"`
	// Partial lists, per rank, the metrics the finding read that were
	// computed from a truncated file; absent when every input was whole.
	Partial []PartialInput `json:"partial,omitempty"`
	// SavingUncertain is true when SavingUs was estimated from at least one
	// partial metric. It is then neither a lower nor an upper bound for the
	// whole capture: a time total over a cut file is too small, but a
	// difference between ranks (mean - min) is too large when the cut rank
	// looks fast (docs/rules.md, "Partial inputs").
	SavingUncertain bool `json:"saving_uncertain,omitempty"`
	// LedgerEntries are the entries of the step-time ledger (the critical
	// rank's, per step) the fix removes, as the rule's claims name them:
	// what its saving is taken from and what bounds it in the plan; absent
	// when the rule claims none or the profile has no ledger.
	LedgerEntries []LedgerEntry `json:"ledger_entries,omitempty"`
	// PlanLeftOut says why the plan does not hold the finding's fix
	// (the plan's left_out reason); absent when it does or there is no plan.
	PlanLeftOut string `json:"plan_left_out,omitempty"`
	// Predicted is the fix alone (with what it requires) replayed on the
	// measured decode steps (package plan); absent when it could not be
	// predicted.
	Predicted *Prediction `json:"predicted,omitempty"`
	// Revisit says, when the plan's what-if judged the finding at a larger
	// target concurrency, that its fix gains nothing at the captured batch
	// and would there ("no gain at batch 1: revisit at 90 concurrent
	// requests, ..."); absent otherwise.
	Revisit string `json:"revisit,omitempty"`
	// CodePatches are the rule's code changes as diffs of the --source
	// tree, CodePatchError why one could not be made (the fix's text
	// stands).
	CodePatches    []CodePatch `json:"code_patches,omitempty"`
	CodePatchError string      `json:"code_patch_error,omitempty"`
}

// Severities lists the severities, lowest first.
var Severities = []string{SeverityInfo, SeverityLow, SeverityMedium, SeverityHigh}

// HasPartial reports whether the finding read any metric computed from a
// file cut short.
func (f *Finding) HasPartial() bool { return len(f.Partial) > 0 }

// PartialRanks returns the ranks of f.Partial, in order.
func (f *Finding) PartialRanks() []int {
	out := make([]int, 0, len(f.Partial))
	for _, p := range f.Partial {
		out = append(out, p.Rank)
	}
	return out
}

// Whole returns the findings that read no partial metric.
func Whole(f []Finding) []Finding {
	var out []Finding
	for _, x := range f {
		if !x.HasPartial() {
			out = append(out, x)
		}
	}
	return out
}

// Saving returns the finding's saving estimate (µs per rank over the
// capture) and whether its rule gave one.
func (f *Finding) Saving() (float64, bool) {
	if f.SavingUs == nil {
		return 0, false
	}
	return *f.SavingUs, true
}

// Estimated is a saving estimate of v µs, for Finding.SavingUs.
func Estimated(v float64) *float64 { return &v }

// LedgerEntry is one entry of the step-time ledger a finding's fix
// removes (docs/json.md, "findings[].ledger_entries").
type LedgerEntry struct {
	// Cause is the ledger cause (ledger.<cause>.time_us): host_gap,
	// stream_wait, peer_wait, collective, compute.moe_experts, ...
	Cause string `json:"cause"`
	// Entry names the part of the cause: the collective ("allreduce@tp"),
	// the stream and kernel awaited ("stream 3 MatMulV2"), the exchange
	// and the peer awaited ("MoeDistributeCombineV2 rank 5 late:
	// compute.moe_experts"); "" the cause whole.
	Entry string `json:"entry,omitempty"`
	// Stream is the stream awaited (stream_wait), Peer the rank awaited
	// (peer_wait).
	Stream *int `json:"stream,omitempty"`
	Peer   *int `json:"peer,omitempty"`
	// Fraction is the part of the entry the fix removes, when below 1.
	Fraction float64 `json:"fraction,omitempty"`
	// TimeUs is the claimed time per step (mean over the ledger's steps),
	// Share its part of ledger.step.time_us, StepsUs per step.
	TimeUs  float64   `json:"time_us"`
	Share   float64   `json:"share"`
	StepsUs []float64 `json:"steps_us"`
}
