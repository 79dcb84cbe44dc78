package compare

import (
	"math"
	"slices"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// stepChange measures the step-time change between the documents against
// a prediction.
func stepChange(r *diff.Result, before, after *results.Document, predicted float64, bound bool) *diff.StepChange {
	sc := &diff.StepChange{PredictedPct: ptr(predicted), UpperBound: bound}
	if st := r.StepTime; st != nil && st.Pct != nil {
		// the step time per step (compareStepTime)
		sc.MeasuredPct = st.Pct
		if predicted != 0 {
			sc.Ratio = ptr(*sc.MeasuredPct / predicted)
		}
		return sc
	}
	b, okb := meanMetrics(before)[metric.MetricDecodeStepUs]
	a, oka := meanMetrics(after)[metric.MetricDecodeStepUs]
	switch {
	case !okb:
		sc.Unavailable = metric.MetricDecodeStepUs + " is not measured before"
	case !oka:
		sc.Unavailable = metric.MetricDecodeStepUs + " is not measured after"
	default:
		sc.MeasuredPct = ptr((a/b - 1) * 100)
		if predicted != 0 {
			sc.Ratio = ptr(*sc.MeasuredPct / predicted)
		}
	}
	return sc
}

// comparePredictions sets, for each resolved finding that carried a
// prediction and for the before side's plan, the predicted and measured
// step-time change. When several such findings were resolved at once, the
// measured change holds all their fixes: each finding's step_time then
// names the others (measured_with) in place of a ratio. The plan says
// which of its steps were applied (applied) unless the resolved findings
// are its one step; when they are not exactly its steps, its row has no
// ratio (the whole plan's prediction against part of it).
func comparePredictions(r *diff.Result, before, after *results.Document) {
	var resolved, credited []string
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Status != diff.FindingResolved {
			continue
		}
		for _, bf := range before.Findings {
			if bf.Rule == f.Rule && bf.Predicted != nil {
				f.StepTime = stepChange(r, before, after, bf.Predicted.StepTimeChangePct, bf.Predicted.UpperBound)
				resolved = append(resolved, f.Rule)
				if why := notCredited(r, f.Rule); why != "" {
					f.StepTime.NotCredited, f.StepTime.Ratio = why, nil
				} else {
					credited = append(credited, f.Rule)
				}
				break
			}
		}
	}
	slices.Sort(resolved)
	slices.Sort(credited)
	together := len(resolved) > 1
	if len(credited) > 1 {
		for _, f := range r.Findings {
			if sc := f.StepTime; sc != nil && sc.NotCredited == "" {
				sc.MeasuredWith = slices.DeleteFunc(slices.Clone(credited), func(rule string) bool { return rule == f.Rule })
				sc.Ratio = nil
			}
		}
	}
	if p := before.Plan; p != nil && len(p.Steps) > 0 {
		r.Plan = stepChange(r, before, after, p.StepTimeChangePct, p.UpperBound)
		// a single-step plan whose step alone was resolved: the plan row
		// compares what landed, nothing to add
		if a := planApplied(p, resolved); together || !a.WholePlan {
			r.Plan.Applied = a
		}
		if a := r.Plan.Applied; a != nil && !a.WholePlan {
			// the whole plan's prediction is no measure of part of it
			r.Plan.Ratio = nil
			appliedPrefix(a, p, r.Plan.MeasuredPct)
		}
	}
}

// appliedPrefix sets, when the applied steps are the plan's first k steps
// and nothing outside the plan was resolved, their cumulative prediction:
// each step is predicted on the timeline the earlier ones left, so their
// step-time changes compound. The ratio is the measured change over it.
func appliedPrefix(a *diff.PlanApplied, p *results.Plan, measured *float64) {
	k := len(a.Steps)
	if k == 0 || len(a.OutsidePlan) > 0 {
		return
	}
	factor := 1.0
	for i, st := range p.Steps[:k] {
		if st.Rule != a.Steps[i] {
			return
		}
		factor *= 1 + st.StepTimeChangePct/100
		a.UpperBound = a.UpperBound || st.UpperBound
	}
	pct := math.Round((factor-1)*100*100) / 100
	a.PredictedPct = ptr(pct)
	if measured != nil && pct != 0 {
		a.Ratio = ptr(*measured / pct)
	}
}

// planApplied sorts the plan's steps into those whose finding was resolved
// and those whose finding persists, and names the resolved findings (with
// a prediction, sorted) that are not plan steps.
func planApplied(p *results.Plan, resolved []string) *diff.PlanApplied {
	a := &diff.PlanApplied{Steps: []string{}, NotApplied: []string{}, OutsidePlan: []string{}}
	inPlan := map[string]bool{}
	for _, st := range p.Steps {
		inPlan[st.Rule] = true
		if slices.Contains(resolved, st.Rule) {
			a.Steps = append(a.Steps, st.Rule)
		} else {
			a.NotApplied = append(a.NotApplied, st.Rule)
		}
	}
	for _, rule := range resolved {
		if !inPlan[rule] {
			a.OutsidePlan = append(a.OutsidePlan, rule)
		}
	}
	a.WholePlan = len(a.NotApplied) == 0 && len(a.OutsidePlan) == 0
	return a
}
