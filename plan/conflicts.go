package plan

import (
	"fmt"

	"github.com/npuprof/npuprof/fix"
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
