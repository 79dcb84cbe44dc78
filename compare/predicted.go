package compare

import (
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/results/diff"
	"github.com/npuprof/npuprof/results/metric"
)

// stepChange measures the step-time change between the documents against
// a prediction.
func stepChange(before, after *results.Document, predicted float64, bound bool) *diff.StepChange {
	sc := &diff.StepChange{PredictedPct: ptr(predicted), UpperBound: bound}
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
// step-time change.
func comparePredictions(r *diff.Result, before, after *results.Document) {
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Status != diff.FindingResolved {
			continue
		}
		for _, bf := range before.Findings {
			if bf.Rule == f.Rule && bf.Predicted != nil {
				f.StepTime = stepChange(before, after, bf.Predicted.StepTimeChangePct, bf.Predicted.UpperBound)
				break
			}
		}
	}
	if p := before.Plan; p != nil && len(p.Steps) > 0 {
		r.Plan = stepChange(before, after, p.StepTimeChangePct, p.UpperBound)
	}
}
