package compare

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// LedgerEntries are the step-time ledger entries (ledger.<cause>.time_us)
// each built-in rule's fix removes: the time `diff` credits to the fix
// only when one of them shrank.
var LedgerEntries = map[string][]string{
	"moe-routing-cumsum":   {metric.MetricLedgerAICPUUs, metric.MetricLedgerRoutingUs},
	"comm-ep-flashcomm":    {metric.MetricLedgerCollectiveUs, metric.MetricLedgerPeerWaitUs},
	"comm-bound":           {metric.MetricLedgerCollectiveUs},
	"graph-capture-sizes":  {metric.MetricLedgerHostGapUs, metric.MetricLedgerIdleUs, metric.MetricLedgerAttentionUs, metric.MetricLedgerComputeOtherUs, metric.MetricLedgerExpertsUs},
	"host-bound-free":      {metric.MetricLedgerHostGapUs},
	"host-bound":           {metric.MetricLedgerHostGapUs, metric.MetricLedgerBetweenStepsUs},
	"expert-imbalance":     {metric.MetricLedgerPeerWaitUs, metric.MetricLedgerExpertsUs},
	"event-wait-skew":      {metric.MetricLedgerStreamWaitUs, metric.MetricLedgerPeerWaitUs},
	"moe-dispatch-combine": {metric.MetricLedgerDispatchCombineUs, metric.MetricLedgerPeerWaitUs},
	"vllm-ascend-upgrade":  {metric.MetricLedgerStreamWaitUs, metric.MetricLedgerRoutingUs},
	"parallel-strategy":    {metric.MetricLedgerAttentionUs, metric.MetricLedgerComputeOtherUs, metric.MetricLedgerCollectiveUs, metric.MetricLedgerPeerWaitUs},
	"aicpu-kernels":        {metric.MetricLedgerAICPUUs},
}

// ledgerCauses are the ledger's entries, in the ledger's order.
var ledgerCauses = []string{
	metric.MetricLedgerAttentionUs, metric.MetricLedgerExpertsUs, metric.MetricLedgerRoutingUs,
	metric.MetricLedgerDispatchCombineUs, metric.MetricLedgerAICPUUs, metric.MetricLedgerComputeOtherUs,
	metric.MetricLedgerCollectiveUs, metric.MetricLedgerPeerWaitUs, metric.MetricLedgerStreamWaitUs,
	metric.MetricLedgerHostGapUs, metric.MetricLedgerIdleUs, metric.MetricLedgerBetweenStepsUs,
}

// stepTimeOf is a document's step time per step: with ProfilerStep#N
// rows, each step's longest window over the ranks that ran it (the
// critical rank's), with the spread over the steps; else the mean over
// ranks of decode.step.time_us; else the ledger's step time (the critical
// rank's, mean over the steps).
func stepTimeOf(d *results.Document) (diff.StepTimeSide, bool) {
	per := map[int]float64{}
	for _, rk := range d.Ranks {
		for _, s := range rk.Steps {
			if s.WindowUs > 0 {
				per[s.Step] = max(per[s.Step], s.WindowUs)
			}
		}
	}
	if len(per) > 0 {
		// summed in step order: map order would move the last digits from run to run
		steps := slices.Sorted(maps.Keys(per))
		var sum, sq float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, st := range steps {
			v := per[st]
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		mean := sum / float64(len(per))
		for _, st := range steps {
			sq += (per[st] - mean) * (per[st] - mean)
		}
		return diff.StepTimeSide{MeanUs: mean, MinUs: ptr(lo), MaxUs: ptr(hi), StdevUs: ptr(math.Sqrt(sq / float64(len(per)))),
			Steps: len(per), From: "ProfilerStep#N: each step's longest window over the ranks"}, true
	}
	m := meanMetrics(d)
	if v, ok := m[metric.MetricDecodeStepUs]; ok && v > 0 {
		return diff.StepTimeSide{MeanUs: v, Steps: int(m[metric.MetricDecodeStepsCount]),
			From: metric.MetricDecodeStepUs + " (mean over ranks; no per-step spread)"}, true
	}
	if v, ok := m[metric.MetricLedgerStepUs]; ok && v > 0 {
		return diff.StepTimeSide{MeanUs: v, Steps: int(m[metric.MetricLedgerStepsCount]),
			From: metric.MetricLedgerStepUs + " (the critical rank's, mean over the steps; no per-step spread)"}, true
	}
	return diff.StepTimeSide{}, false
}

// compareStepTime sets r.StepTime.
func compareStepTime(r *diff.Result, before, after *results.Document) {
	b, okb := stepTimeOf(before)
	a, oka := stepTimeOf(after)
	switch {
	case !okb:
		r.Unavailable["step_time"] = "the before document has no step time (no ProfilerStep#N, no decode.step.time_us, no ledger)"
		return
	case !oka:
		r.Unavailable["step_time"] = "the after document has no step time (no ProfilerStep#N, no decode.step.time_us, no ledger)"
		return
	}
	r.StepTime = &diff.StepTimeDelta{Before: b, After: a, Pct: pctOf(a.MeanUs-b.MeanUs, b.MeanUs)}
	if b.From != a.From {
		r.Notes = append(r.Notes, fmt.Sprintf("step time: before from %s, after from %s", b.From, a.From))
	}
}

// compareLedger sets r.Ledger from the sides' ledger metrics.
func compareLedger(r *diff.Result, before, after *results.Document) {
	bm, am := meanMetrics(before), meanMetrics(after)
	bs, okb := bm[metric.MetricLedgerStepUs]
	_, oka := am[metric.MetricLedgerStepUs]
	switch {
	case !okb:
		r.Unavailable["ledger"] = "the before document has no step-time ledger (" + metric.MetricLedgerStepUs + " not measured)"
		return
	case !oka:
		r.Unavailable["ledger"] = "the after document has no step-time ledger (" + metric.MetricLedgerStepUs + " not measured)"
		return
	}
	rulesOf := map[string][]string{}
	seen := map[string]bool{}
	for _, f := range before.Findings {
		if seen[f.Rule] {
			continue
		}
		seen[f.Rule] = true
		for _, e := range LedgerEntries[f.Rule] {
			rulesOf[e] = append(rulesOf[e], f.Rule)
		}
	}
	for _, e := range ledgerCauses {
		x, okx := bm[e]
		y, oky := am[e]
		if !okx || !oky {
			continue
		}
		d := diff.LedgerDelta{Entry: e, UsChange: usChange(x, y),
			Shrank: x-y >= diff.LedgerShrinkShare*bs && x > y}
		if rs := rulesOf[e]; len(rs) > 0 {
			d.Rules = slices.Sorted(slices.Values(rs))
		}
		r.Ledger = append(r.Ledger, d)
	}
	slices.SortStableFunc(r.Ledger, func(a, b diff.LedgerDelta) int { return cmp.Compare(a.DeltaUs, b.DeltaUs) })
}

// notCredited says why a resolved finding's fix gets no credit for the
// measured change: none of its ledger entries shrank; "" when one did, or
// when the rule names no entries or a side has no ledger.
func notCredited(r *diff.Result, rule string) string {
	entries := LedgerEntries[rule]
	if len(entries) == 0 || len(r.Ledger) == 0 {
		return ""
	}
	var same []string
	for _, e := range entries {
		for _, l := range r.Ledger {
			if l.Entry != e {
				continue
			}
			if l.Shrank {
				return ""
			}
			same = append(same, fmt.Sprintf("%s %.1f -> %.1f µs", e, l.BeforeUs, l.AfterUs))
		}
	}
	if len(same) == 0 {
		return ""
	}
	return "none of the ledger entries its fix removes shrank: " + strings.Join(same, ", ")
}
