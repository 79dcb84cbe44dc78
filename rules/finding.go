// Package rules maps analysis results to findings: the change to make and
// what it is estimated to save. The findings, outcomes and plan it fills
// are the results document's types (package results).
package rules

import "github.com/npuprof/npuprof/results"

// The results document's types the rule engine fills, under their former
// names in this package (one step of moving them to package results).
type (
	Finding      = results.Finding
	Evidence     = results.Evidence
	PartialInput = results.PartialInput
	Transform    = results.Transform
	Ref          = results.Ref
	PatchSpec    = results.PatchSpec
	BeforeAfter  = results.BeforeAfter
	Prediction   = results.Prediction
	Plan         = results.Plan
	PlanStep     = results.PlanStep
	LeftOut      = results.LeftOut
	CodePatch    = results.CodePatch
	Outcome      = results.Outcome
	FactValue    = results.FactValue
	Conflict     = results.Conflict
)

const (
	SeverityInfo   = results.SeverityInfo
	SeverityLow    = results.SeverityLow
	SeverityMedium = results.SeverityMedium
	SeverityHigh   = results.SeverityHigh

	StatusFired         = results.StatusFired
	StatusClear         = results.StatusClear
	StatusNotEvaluated  = results.StatusNotEvaluated
	StatusFailed        = results.StatusFailed
	StatusNotApplicable = results.StatusNotApplicable
	StatusDisabled      = results.StatusDisabled

	UsedInWhen     = results.UsedInWhen
	UsedInSaving   = results.UsedInSaving
	UsedInSeverity = results.UsedInSeverity
	UsedInRanks    = results.UsedInRanks
	UsedInEvidence = results.UsedInEvidence
	UsedInText     = results.UsedInText
)

var (
	Severities   = results.Severities
	SeverityRank = results.SeverityRank
	Whole        = results.Whole
)

var usedInOrder = []string{UsedInWhen, UsedInSaving, UsedInSeverity, UsedInRanks, UsedInEvidence, UsedInText}
