package main

import (
	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/results/build"
	"github.com/npuprof/npuprof/rules"
)

// diffDocument runs the rules (built-in and --rules files) on one analyzed
// side of a diff and returns its document, with findings, rule outcomes
// and facts (the serving context included), as analyze --format json
// would write it.
func diffDocument(res *analysis.Result, ruleFiles []string, sel selectOptions, lf langFlag) (*results.Document, *rules.Report, error) {
	set, err := loadRules(ruleFiles, sel)
	if err != nil {
		return nil, nil, err
	}
	rep, facts, err := evaluateRules(res, set, &ruleOptions{RuleFiles: ruleFiles, langFlag: lf}, nil)
	if err != nil {
		return nil, nil, err
	}
	return build.NewContract(res, rep, facts), rep, nil
}
