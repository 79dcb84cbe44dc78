package plan

import (
	"fmt"

	"github.com/npuprof/npuprof/internal/fix"
)

// editConflicts leaves out, of two predicted fixes whose actions edit one
// target differently, the one that turns off a JSON key the other keeps on
// (a feature the other fix needs: the shared-expert overlap #5962 splits
// around dispatch and combine), else the one that gains less.
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
			if off, key, ok := turnsOff(cs); ok {
				loser, winner := f, q
				if q.Rule == off {
					loser, winner = q, f
				}
				left[loser.Rule] = fmt.Sprintf("it turns %s off, which %s's fix needs on", key, winner.Rule)
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

// turnsOff finds, among conflicts, a JSON key one action sets false and the
// other true: the rule turning it off and the key.
func turnsOff(cs []fix.Conflict) (off, key string, ok bool) {
	for _, c := range cs {
		if c.Target.Of != "json" {
			continue
		}
		a, b := fix.JSONValue(c.A, c.Target.Key), fix.JSONValue(c.B, c.Target.Key)
		switch {
		case a == "false" && b == "true":
			return c.A.Rule, c.Target.String(), true
		case a == "true" && b == "false":
			return c.B.Rule, c.Target.String(), true
		}
	}
	return "", "", false
}
