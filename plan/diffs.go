package plan

import (
	"fmt"

	"github.com/npuprof/npuprof/fix"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/rules"
)

// editConflicts leaves out, of two predicted fixes whose actions edit one
// target differently, the one that gains less.
func (b *builder) editConflicts(left map[string]string) {
	fs := b.rep.Findings
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			f, q := &fs[i], &fs[j]
			if f.Predicted == nil || q.Predicted == nil || left[f.Rule] != "" || left[q.Rule] != "" {
				continue
			}
			cs := fix.Conflicts(append(append([]fix.Action{}, f.Actions...), q.Actions...))
			if len(cs) == 0 {
				continue
			}
			loser, winner := q, f
			if q.Predicted.StepTimeChangePct < f.Predicted.StepTimeChangePct {
				loser, winner = f, q
			}
			left[loser.Rule] = fmt.Sprintf("its edits conflict with %s's (%s)", winner.Rule, cs[0].Target)
		}
	}
}

// diffs sets the plan's deploy diff (the report's combined diff) from the
// actions of its steps in order, and gives each finding that requires
// another fix a diff that holds that fix's edits first.
func (b *builder) diffs(p *results.Plan, ed rules.Editor) {
	var lists [][]fix.Action
	for _, st := range p.Steps {
		lists = append(lists, b.byRule[st.Rule].Actions)
	}
	if all := fix.Combine(lists...); scriptEdits(all) {
		if d, err := ed.DiffActions(all); err == nil {
			p.DeployDiff = d
		}
	}
	b.rep.Diff = p.DeployDiff
	for i := range b.rep.Findings {
		f := &b.rep.Findings[i]
		var req [][]fix.Action
		for _, r := range f.Requires {
			if q := b.byRule[r.Rule]; q != nil {
				req = append(req, q.Actions)
			}
		}
		if len(req) == 0 || !scriptEdits(f.Actions) {
			continue
		}
		if d, err := ed.DiffActions(fix.Combine(append(req, f.Actions)...)); err == nil {
			f.Diff, f.DiffError = d, ""
		}
	}
}

func scriptEdits(as []fix.Action) bool {
	for _, a := range as {
		if a.EditsScript() {
			return true
		}
	}
	return false
}
