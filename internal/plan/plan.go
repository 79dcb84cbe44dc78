// Package plan predicts what each finding's fix gains and builds one fix
// plan that can be applied as it is. Each rule's fix is a list of typed
// transforms (rules.Transform); the decode-step timeline of every rank
// (internal/analysis/replay) is replayed with them. The plan applies fixes one after
// the other, each predicted on the timeline the earlier ones left, picking
// at each step the fix that gains most among those whose requirements are
// in; it leaves out what conflicts, is superseded or needs a newer version,
// and gathers the actions of its steps into one deployment diff.
package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
)

// Build fills each finding's Predicted and the report's Plan (nil when the
// profile has no decode steps to replay and no finding could be
// predicted). The plan's diffs and code patches are made afterwards, with
// every finding's (rules' Report.ApplyFixes).
func Build(res *analysis.Result, rep *rules.Report) {
	b := newBuilder(res, rep)
	for i := range rep.Findings {
		f := &rep.Findings[i]
		f.Predicted = b.alone(f)
		if f.Predicted != nil && f.Predicted.StepTimeChangePct > 0 && f.Severity == results.SeverityHigh {
			// a fix predicted to slow the step is never HIGH
			f.Severity = results.SeverityMedium
		}
	}
	if b.base == nil {
		return
	}
	rep.Plan = b.plan()
	order(rep)
}

// builder holds what Build shares.
type builder struct {
	rep    *rules.Report
	tl     *replay.Timeline // nil: nothing to replay
	base   *float64         // measured step time (ns), nil when unmeasured
	steps  float64          // decode steps in the capture (mean over ranks)
	byRule map[string]*rules.Fired
	why    string // why nothing is replayed
	// ledger is the step-time ledger a fix without replay is bounded by
	// (nil: none); noPred says why a finding got no prediction
	ledger      *ledgerLeft
	noPred      map[string]string
	notReplayed map[string]string // why a fix was not replayed
	// aloneOn is each fix's replay on tl by its own transforms (alone),
	// which the plan's first step replays again (pick)
	aloneOn map[*rules.Fired]aloneRun
	// eplb is the planned EPLB placement's token shares per MoE layer and
	// EP rank (nil without expert loads), eplbBasis what it is
	eplb      [][]float64
	eplbBasis string
}

func newBuilder(res *analysis.Result, rep *rules.Report) *builder {
	b := &builder{rep: rep, byRule: map[string]*rules.Fired{}, ledger: newLedgerLeft(res), noPred: map[string]string{}, notReplayed: map[string]string{},
		aloneOn: map[*rules.Fired]aloneRun{}}
	for i := range rep.Findings {
		b.byRule[rep.Findings[i].Rule] = &rep.Findings[i]
	}
	var lines []*replay.RankLine
	var sum, steps float64
	n := 0
	for _, rr := range res.Ranks {
		if v, ok := rr.Metrics[analysis.MetricDecodeStepUs]; ok {
			sum, n = sum+v*1000, n+1
		}
		if v, ok := rr.Metrics[analysis.MetricDecodeStepsCount]; ok {
			steps += v / float64(len(res.Ranks))
		}
		lines = append(lines, analysis.ReplayOf(rr))
	}
	b.steps = steps
	if res.Cluster != nil {
		if x := analysis.ExpertsOf(res.Cluster); x != nil && x.EPLB != nil {
			if sh := x.EPLB.PlannedShares(); len(sh) > 0 {
				b.eplb = sh
				b.eplbBasis = fmt.Sprintf("the placement npuprof eplb plan writes from the expert loads (%d ranks, %d redundant; the slowest rank's load %.2fx -> %.2fx the mean, mean over layers)",
					x.EPLB.Ranks, x.EPLB.Redundant, x.EPLB.Before.Mean, x.EPLB.After.Mean)
			}
		}
	}
	if m := sum / float64(n); n > 0 && m > 0 && !math.IsInf(m, 0) {
		b.base = &m
	}
	if tl := replay.NewTimeline(lines); len(tl.Ranks) > 0 && b.base != nil {
		b.tl = tl
	}
	return b
}

// transforms returns f's replay transforms with those of the fired rules
// it requires (theirs first), and the rules it required.
func (b *builder) transforms(f *rules.Fired, seen map[string]bool) ([]replay.Transform, []string, error) {
	if seen[f.Rule] {
		return nil, nil, nil
	}
	seen[f.Rule] = true
	var out []replay.Transform
	var req []string
	for _, r := range f.Requires {
		q := b.byRule[r.Rule]
		if q == nil {
			continue
		}
		ts, rq, err := b.transforms(q, seen)
		if err != nil {
			return nil, nil, err
		}
		out, req = append(out, ts...), append(append(req, r.Rule), rq...)
	}
	for _, t := range f.Transforms {
		rt, err := b.toReplay(t)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, rt)
	}
	return out, req, nil
}

// toReplay turns a rule's transform into the replay's: EPLB's with the
// planned placement when the profile has expert loads.
func (b *builder) toReplay(t rules.Transform) (replay.Transform, error) {
	switch t.Kind {
	case "remove_kernels":
		return replay.RemoveKernels{Op: t.Op, After: t.After}, nil
	case "replace_collectives":
		g := t.Group
		if g == "" {
			g = "tp"
		}
		return replay.ReplaceCollectives{Group: g}, nil
	case "rebatch":
		return replay.Rebatch{To: int32(t.To)}, nil
	case "eager_to_graph":
		return replay.EagerToGraph{}, nil
	case "rebalance_experts":
		return replay.RebalanceExperts{Shares: b.eplb, Basis: b.eplbBasis}, nil
	}
	return nil, fmt.Errorf("unknown transform %q", t.Kind)
}

// prediction turns replayed step times (ns) into a results.Prediction on the
// measured step time.
// prediction turns replayed step times (ns) into a results.Prediction on
// the measured step time; nil when the result is not a possible step
// (not finite, or not positive).
func (b *builder) prediction(beforeNs, replayBefore, replayAfter float64, bound bool, basis string) *results.Prediction {
	after := beforeNs * replayAfter / replayBefore
	if !possible(beforeNs) || !possible(after) {
		return nil
	}
	return &results.Prediction{StepChange: stepChange(beforeNs, after, bound), Basis: basis}
}

// stepChange is the change of the step from beforeNs to afterNs (ns), in
// the document's units and rounding.
func stepChange(beforeNs, afterNs float64, bound bool) results.StepChange {
	sp, tp := replay.Change(beforeNs, afterNs)
	return results.StepChange{StepTimeUs: results.BeforeAfter{Before: round1(beforeNs / 1000), After: round1(afterNs / 1000)},
		StepTimeChangePct: round2(sp), ThroughputChangePct: round2(tp), UpperBound: bound}
}

// possible reports whether ns is a step time: finite and positive.
func possible(ns float64) bool { return ns > 0 && !math.IsInf(ns, 0) && !math.IsNaN(ns) }

// round1 and round2 round in floating point: no integer conversion to
// overflow.
func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// alone predicts f's fix (with what it requires) on the measured profile.
func (b *builder) alone(f *rules.Fired) *results.Prediction {
	if b.base == nil {
		return nil
	}
	ts, req, err := b.transforms(f, map[string]bool{})
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case len(ts) == 0:
		why = "the fix has no replayable transform"
	case b.tl == nil:
		why = "no decode-step timeline to replay"
	default:
		p, err := replay.PredictStep(b.tl, ts)
		if len(req) == 0 {
			// ts are f's own transforms: pick's on tl
			b.aloneOn[f] = aloneRun{p, err}
		}
		if err != nil {
			why = err.Error()
			break
		}
		basis := p.Basis
		if len(req) > 0 {
			basis = "with " + strings.Join(req, ", ") + " (required) first: " + basis
		}
		if pr := b.prediction(*b.base, p.BeforeNs, p.AfterNs, p.UpperBound, basis); pr != nil {
			return pr
		}
		why = fmt.Sprintf("the replay gave no possible step time (%g -> %g ns)", p.BeforeNs, p.AfterNs)
	}
	b.notReplayed[f.Rule] = why
	return b.bound(f, why)
}

// aloneRun is a replay.PredictStep's outcome.
type aloneRun struct {
	p   replay.Prediction
	err error
}

// bound is the upper bound of a fix that cannot be replayed: the ledger
// entries it names (its claims), as a part of the critical rank's step,
// of the measured step time; never its saving taken whole.
func (b *builder) bound(f *rules.Fired, why string) *results.Prediction {
	frac, basis, reason := b.boundFrac(f, why, claimedPerStep(f.Claims, max(1, len(firstSteps(f.Claims)))))
	if reason != "" {
		if _, estimated := f.Saving(); estimated || len(f.Claims) > 0 {
			// a fix about the step time the plan cannot hold says why;
			// one without either (an environment advice) is no candidate
			b.noPred[f.Rule] = reason
		}
		return nil
	}
	return b.prediction(*b.base, 1, 1-frac, true, basis)
}

// boundFrac is the part of the step f's claims remove when they remove
// per ns per step of the ledger, with its basis, or why there is none.
func (b *builder) boundFrac(f *rules.Fired, why string, per float64) (float64, string, string) {
	saving, ok := f.Saving()
	switch {
	case !ok || saving <= 0:
		return 0, "", fmt.Sprintf("not replayed (%s) and no saving estimate: nothing to bound it by", why)
	case len(f.Claims) == 0:
		return 0, "", fmt.Sprintf("not replayed (%s) and it names no step-time ledger entries to bound it by", why)
	case b.ledger == nil:
		return 0, "", fmt.Sprintf("not replayed (%s) and the profile has no step-time ledger to bound it by", why)
	case !(per > 0):
		return 0, "", fmt.Sprintf("not replayed (%s) and the ledger entries it names (%s) take no time", why, entriesText(f.Claims))
	}
	frac := math.Min(per/b.ledger.stepNs, 1)
	if frac >= 1 {
		return 0, "", fmt.Sprintf("not replayed (%s) and the ledger entries it names (%s) are the whole step: no step would be left", why, entriesText(f.Claims))
	}
	basis := fmt.Sprintf("not replayed (%s): bounded by the ledger entries it names (%s), %.1f µs of the critical rank's %.1f µs step (%.2f%%): an upper bound",
		why, entriesText(f.Claims), per/1000, b.ledger.stepNs/1000, frac*100)
	return frac, basis, ""
}

// stepBoundBasis is the basis of a plan step after others bounded by the
// ledger time avail (ns per step) no earlier step removed: boundFrac's
// basis gives that time as a part of the measured step, which is the fix's
// change alone; the step's change is of the step the earlier steps left
// (now, to after: ns), so the basis says that part too.
func (b *builder) stepBoundBasis(f *rules.Fired, why string, avail, now, after float64) string {
	return fmt.Sprintf("not replayed (%s): bounded by the ledger entries it names that no earlier step removed (%s), %.1f µs of the critical rank's %.1f µs measured step: %.1f µs of the %.1f µs step the earlier steps left (%.2f%%): an upper bound",
		why, entriesText(f.Claims), avail/1000, b.ledger.stepNs/1000, (now-after)/1000, now/1000, (now-after)/now*100)
}

// firstSteps is the first claim's per-step times (the claims share the
// ledger's steps).
func firstSteps(cs []rules.Claim) []float64 {
	if len(cs) == 0 {
		return nil
	}
	return cs[0].StepsNs
}
