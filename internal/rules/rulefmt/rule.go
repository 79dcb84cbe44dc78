package rulefmt

import (
	"github.com/expr-lang/expr/vm"
	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/fix"
)

// The loaded rule: what a rule file says, checked and compiled, for the
// engine (package rules) to evaluate.

// Rule is a loaded, compiled rule.
type Rule struct {
	ID string
	// Summary is the rule's title without numbers ("Cumsum kernels in the
	// MoE routing path"), for lists and SARIF descriptions; "" when the
	// file gives none.
	Summary    string
	Title      *Template
	Severity   string // high, medium, low, info, or auto
	AppliesTo  AppliesTo
	When       *Expr
	Saving     *Expr // nil: no estimate
	Ranks      *Expr // nil: every rank
	Evidence   []EvidenceSpec
	Fix        *Template
	Edits      []EditSpec
	Docs       string
	Why        string
	Thresholds map[string]float64
	// Vars are named expressions, usable by name in every other expression.
	Vars []Var
	// Transforms are the fix as typed transforms of the decode-step
	// timeline; Requires, Conflicts and Supersedes relate it to other
	// rules' fixes; Needs are the versions it needs (plan.go).
	Transforms                      []TransformSpec
	Requires, Conflicts, Supersedes []RefSpec
	Needs                           []NeedSpec
	// Claims are the step-time ledger entries the fix removes (claims.go).
	Claims []ClaimSpec
	// Patches are code changes --source turns into diffs.
	Patches []fix.PatchSpec
	// File and Line locate the rule (its id) for errors and SARIF.
	File string
	Line int
	// Builtin: embedded in npuprof.
	Builtin bool
	// zh are the rule's Chinese texts (its zh: block), nil when it gives
	// none; a text the block leaves out is the English one. A built-in
	// rule's are in builtin/zh/FILE, read on first use (zhLazy): an
	// English run does not decode them.
	zh     *Texts
	zhLazy *lazy[*Texts]
}

// Texts are a rule's texts in another language than English: the same
// fields, templated exactly like the English ones (the same vars,
// thresholds, facts and functions).
type Texts struct {
	Summary, Why string
	Title, Fix   *Template
	// Notes are the evidence notes, by the evidence item's metric.
	Notes map[string]*Template
}

// Var is a named expression of a rule.
type Var struct {
	Name   string
	Source string
	node   *yaml.Node
	idents []string // the identifiers Source names (the vars it uses)
	expr   *Expr    // compiled once; what names the var reads its value
}

// VarProgram returns the compiled expression of the rule's var i: an
// expression naming the var reads its value through the __var_ function
// of its type (VarFuncs), which the engine answers by running this
// program once per evaluation of the expression.
func (r *Rule) VarProgram(i int) (*vm.Program, error) { return r.Vars[i].expr.Program() }

// AppliesTo restricts a rule to deployments; an unknown fact never
// excludes a rule.
type AppliesTo struct {
	// VllmAscend is a version range such as ">=v0.13.0rc2 <v0.25.1rc1".
	VllmAscend string
	Phase      []string
	// Workload lists the workloads (vllm, training, unknown) the rule is
	// for; a rule without it applies to every workload.
	Workload []string
	// ModelFamily matches fact.model case-insensitively by substring.
	ModelFamily []string
	// Dispatcher lists the MoE dispatcher paths (fact moe.dispatcher:
	// allgather, mc2, fused_mc2, alltoall) the rule covers; none: every path.
	Dispatcher []string
}

// EvidenceSpec is one measured number a finding shows.
type EvidenceSpec struct {
	Metric string
	// Of is mean (default), max, min, sum or each (one entry per rank).
	Of   string
	Note *Template
}

// EditSpec is a deployment-script change, rendered when the rule fires.
type EditSpec struct {
	Op     string
	Name   string
	Value  *Template
	Create bool
	If     *Expr
}

// Budget is a baseline budget such as "hccl.allgather.time_us <= baseline * 1.05".
type Budget struct {
	ID       string
	Metric   string
	Op       string
	Bound    *Expr // float64, with `baseline` bound to the saved value
	Text     string
	Severity string
	File     string
	Line     int
}

// Set is every loaded rule and budget.
type Set struct {
	Rules   []*Rule
	Budgets []*Budget
	// disabled: the rules and budgets a Selection switched off, with why
	disabled map[string]string
	// selections of the rule files, applied once every file is loaded
	pending []Selection
}

// Lookup returns the rule with id.
func (s *Set) Lookup(id string) *Rule {
	for _, r := range s.Rules {
		if r.ID == id {
			return r
		}
	}
	return nil
}
