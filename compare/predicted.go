package compare

import (
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/results/metric"
)

// StepChange is a predicted and a measured decode step-time change (%),
// with the ratio measured / predicted; the step time is decode.step.time_us
// (the mean time from one decode step's start to the next) on both sides.
type StepChange struct {
	PredictedPct *float64 `json:"predicted_step_time_change_pct"`
	MeasuredPct  *float64 `json:"measured_step_time_change_pct"`
	Ratio        *float64 `json:"measured_over_predicted,omitempty"`
	// UpperBound: the prediction is an upper bound of the gain.
	UpperBound bool `json:"upper_bound,omitempty"`
	// Unavailable says why the measured change is missing.
	Unavailable string `json:"unavailable,omitempty"`
}

// stepChange measures the step-time change between the documents against
// a prediction.
func stepChange(before, after *results.Document, predicted float64, bound bool) *StepChange {
	sc := &StepChange{PredictedPct: ptr(predicted), UpperBound: bound}
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
func (r *Result) comparePredictions(before, after *results.Document) {
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Status != FindingResolved {
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
