package results

// What happened to each rule and budget (the document's "rules"), the
// facts the rules saw ("facts") and the facts the deployment and the
// profile disagree on ("context.conflicts").

// Rule outcomes: every rule ends up in exactly one.
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
const (
	StatusFired        = "fired"
	StatusClear        = "clear"
	StatusNotEvaluated = "not_evaluated"
	StatusFailed       = "failed"
	// StatusNotApplicable: the rule's applies_to excludes this profile
	// (its workload, phase, version or model); the reason says which.
	StatusNotApplicable = "not_applicable"
	// StatusDisabled: switched off by --disable, --only, --no-builtin or
	// the same keys in a rules file.
	StatusDisabled = "disabled"
)

// Outcome is what happened to one rule or budget.
type Outcome struct {
	Rule     string `json:"rule"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Severity string `json:"severity,omitempty"`
}

// FactValue is one known fact and where it came from. The JSON document
// lists them under "facts".
type FactValue struct {
	Name   string `json:"name"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// Conflict is a fact the script (or --fact) and the profile disagree on.
type Conflict struct {
	Fact          string `json:"fact"`
	Profile       any    `json:"profile"`
	ProfileSource string `json:"profile_source"`
	Given         any    `json:"given"`
	GivenSource   string `json:"given_source"`
	// Used is the value the rules use: the profile's, what ran (a --fact
	// that says otherwise does not change it either).
	Used any `json:"used"`
}
