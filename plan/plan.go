// Package plan predicts what each finding's fix gains and builds one fix
// plan that can be applied as it is. Each rule's fix is a list of typed
// transforms (rules.Transform); the decode-step timeline of every rank
// (analysis/replay) is replayed with them. The plan applies fixes one after
// the other, each predicted on the timeline the earlier ones left, picking
// at each step the fix that gains most among those whose requirements are
// in; it leaves out what conflicts, is superseded or needs a newer version,
// and gathers the actions of its steps into one deployment diff.
package plan

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/analysis/replay"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/rules"
)

// Build fills each finding's Predicted and the report's Plan (nil when the
// profile has no decode steps to replay and no finding could be
// predicted). The plan's diffs and code patches are made afterwards, with
// every finding's (rules' Report.ApplyFixes).
func Build(res *analysis.Result, rep *rules.Report) {
	b := newBuilder(res, rep)
	for i := range rep.Findings {
		rep.Findings[i].Predicted = b.alone(&rep.Findings[i])
	}
	if b.base == nil {
		return
	}
	rep.Plan = b.plan()
}

// builder holds what Build shares.
type builder struct {
	rep    *rules.Report
	tl     *replay.Timeline // nil: nothing to replay
	base   *float64         // measured step time (ns), nil when unmeasured
	steps  float64          // decode steps in the capture (mean over ranks)
	byRule map[string]*rules.Fired
	why    string // why nothing is replayed
}

func newBuilder(res *analysis.Result, rep *rules.Report) *builder {
	b := &builder{rep: rep, byRule: map[string]*rules.Fired{}}
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
	if n > 0 {
		m := sum / float64(n)
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
		rt, err := toReplay(t)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, rt)
	}
	return out, req, nil
}

// toReplay turns a rule's transform into the replay's.
func toReplay(t rules.Transform) (replay.Transform, error) {
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
		return replay.RebalanceExperts{}, nil
	}
	return nil, fmt.Errorf("unknown transform %q", t.Kind)
}

// prediction turns replayed step times (ns) into a results.Prediction on the
// measured step time.
func (b *builder) prediction(beforeNs, replayBefore, replayAfter float64, bound bool, basis string) *results.Prediction {
	after := beforeNs * replayAfter / replayBefore
	sp, tp := replay.Change(beforeNs, after)
	return &results.Prediction{StepTimeUs: results.BeforeAfter{Before: round1(beforeNs / 1000), After: round1(after / 1000)},
		StepTimeChangePct: round2(sp), ThroughputChangePct: round2(tp), UpperBound: bound, Basis: basis}
}

func round1(v float64) float64 { return float64(int64(v*10+sign(v)*0.5)) / 10 }
func round2(v float64) float64 { return float64(int64(v*100+sign(v)*0.5)) / 100 }

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

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
		if err == nil {
			basis := p.Basis
			if len(req) > 0 {
				basis = "with " + strings.Join(req, ", ") + " (required) first: " + basis
			}
			return b.prediction(*b.base, p.BeforeNs, p.AfterNs, p.UpperBound, basis)
		}
		why = err.Error()
	}
	return b.bound(f, why)
}

// bound is the upper bound of a fix that cannot be replayed: its rule's
// saving over the capture's decode steps.
func (b *builder) bound(f *rules.Fired, why string) *results.Prediction {
	saving, ok := f.Saving()
	if !ok || saving <= 0 || b.steps <= 0 {
		return nil // no estimate to bound the fix with
	}
	per := saving * 1000 / b.steps
	basis := fmt.Sprintf("not replayed (%s): the rule's saving estimate, %.1f µs per rank over %.0f decode steps, taken whole: an upper bound", why, saving, b.steps)
	return b.prediction(*b.base, *b.base, max(*b.base-per, 1), true, basis)
}
