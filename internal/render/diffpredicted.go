package render

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/internal/results/diff"
)

// The diff's predicted vs measured decode step-time changes: one row per
// resolved finding whose before side predicted its fix, then the plan's.

// stepChangeRows are the rows: each name with its step-time change.
func stepChangeRows(r *diff.Result) (names []string, changes []*diff.StepChange) {
	for _, f := range r.Findings {
		if f.StepTime != nil {
			names, changes = append(names, f.Rule), append(changes, f.StepTime)
		}
	}
	if r.Plan != nil {
		names, changes = append(names, "plan"), append(changes, r.Plan)
	}
	return names, changes
}

// stepChangePredicted is the predicted change, "-5.89%" or "-2.38% (upper
// bound)".
func stepChangePredicted(sc *diff.StepChange) string {
	pred := fmt.Sprintf("%+.2f%%", *sc.PredictedPct)
	if sc.UpperBound {
		pred += " (upper bound)"
	}
	return pred
}

// measuredTogether is what a finding's row shows in place of a ratio when
// its measured change holds other fixes too ("" when it does not).
func measuredTogether(sc *diff.StepChange, plan bool) string {
	if len(sc.MeasuredWith) == 0 || sc.MeasuredPct == nil {
		return ""
	}
	s := "measured together with " + strings.Join(sc.MeasuredWith, ", ")
	if !plan {
		return s + " (the before side has no fix plan)"
	}
	return s + ": see the plan row"
}

// planScope says what the plan row compares when the resolved predicted
// fixes are not the plan's one step ("" otherwise).
func planScope(sc *diff.StepChange) string {
	a := sc.Applied
	if a == nil {
		return ""
	}
	if a.WholePlan {
		return "the resolved fixes are the plan's steps: this row is the comparison"
	}
	list := func(rules []string) string {
		if len(rules) == 0 {
			return "none"
		}
		return strings.Join(rules, ", ")
	}
	parts := []string{"steps applied: " + list(a.Steps)}
	if len(a.NotApplied) > 0 {
		parts = append(parts, "not applied: "+list(a.NotApplied))
	}
	if len(a.OutsidePlan) > 0 {
		parts = append(parts, "also resolved, outside the plan: "+list(a.OutsidePlan))
	}
	if a.PredictedPct != nil {
		parts = append(parts, "the applied steps' cumulative prediction is "+stepChangePredicted(&diff.StepChange{PredictedPct: a.PredictedPct, UpperBound: a.UpperBound}))
		if a.Ratio != nil {
			parts[len(parts)-1] += ": measured/predicted " + ratioPct(*a.Ratio)
		}
	}
	if len(a.Steps) == 0 {
		return "plan not applied: " + strings.Join(parts, "; ")
	}
	return "plan partly applied: " + strings.Join(parts, "; ")
}

// writeDiffStepChanges writes, for the resolved findings the before side
// predicted and for its plan, the predicted vs measured step-time change.
func writeDiffStepChanges(ew *errWriter, r *diff.Result) {
	names, changes := stepChangeRows(r)
	if len(names) == 0 {
		return
	}
	ew.printf("\nDecode step time per step: predicted vs measured change\n")
	for i, sc := range changes {
		line := fmt.Sprintf("  %s: predicted %s, ", names[i], stepChangePredicted(sc))
		switch together := measuredTogether(sc, r.Plan != nil); {
		case sc.MeasuredPct == nil:
			line += fmt.Sprintf("measured n/a (%s)", Safe(sc.Unavailable, 200))
		case sc.NotCredited != "":
			line += fmt.Sprintf("measured %+.2f%%, not credited: %s", *sc.MeasuredPct, Safe(sc.NotCredited, 200))
		case sc.Ratio != nil:
			line += fmt.Sprintf("measured %+.2f%%, measured/predicted %s", *sc.MeasuredPct, ratioPct(*sc.Ratio))
		case together != "":
			line += fmt.Sprintf("measured %+.2f%%, %s", *sc.MeasuredPct, together)
		default:
			line += fmt.Sprintf("measured %+.2f%%", *sc.MeasuredPct)
		}
		if scope := planScope(sc); scope != "" {
			line += " (" + scope + ")"
		}
		ew.printf("%s\n", line)
	}
}

// diffStepChangeSection is the HTML diff's predicted vs measured decode
// step-time changes; ok is false when the before side predicted none.
func diffStepChangeSection(r *diff.Result) (DiffSection, bool) {
	names, changes := stepChangeRows(r)
	if len(names) == 0 {
		return DiffSection{}, false
	}
	sec := DiffSection{ID: "step-predictions", Title: "Decode step time: predicted vs measured",
		Lede:    "The decode step-time change (the step time per step: diff's step_time) the before side predicted for each resolved fix and for its plan, against the measured change. When several predicted fixes landed together, the measured change holds them all: the plan row compares them. When only some of the plan's steps landed, the plan row has no ratio, or one against the applied first steps' cumulative prediction.",
		Columns: []DiffColumn{{Name: "Fix"}, {Name: "Predicted", Num: true}, {Name: "Measured", Num: true}, {Name: "Measured / predicted", Num: true}, {Name: "Note"}}}
	for i, sc := range changes {
		meas, ratio := DiffCell{Text: "n/a", Num: true}, DiffCell{Text: "-", Num: true}
		note := planScope(sc)
		switch together := measuredTogether(sc, r.Plan != nil); {
		case sc.MeasuredPct == nil:
			note = strings.TrimPrefix(note+"; "+sc.Unavailable, "; ")
		case sc.NotCredited != "":
			note = strings.TrimPrefix(note+"; not credited: "+sc.NotCredited, "; ")
		case sc.Ratio != nil:
			ratio = diffNum(ratioPct(*sc.Ratio), *sc.Ratio)
		case sc.Applied != nil && sc.Applied.Ratio != nil:
			ratio = diffNum(ratioPct(*sc.Applied.Ratio), *sc.Applied.Ratio)
		case together != "":
			ratio = diffTxt(together)
		}
		if sc.MeasuredPct != nil {
			meas = diffNum(fmt.Sprintf("%+.2f%%", *sc.MeasuredPct), *sc.MeasuredPct)
		}
		sec.Rows = append(sec.Rows, []DiffCell{{Text: names[i], Class: "mono"}, diffNum(stepChangePredicted(sc), *sc.PredictedPct), meas, ratio, diffTxt(note)})
	}
	return sec, true
}
