package render

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/results"
)

// planView is the fix plan as the report shows it first.
type planView struct {
	Steps   []planStepView
	Total   string
	LeftOut []string
	// Patches are the code patches, each with its Copy text.
	Patches []patchView
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
	v.Plan = pv
}
