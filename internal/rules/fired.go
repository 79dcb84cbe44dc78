package rules

import (
	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/results"
)

// Fired is a rule that fired: its finding, as the document gets it, and
// the rule engine's working state for it, which the plan and the fix step
// (ApplyFixes) read and the document never carries.
type Fired struct {
	results.Finding
	// Actions are the changes the finding asks for, as data: the
	// finding's Diff is their script edits applied to the deployment
	// script (ApplyFixes, after the plan).
	Actions []fix.Action
	// Transforms, Requires, Conflicts, Supersedes and Needs are the rule's
	// plan fields as they hold for this finding; NeedsUnmet says why a
	// known version is too low for the fix (plan.go).
	Transforms                      []Transform
	Requires, Conflicts, Supersedes []Ref
	Needs, NeedsUnmet               string
	// Claims are the ledger entries the fix removes (claims.go).
	Claims []Claim
	// Patches are the rule's code changes, made diffs of the --source
	// tree (the finding's CodePatches) by ApplyFixes.
	Patches []fix.PatchSpec
}

// Transform is a fired rule's transform, its values evaluated.
type Transform struct {
	Kind, Op, After, Group string
	To                     int
}

// Ref is a relation of a fired rule to another rule.
type Ref struct {
	Rule   string
	Reason string
}

// Contract returns the findings as the document holds them, in order.
func (r *Report) Contract() []results.Finding {
	out := make([]results.Finding, len(r.Findings))
	for i := range r.Findings {
		out[i] = r.Findings[i].Finding
	}
	return out
}
