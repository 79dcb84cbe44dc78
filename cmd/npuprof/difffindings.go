package main

import (
	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/rules"
)

// diffFindings runs the rules on one side of a diff. Until the rule engine
// lands there are none.
func diffFindings(res *analysis.Result) ([]rules.Finding, error) {
	return nil, nil
}
