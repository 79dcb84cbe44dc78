// Package rules maps analysis results to findings: the change to make and
// what it is estimated to save. This file holds the types every renderer
// reads; the rule engine fills them.
package rules

import "github.com/npuprof/npuprof/deploy"

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
}

// Finding is one rule that fired.
type Finding struct {
	Rule     string     `json:"rule"`
	Severity string     `json:"severity"`
	Title    string     `json:"title"`
	Ranks    []int      `json:"ranks"`
	Evidence []Evidence `json:"evidence"`
	Fix      string     `json:"fix"`
	Diff     string     `json:"diff,omitempty"`
	SavingUs float64    `json:"saving_us"`
	Docs     string     `json:"docs,omitempty"`
	// Edits are the deployment-script changes behind Diff.
	Edits []deploy.Edit `json:"-"`
}

// Severities lists the severities, lowest first.
var Severities = []string{SeverityInfo, SeverityLow, SeverityMedium, SeverityHigh}
