package rules

import (
	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/facts"
)

// The deployment facts the rules read are package facts; these names are
// the engine's view of them, and its callers'.
type (
	FactSet    = facts.Set
	Deployment = facts.Deployment
)

// NewFactSet returns an empty set (facts.NewSet).
func NewFactSet() *FactSet { return facts.NewSet() }

// BuildFacts assembles the facts: inferred from the profile, then the
// deployment script (nil: none), then --fact overrides (facts.Build).
func BuildFacts(res *analysis.Result, script *Deployment, overrides []string) (*FactSet, error) {
	return facts.Build(res, script, overrides)
}

// InferFacts derives what the profile itself says (facts.Infer).
func InferFacts(res *analysis.Result) []results.FactValue { return facts.Infer(res) }

// NewDeployment makes the Deployment of a script from its facts and its
// invalid ones (facts.NewDeployment).
func NewDeployment[F ~struct {
	Name   string
	Value  any
	Source string
}](path string, given, invalid []F) *Deployment {
	return facts.NewDeployment(path, given, invalid)
}
