package replay

import (
	"fmt"
	"strings"
)

// Transform is one typed edit of a timeline (what a fix changes). Apply
// edits tl in place and returns its basis: one line saying what was
// replayed and what was assumed; bound is true when the edit assumes the
// best case, so the prediction is an upper bound of the gain.
type Transform interface {
	Name() string
	Apply(tl *Timeline) (basis string, bound bool, err error)
}

// stepped is a transform made of a pass over the whole timeline that
// reads what every step's edit shares (begin), then an edit of each step
// of every rank that reads and edits that step alone, then the basis
// (end). Its Apply is applySteps; PredictStep edits and replays one step
// at a time.
type stepped interface {
	Transform
	begin(tl *Timeline) (stepEdit, error)
}

// stepEdit is a stepped transform under way.
type stepEdit interface {
	step(tl *Timeline, k int)
	end(tl *Timeline) (basis string, bound bool, err error)
}

// applySteps applies t to every step of tl.
func applySteps(tl *Timeline, t stepped) (string, bool, error) {
	e, err := t.begin(tl)
	if err != nil {
		return "", false, err
	}
	tl.memo = nil // edited below
	for k := 0; k < tl.Steps; k++ {
		e.step(tl, k)
	}
	return e.end(tl)
}

// Prediction is the replayed effect of a fix.
type Prediction struct {
	// BeforeNs / AfterNs are the replayed mean step times without and
	// with the fix.
	BeforeNs, AfterNs float64
	// ChangePct is the step-time change (negative: faster), ThroughputPct
	// the decode throughput change at the same batch.
	ChangePct, ThroughputPct float64
	// UpperBound: a transform assumed the best case.
	UpperBound bool
	// Basis joins the transforms' bases.
	Basis string
}

// Clone returns a copy of the timeline whose steps share their items and
// collectives with tl's until a transform edits them: tl must not be
// edited while the copy is in use.
func (tl *Timeline) Clone() *Timeline {
	c := &Timeline{Steps: tl.Steps, Ranks: make([]*RankLine, len(tl.Ranks)), memo: tl.memo, spill: tl.spill, decoded: tl.decoded}
	for i, l := range tl.Ranks {
		c.Ranks[i] = l.clone()
	}
	return c
}

// Predict replays tl, then a copy of it with the transforms applied, and
// returns the prediction and the transformed copy (the next fix of a plan
// is predicted on it; it keeps its replay, so neither it nor tl may be
// edited after). The copy shares what the transforms left unchanged with
// tl.
func Predict(tl *Timeline, fix []Transform) (Prediction, *Timeline, error) {
	return predict(tl, fix, false)
}

// PredictOn is Predict on a transformed copy that Predict or PredictOn
// returned and that the caller gives up: the transforms edit it in place
// (the steps it shares with the timeline it was copied from are copied as
// they are edited) and it is returned as the transformed timeline, so a
// plan's next step does not hold two transformed copies at once. On a
// timeline Predict did not return it is Predict.
func PredictOn(tl *Timeline, fix []Transform) (Prediction, *Timeline, error) {
	return predict(tl, fix, tl.copied)
}

// predict is Predict; inPlace edits tl instead of a copy of it.
func predict(tl *Timeline, fix []Transform, inPlace bool) (Prediction, *Timeline, error) {
	var p Prediction
	before, err := tl.replay()
	if err != nil {
		return p, nil, err
	}
	after := tl
	if inPlace {
		tl.replayed = nil
	} else {
		after = tl.Clone()
		after.copied = true
	}
	var bases []string
	for _, t := range fix {
		b, bound, err := t.Apply(after)
		if err != nil {
			return p, nil, fmt.Errorf("%s: %w", t.Name(), err)
		}
		p.UpperBound = p.UpperBound || bound
		bases = append(bases, b)
	}
	res, err := after.replay()
	if err != nil {
		return p, nil, err
	}
	p.BeforeNs, p.AfterNs = before.StepNs, res.StepNs
	p.ChangePct, p.ThroughputPct = Change(p.BeforeNs, p.AfterNs)
	p.Basis = strings.Join(bases, "; ")
	return p, after, nil
}

// PredictStep is Predict's prediction without the transformed timeline:
// a fix of one transform is applied and replayed one step at a time, so
// only one step of every rank is copied at once (the others are shared
// with tl); a fix of several goes through Predict.
func PredictStep(tl *Timeline, fix []Transform) (Prediction, error) {
	t, ok := Transform(nil), false
	if len(fix) == 1 {
		t = fix[0]
		_, ok = t.(stepped)
	}
	if !ok {
		p, _, err := Predict(tl, fix)
		return p, err
	}
	var p Prediction
	before, err := tl.replay()
	if err != nil {
		return p, err
	}
	view := tl.Clone()
	e, err := t.(stepped).begin(view)
	if err != nil {
		return p, fmt.Errorf("%s: %w", t.Name(), err)
	}
	view.memo = nil // edited below
	if tl.decoded {
		// the edited copy of a step is written over the previous step's
		for _, l := range view.Ranks {
			l.scratch = &decodedScratch{}
		}
	}
	var scratch *Spill
	if tl.spill != nil && !tl.decoded {
		// the edited copy of a step is written to a file of its own,
		// overwritten by the next step's
		scratch = NewSpill()
		defer scratch.close()
		for _, l := range view.Ranks {
			l.spill = scratch
		}
	}
	s := newStepper(view)
	var sum float64
	var replayErr error
	for k := 0; k < view.Steps; k++ {
		e.step(view, k)
		if replayErr == nil {
			d, err := s.step(k)
			if err != nil {
				replayErr = err
			}
			for _, v := range d {
				sum += float64(v)
			}
		}
		for i, l := range view.Ranks {
			// the edited copy of step k goes: the next steps' edits do not
			// read it
			l.Steps[k] = tl.Ranks[i].Steps[k]
		}
		scratch.reset()
	}
	basis, bound, err := e.end(view)
	if err != nil {
		return p, fmt.Errorf("%s: %w", t.Name(), err)
	}
	if replayErr != nil {
		return p, replayErr
	}
	p.UpperBound = bound
	p.BeforeNs, p.AfterNs = before.StepNs, sum/float64(view.Steps*len(view.Ranks))
	p.ChangePct, p.ThroughputPct = Change(p.BeforeNs, p.AfterNs)
	p.Basis = basis
	return p, nil
}

// replay is Replay, kept on tl for the next Predict on it.
func (tl *Timeline) replay() (Result, error) {
	if tl.replayed != nil {
		return *tl.replayed, nil
	}
	res, err := tl.Replay()
	if err == nil {
		tl.replayed = &res
	}
	return res, err
}

// Change returns the step-time change and the decode throughput change at
// the same batch (tokens/s is batch over step time), in percent.
func Change(before, after float64) (stepPct, throughputPct float64) {
	if before <= 0 || after <= 0 {
		return 0, 0
	}
	return (after/before - 1) * 100, (before/after - 1) * 100
}
