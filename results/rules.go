package results

import "github.com/npuprof/npuprof/rules"

// The rule evaluation's types the document holds, under the names the
// writers use (package render names no rules type but through these).
type (
	Finding     = rules.Finding
	Evidence    = rules.Evidence
	Prediction  = rules.Prediction
	BeforeAfter = rules.BeforeAfter
	Plan        = rules.Plan
	Outcome     = rules.Outcome
	FactValue   = rules.FactValue
)

// Severities and outcome statuses, as the document spells them.
const (
	SeverityInfo   = rules.SeverityInfo
	SeverityLow    = rules.SeverityLow
	SeverityMedium = rules.SeverityMedium
	SeverityHigh   = rules.SeverityHigh

	StatusFired         = rules.StatusFired
	StatusClear         = rules.StatusClear
	StatusNotEvaluated  = rules.StatusNotEvaluated
	StatusFailed        = rules.StatusFailed
	StatusNotApplicable = rules.StatusNotApplicable
	StatusDisabled      = rules.StatusDisabled
)

// SeverityRank orders severities (higher is worse); unknown is 0.
func SeverityRank(s string) int { return rules.SeverityRank(s) }

// RuleInfo describes one rule or budget of the evaluation (the SARIF
// log's rule list): Severity "auto" for a rule whose saving sets it;
// Budget is a budget's text ("" for a rule); Disabled says why it is
// switched off ("" when it is on).
type RuleInfo struct {
	ID, Severity, Summary, Why, Fix string
	Budget, Disabled                string
}
