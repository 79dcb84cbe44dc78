package plan

import (
	"fmt"
	"math"
	"sort"

	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
)

// plan orders the predicted fixes and applies them cumulatively.
func (b *builder) plan() *results.Plan {
	p := &results.Plan{Steps: []results.PlanStep{}}
	left := b.leftOut()
	var replayable, bounded []*rules.Fired
	for i := range b.rep.Findings {
		f := &b.rep.Findings[i]
		if left[f.Rule] != "" {
			continue
		}
		if f.Predicted == nil {
			if why := b.noPred[f.Rule]; why != "" {
				left[f.Rule] = why
			}
			continue
		}
		if f.Predicted.StepTimeChangePct > 0 {
			left[f.Rule] = fmt.Sprintf("predicted to slow the step (%+.2f%% step time): %s", f.Predicted.StepTimeChangePct, f.Predicted.Basis)
			continue
		}
		if len(f.Transforms) > 0 && b.tl != nil {
			replayable = append(replayable, f)
		} else {
			bounded = append(bounded, f)
		}
	}
	cur, now := b.tl, *b.base
	placed := map[string]bool{}
	for len(replayable) > 0 {
		i, pred, next, fails := b.pick(cur, replayable, placed)
		for _, j := range fails {
			left[replayable[j.i].Rule] = j.why
		}
		if i < 0 {
			break
		}
		f := replayable[i]
		pr := b.prediction(now, pred.BeforeNs, pred.AfterNs, pred.UpperBound, pred.Basis)
		if pr == nil {
			left[f.Rule] = fmt.Sprintf("the replay gave no possible step time after the earlier steps (%g -> %g ns)", pred.BeforeNs, pred.AfterNs)
			replayable = drop(replayable, i, left)
			continue
		}
		pr = b.capReplayed(f, now, pr)
		st := b.step(f, pr)
		p.Steps, placed[f.Rule] = append(p.Steps, st), true
		cur, now = next, st.StepTimeUs.After*1000
		replayable = drop(replayable, i, left)
	}
	for _, f := range replayable {
		if left[f.Rule] == "" {
			left[f.Rule] = "requires a fix the plan cannot hold"
		}
	}
	sort.SliceStable(bounded, func(x, y int) bool {
		return bounded[x].Predicted.StepTimeChangePct < bounded[y].Predicted.StepTimeChangePct
	})
	for _, f := range bounded {
		// only the ledger time no earlier step removed
		avail := 0.0
		if b.ledger != nil {
			avail = b.ledger.avail(f.Claims)
		}
		if !(avail > 0) {
			left[f.Rule] = fmt.Sprintf("the ledger entries it names (%s) were removed by the earlier steps", entriesText(f.Claims))
			continue
		}
		frac, basis, why := b.boundFrac(f, b.notReplayed[f.Rule], avail)
		if why != "" {
			left[f.Rule] = why
			continue
		}
		after := now - frac**b.base
		if !possible(after) || after < 0.01**b.base {
			left[f.Rule] = fmt.Sprintf("its bound (%.1f µs per step) would leave no step after the earlier steps", frac**b.base/1000)
			continue
		}
		if len(p.Steps) > 0 {
			basis = b.stepBoundBasis(f, b.notReplayed[f.Rule], avail, now, after)
		}
		pr := b.prediction(now, now, after, true, basis)
		if pr == nil || pr.StepTimeUs.After >= pr.StepTimeUs.Before {
			left[f.Rule] = "its bound rounds to no gain after the earlier steps"
			continue
		}
		b.ledger.take(f.Claims, avail)
		st := b.step(f, pr)
		p.Steps, now = append(p.Steps, st), st.StepTimeUs.After*1000
	}
	b.total(p, now, left)
	return p
}

// step is a plan step of f with its cumulative prediction.
func (b *builder) step(f *rules.Fired, pr *results.Prediction) results.PlanStep {
	st := results.PlanStep{Rule: f.Rule, StepChange: pr.StepChange, Requires: []string{}, Needs: f.Needs, Basis: pr.Basis}
	for _, r := range f.Requires {
		if b.byRule[r.Rule] != nil {
			st.Requires = append(st.Requires, r.Rule)
		}
	}
	return st
}

// total sets the plan's total and what it left out.
func (b *builder) total(p *results.Plan, now float64, left map[string]string) {
	upper := false
	for _, st := range p.Steps {
		upper = upper || st.UpperBound
	}
	p.StepChange = stepChange(*b.base, now, upper)
	for _, f := range b.rep.Findings {
		if why := left[f.Rule]; why != "" {
			p.LeftOut = append(p.LeftOut, results.LeftOut{Rule: f.Rule, Reason: why})
		}
	}
}

// failure is a candidate that could not be replayed on the current
// timeline.
type failure struct {
	i   int
	why string
}

// pick replays every candidate whose requirements are placed on cur and
// returns the one that leaves the shortest step (-1 when none can go),
// with the timeline it leaves (nil when it is the last candidate: no
// later step is predicted on it).
func (b *builder) pick(cur *replay.Timeline, cands []*rules.Fired, placed map[string]bool) (int, replay.Prediction, *replay.Timeline, []failure) {
	best := -1
	var bp replay.Prediction
	var bt *replay.Timeline
	var fails []failure
	for i, f := range cands {
		if !requiresPlaced(f, placed, b.byRule) {
			continue
		}
		var p replay.Prediction
		var err error
		if run, ok := b.aloneOn[f]; ok && cur == b.tl {
			p, err = run.p, run.err
		} else {
			p, err = replay.PredictStep(cur, b.replayTransforms(f))
		}
		if err != nil {
			fails = append(fails, failure{i, "cannot be replayed after the earlier steps: " + err.Error()})
			continue
		}
		if p.AfterNs > p.BeforeNs {
			// a plan step never makes the step slower
			fails = append(fails, failure{i, fmt.Sprintf("predicted to slow the step (%.1f -> %.1f µs per decode step)", p.BeforeNs/1000, p.AfterNs/1000)})
			continue
		}
		if p.AfterNs == p.BeforeNs && !requiredBy(f, cands) {
			// a plan step never makes the step slower: a fix whose replay
			// predicts no gain is left out, unless a later step needs it
			fails = append(fails, failure{i, fmt.Sprintf("the replay predicts no gain (%.1f -> %.1f µs per decode step)", p.BeforeNs/1000, p.AfterNs/1000)})
			continue
		}
		if best < 0 || p.AfterNs < bp.AfterNs {
			best, bp = i, p
		}
	}
	if best >= 0 && len(cands) > 1 {
		// the winner's timeline made again rather than kept while the
		// other candidates are replayed, and made on cur itself when cur
		// is an earlier step's copy (the plan does not read it again): one
		// transformed copy of every rank's steps at a time, not two
		if cur == b.tl {
			_, bt, _ = replay.Predict(cur, b.replayTransforms(cands[best]))
		} else {
			_, bt, _ = replay.PredictOn(cur, b.replayTransforms(cands[best]))
		}
		if bt != nil {
			// what it edited goes where the measured steps are (a
			// spill file, if any) while the next step is picked
			bt.Spill()
		}
	}
	return best, bp, bt, fails
}

// replayTransforms is f's transforms as the replay's (those it knows).
func (b *builder) replayTransforms(f *rules.Fired) []replay.Transform {
	var ts []replay.Transform
	for _, t := range f.Transforms {
		if rt, err := b.toReplay(t); err == nil {
			ts = append(ts, rt)
		}
	}
	return ts
}

// requiredBy reports whether another candidate requires f.
func requiredBy(f *rules.Fired, cands []*rules.Fired) bool {
	for _, c := range cands {
		for _, r := range c.Requires {
			if c != f && r.Rule == f.Rule {
				return true
			}
		}
	}
	return false
}

// requiresPlaced reports whether every fired rule f requires is placed.
func requiresPlaced(f *rules.Fired, placed map[string]bool, byRule map[string]*rules.Fired) bool {
	for _, r := range f.Requires {
		if byRule[r.Rule] != nil && !placed[r.Rule] {
			return false
		}
	}
	return true
}

// drop removes cands[i] and every candidate left out.
func drop(cands []*rules.Fired, i int, left map[string]string) []*rules.Fired {
	var out []*rules.Fired
	for j, f := range cands {
		if j != i && left[f.Rule] == "" {
			out = append(out, f)
		}
	}
	return out
}

// leftOut decides, before any replay, which predicted fixes the plan
// cannot hold: a known version too low, superseded by another fired fix,
// the smaller gain of two that conflict, or requiring a fix that did not
// fire or is left out.
func (b *builder) leftOut() map[string]string {
	left := map[string]string{}
	in := func(f *rules.Fired) bool { return f != nil && f.Predicted != nil && left[f.Rule] == "" }
	for i := range b.rep.Findings {
		if f := &b.rep.Findings[i]; f.NeedsUnmet != "" {
			left[f.Rule] = f.NeedsUnmet
		}
	}
	for i := range b.rep.Findings {
		f := &b.rep.Findings[i]
		for _, r := range f.Supersedes {
			if q := b.byRule[r.Rule]; in(f) && in(q) {
				left[q.Rule] = fmt.Sprintf("superseded by %s: %s", f.Rule, r.Reason)
			}
		}
	}
	for i := range b.rep.Findings {
		f := &b.rep.Findings[i]
		for _, r := range f.Conflicts {
			q := b.byRule[r.Rule]
			if !in(f) || !in(q) {
				continue
			}
			loser, winner := f, q
			if f.Predicted.StepTimeChangePct < q.Predicted.StepTimeChangePct {
				loser, winner = q, f
			}
			left[loser.Rule] = fmt.Sprintf("conflicts with %s: %s", winner.Rule, r.Reason)
		}
	}
	b.editConflicts(left)
	for changed := true; changed; {
		changed = false
		for i := range b.rep.Findings {
			f := &b.rep.Findings[i]
			for _, r := range f.Requires {
				q := b.byRule[r.Rule]
				if in(f) && !in(q) {
					left[f.Rule] = fmt.Sprintf("requires %s (%s), which the plan does not hold", r.Rule, r.Reason)
					changed = true
				}
			}
		}
	}
	return left
}

// capReplayed caps a replayed step at the ledger entries its fix names
// (when it names any): it removes only what no earlier step removed, and
// takes that from the ledger.
func (b *builder) capReplayed(f *rules.Fired, now float64, pr *results.Prediction) *results.Prediction {
	if b.ledger == nil || len(f.Claims) == 0 {
		return pr
	}
	gain := (pr.StepTimeUs.Before - pr.StepTimeUs.After) * 1000 / *b.base * b.ledger.stepNs // ledger ns per step
	avail := b.ledger.avail(f.Claims)
	if gain <= avail {
		b.ledger.take(f.Claims, math.Max(gain, 0))
		return pr
	}
	b.ledger.take(f.Claims, avail)
	after := now - avail/b.ledger.stepNs**b.base
	capped := b.prediction(now, now, after, true, pr.Basis+fmt.Sprintf("; capped at the ledger entries it names that no earlier step removed (%s, %.1f µs per step): an upper bound", entriesText(f.Claims), avail/1000))
	if capped == nil {
		return pr
	}
	return capped
}

// order sorts the findings by the plan: the plan's steps in plan order
// (by their predicted change), then the other findings with a prediction
// by its change, then the rest as they were (by saving); each finding the
// plan left out says why (plan_left_out).
func order(rep *rules.Report) {
	if rep.Plan == nil {
		return
	}
	pos := map[string]int{}
	for i, st := range rep.Plan.Steps {
		pos[st.Rule] = i
	}
	why := map[string]string{}
	for _, lo := range rep.Plan.LeftOut {
		why[lo.Rule] = lo.Reason
	}
	for i := range rep.Findings {
		rep.Findings[i].PlanLeftOut = why[rep.Findings[i].Rule]
	}
	key := func(f *rules.Fired) (int, float64) {
		if i, ok := pos[f.Rule]; ok {
			return 0, float64(i)
		}
		if f.Predicted != nil {
			return 1, f.Predicted.StepTimeChangePct
		}
		return 2, 0
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		ci, vi := key(&rep.Findings[i])
		cj, vj := key(&rep.Findings[j])
		if ci != cj {
			return ci < cj
		}
		return vi < vj
	})
}
