package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// PlanMetricStepTimeChangePct is the plan's predicted step-time change
// (rulefmt.PlanMetricStepTimeChangePct).
const PlanMetricStepTimeChangePct = rulefmt.PlanMetricStepTimeChangePct

// IsPlanMetric reports whether a budget's metric is the plan's.
func IsPlanMetric(name string) bool { return rulefmt.IsPlanMetric(name) }

// EvalPlanBudgets judges the budgets on the plan's metric once the plan is
// built (package plan): a budget whose bound the plan's predicted change
// breaks becomes a finding, like any budget. Without a plan they stay not
// evaluated, with the reason. The bound is a number (there is no baseline
// plan to compare with).
func (r *Report) EvalPlanBudgets(set *Set, in *Input) {
	for _, b := range set.Budgets {
		if !IsPlanMetric(b.Metric) {
			continue
		}
		o, f := evalPlanBudget(b, r.Plan, in)
		for i := range r.Outcomes {
			if r.Outcomes[i].Rule == b.ID {
				r.Outcomes[i] = o
			}
		}
		if f != nil {
			r.Findings = append(r.Findings, *f)
		}
	}
}

func evalPlanBudget(b *rulefmt.Budget, p *results.Plan, in *Input) (results.Outcome, *Fired) {
	o := results.Outcome{Rule: b.ID, Status: results.StatusNotEvaluated}
	if p == nil {
		o.Reason = "no fix plan: the capture has no decode step time (decode.step.time_us)"
		return o, nil
	}
	if strings.Contains(b.Text[len(b.Metric):], "baseline") {
		o.Reason = "a plan budget compares with a number: there is no baseline plan"
		return o, nil
	}
	if why := p.Impossible(); why != "" {
		// a plan that cannot be passes no budget
		o.Status, o.Severity = results.StatusFired, b.Severity
		return o, &Fired{Finding: results.Finding{Rule: b.ID, Severity: b.Severity, Ranks: []int{},
			Title:    fmt.Sprintf(msg(in.Lang, msgPlanImpossibleTitle), why),
			Evidence: []results.Evidence{{Metric: b.Metric, Value: finiteOr0(p.StepTimeChangePct), Unit: "%", Note: msg(in.Lang, msgPlanBudgetNote)}},
			Fix:      fmt.Sprintf(msg(in.Lang, msgPlanImpossibleFix), b.Text),
		}}
	}
	st := newState(in)
	bv, err := st.run(b.Bound)
	if err != nil {
		o.Status, o.Reason = results.StatusFailed, fmt.Sprintf("%s: %v", b.File, err)
		return o, nil
	}
	cur, bound := p.StepTimeChangePct, bv.(float64)
	okay := map[string]bool{"<=": cur <= bound, "<": cur < bound, ">=": cur >= bound, ">": cur > bound, "==": cur == bound}[b.Op]
	if okay {
		o.Status, o.Reason = results.StatusClear, fmt.Sprintf("%s = %s within %s %s", b.Metric, format(cur), b.Op, format(bound))
		return o, nil
	}
	o.Status, o.Severity = results.StatusFired, b.Severity
	var steps []string
	for _, s := range p.Steps {
		steps = append(steps, fmt.Sprintf("%s %+.2f%%", s.Rule, s.StepTimeChangePct))
	}
	return o, &Fired{Finding: results.Finding{Rule: b.ID, Severity: b.Severity, Ranks: []int{},
		Title:    fmt.Sprintf(msg(in.Lang, msgPlanBudgetTitle), cur, b.Op, format(bound)),
		Evidence: []results.Evidence{{Metric: b.Metric, Value: cur, Unit: "%", Note: msg(in.Lang, msgPlanBudgetNote)}},
		Fix:      fmt.Sprintf(msg(in.Lang, msgPlanBudgetFix), strings.Join(steps, ", "), b.Text),
	}}
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
