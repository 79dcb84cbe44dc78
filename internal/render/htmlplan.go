package render

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
)

// planView is the fix plan as the report shows it first.
type planView struct {
	Steps   []planStepView
	Total   string
	LeftOut []string
	// Patches are the code patches, each with its Copy text.
	Patches []patchView
	// HostTuning is the optional host tuning, apart from the deploy diff
	// (nil without one).
	HostTuning *hostTuningView
	// WhatIf is the target-concurrency what-if (nil without one).
	WhatIf *whatIfView
}

// hostTuningView is the plan's optional host tuning: why, and each
// command with what it does; Copy holds the commands not yet in the
// script, one a line.
type hostTuningView struct {
	Why   string
	Lines []hostLineView
	Copy  string
}

type hostLineView struct {
	Command, What string
	InScript      bool
}

// whatIfView is the what-if at the target concurrency.
type whatIfView struct {
	Head, Basis string
	Findings    []whatIfFindingView
}

type whatIfFindingView struct {
	Rule, Note string
}

type planStepView struct {
	Rule, Change, After string
}

type patchView struct {
	File string
	Diff []diffLine
	Copy string
}

// buildPlan shows the plan's steps, total, what was left out and its code
// patches (its deploy diff is the report's deploy diff).
func buildPlan(v *htmlView, p *results.Plan) {
	if p == nil || (len(p.Steps) == 0 && len(p.LeftOut) == 0) {
		return
	}
	pv := &planView{}
	for _, st := range p.Steps {
		sv := planStepView{Rule: cleanText(st.Rule, 80), Change: cleanText(changeText(st.StepTimeUs, st.StepTimeChangePct, st.ThroughputChangePct, st.UpperBound, v.l), 0)}
		if len(st.Requires) > 0 {
			sv.After = cleanText("after "+strings.Join(st.Requires, ", "), 0)
		}
		if st.Needs != "" {
			sv.After = strings.TrimPrefix(sv.After+"; needs "+cleanText(st.Needs, 80), "; ")
		}
		pv.Steps = append(pv.Steps, sv)
	}
	if len(p.Steps) > 0 {
		pv.Total = cleanText(changeText(p.StepTimeUs, p.StepTimeChangePct, p.ThroughputChangePct, p.UpperBound, v.l), 0)
	}
	for _, lo := range p.LeftOut {
		pv.LeftOut = append(pv.LeftOut, cleanText(fmt.Sprintf("%s: %s", lo.Rule, lo.Reason), 0))
	}
	for _, cp := range p.CodePatches {
		pv.Patches = append(pv.Patches, patchView{File: cleanText(cp.File, 0), Diff: diffLines(cleanBlock(cp.Diff)), Copy: copyText(cp.Diff)})
	}
	pv.HostTuning = hostTuningOf(p.HostTuning)
	pv.WhatIf = whatIfOf(p.WhatIf, v.l)
	v.Plan = pv
}

// hostTuningOf is the host tuning as the report shows it.
func hostTuningOf(ht *results.HostTuning) *hostTuningView {
	if ht == nil {
		return nil
	}
	hv := &hostTuningView{Why: cleanText(ht.Reason, 0)}
	var cmds []string
	for _, l := range ht.Lines {
		hv.Lines = append(hv.Lines, hostLineView{Command: cleanText(l.Command, 0), What: cleanText(l.What, 0), InScript: l.InScript})
		if !l.InScript {
			cmds = append(cmds, l.Command)
		}
	}
	hv.Copy = copyText(strings.Join(cmds, "\n"))
	return hv
}

// whatIfOf is the what-if as the report shows it.
func whatIfOf(w *results.WhatIf, l labels) *whatIfView {
	if w == nil {
		return nil
	}
	wv := &whatIfView{Basis: cleanText(w.Basis, 0),
		Head: cleanText(fmt.Sprintf(l.t("At %d concurrent requests (%s): batch %d -> %d per replica, %.1f -> %.1f µs per decode step (%+.2f%% throughput)."),
			w.Concurrency, w.Source, w.BatchObserved, w.Batch, w.StepTimeUs.Before, w.StepTimeUs.After, w.ThroughputChangePct), 0)}
	for _, f := range w.Findings {
		wv.Findings = append(wv.Findings, whatIfFindingView{Rule: cleanText(f.Rule, 80), Note: cleanText(f.Note, 0)})
	}
	return wv
}
