package rules

import (
	"github.com/npuprof/npuprof/fix"
	"github.com/npuprof/npuprof/results"
)

// Editor turns script actions into a unified diff of the deployment script
// (*deploy.Script is one). Rules never edit a script: the diffs are made
// after evaluation, from the findings' actions.
type Editor interface {
	DiffActions(actions []fix.Action) (string, error)
}

// AttachDiffs fills each finding's Diff from its actions (DiffError when
// the script cannot take them: the finding stands, without a diff), then
// the report's combined Diff from the actions of every finding that has
// one, in finding order; a combined diff that cannot be made is a failed
// "deploy-diff" outcome. Without a script (ed nil) nothing changes.
func (r *Report) AttachDiffs(ed Editor) {
	if ed == nil {
		return
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
	var all []fix.Action
	for _, f := range r.Findings {
		if f.DiffError == "" {
			all = append(all, f.Actions...)
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
