package rules

import (
	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/results"
)

// Editor turns script actions into a unified diff of the deployment script
// (*deploy.Script is one). Rules never edit a script: the diffs are made
// after evaluation, from the findings' actions.
type Editor interface {
	DiffActions(actions []fix.Action) (string, error)
}

// Patcher makes a rule's code change a diff of the user's source tree
// (codepatch.Make over --source).
type Patcher func(fix.PatchSpec) (results.CodePatch, error)

// ApplyFixes is the one step that turns the findings' actions into what a
// user applies, run once after the plan (r.Plan, nil when none) is built:
//
//   - each finding's diff of the deployment script (ed) from its actions,
//     or DiffError when the script cannot take them (the finding stands,
//     without a diff); with a plan, a finding that requires other fixes
//     gets a diff holding their edits first;
//   - the combined deploy diff (r.Diff and the plan's deploy diff): the
//     plan's steps' actions in order when there is a plan, else those of
//     every finding whose own diff could be made; one that cannot be made
//     is a failed "deploy-diff" outcome;
//   - each finding's code patches of the source tree (patch), or
//     CodePatchError (its fix text stands); the plan's are its steps'.
//
// Without a script (ed nil) nothing is diffed; without patch nothing is
// patched.
func (r *Report) ApplyFixes(ed Editor, patch Patcher) {
	if ed != nil {
		r.findingDiffs(ed)
		r.combinedDiff(ed)
	}
	if patch != nil {
		r.codePatches(patch)
	}
}

// findingDiffs gives each finding that edits the script its diff.
func (r *Report) findingDiffs(ed Editor) {
	byRule := map[string]*Fired{}
	for i := range r.Findings {
		byRule[r.Findings[i].Rule] = &r.Findings[i]
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if !editsScript(f.Actions) {
			continue
		}
		if d, err := ed.DiffActions(f.Actions); err != nil {
			f.DiffError = err.Error()
		} else {
			f.Diff = d
		}
	}
	if r.Plan == nil {
		return
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		var req [][]fix.Action
		for _, q := range f.Requires {
			if x := byRule[q.Rule]; x != nil {
				req = append(req, x.Actions)
			}
		}
		if len(req) == 0 || !editsScript(f.Actions) {
			continue
		}
		if d, err := ed.DiffActions(fix.Combine(append(req, f.Actions)...)); err == nil {
			f.Diff, f.DiffError = d, ""
		}
	}
}

// combinedDiff sets the report's (and the plan's) deploy diff.
func (r *Report) combinedDiff(ed Editor) {
	var all []fix.Action
	if r.Plan != nil {
		var lists [][]fix.Action
		for _, st := range r.Plan.Steps {
			for _, f := range r.Findings {
				if f.Rule == st.Rule {
					lists = append(lists, f.Actions)
				}
			}
		}
		all = fix.Combine(lists...)
	} else {
		for _, f := range r.Findings {
			if f.DiffError == "" {
				all = append(all, f.Actions...)
			}
		}
	}
	if !editsScript(all) {
		return
	}
	d, err := ed.DiffActions(all)
	if err != nil {
		r.Outcomes = append(r.Outcomes, results.Outcome{Rule: "deploy-diff", Status: results.StatusFailed, Reason: err.Error()})
	}
	r.Diff = d
	if r.Plan != nil {
		r.Plan.DeployDiff = d
	}
}

// codePatches gives each finding its code patches and the plan its steps'.
func (r *Report) codePatches(patch Patcher) {
	for i := range r.Findings {
		f := &r.Findings[i]
		for _, ps := range f.Patches {
			cp, err := patch(ps)
			if err != nil {
				f.CodePatchError = "--source: " + err.Error() + "; apply the fix by hand as its text says"
				f.CodePatches = nil
				break
			}
			f.CodePatches = append(f.CodePatches, cp)
		}
	}
	if r.Plan == nil {
		return
	}
	for _, st := range r.Plan.Steps {
		for _, f := range r.Findings {
			if f.Rule == st.Rule {
				r.Plan.CodePatches = append(r.Plan.CodePatches, f.CodePatches...)
			}
		}
	}
}

// Actions returns the actions of every finding, in finding order, each
// change once (fix.Combine).
func (r *Report) Actions() []fix.Action {
	lists := make([][]fix.Action, 0, len(r.Findings))
	for _, f := range r.Findings {
		lists = append(lists, f.Actions)
	}
	return fix.Combine(lists...)
}

func editsScript(actions []fix.Action) bool {
	for _, a := range actions {
		if a.EditsScript() {
			return true
		}
	}
	return false
}
