package render

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
)

// predictedText is a prediction in the user's units: µs per decode step,
// step-time change, throughput change, and whether it is a bound.
func predictedText(p *results.Prediction, l labels) string {
	return changeText(p.StepTimeUs, p.StepTimeChangePct, p.ThroughputChangePct, p.UpperBound, l)
}

func changeText(st results.BeforeAfter, stepPct, tputPct float64, bound bool, l labels) string {
	return changeIn(l.t("µs per decode step"), st, stepPct, tputPct, bound, l)
}

// changeIn is changeText with the step time's unit given: the summary's
// plan names it once in its header.
func changeIn(unit string, st results.BeforeAfter, stepPct, tputPct float64, bound bool, l labels) string {
	s := fmt.Sprintf(l.t("%.1f -> %.1f %s (%+.2f%% step time, %+.2f%% throughput)"), st.Before, st.After, unit, stepPct, tputPct)
	if bound {
		s += l.t(", an upper bound")
	}
	return s
}

// writePlan opens the summary with the fix plan: its steps, the total,
// what was left out and why, the combined diff and the code patches.
func writePlan(ew *errWriter, p *results.Plan) {
	if p == nil || (len(p.Steps) == 0 && len(p.LeftOut) == 0) {
		return
	}
	ew.printf("\nFix plan (µs per decode step, predicted by replaying the decode steps; each on the one before)\n")
	for i, st := range p.Steps {
		req := ""
		if len(st.Requires) > 0 {
			req = ew.l.t(", after ") + strings.Join(st.Requires, ", ")
		}
		needs := ""
		if st.Needs != "" {
			needs = ew.l.t(", needs ") + st.Needs
		}
		ew.printf("  %d. %s: %s%s%s\n", i+1, st.Rule, changeIn("µs", st.StepTimeUs, st.StepTimeChangePct, st.ThroughputChangePct, st.UpperBound, ew.l), req, needs)
	}
	if len(p.Steps) > 1 { // one step is its own total
		ew.printf("  total: %s\n", changeIn("µs", p.StepTimeUs, p.StepTimeChangePct, p.ThroughputChangePct, p.UpperBound, ew.l))
	}
	for _, lo := range p.LeftOut {
		ew.printf("  left out: %s: %s\n", lo.Rule, Safe(lo.Reason, 400))
	}
	if p.DeployDiff != "" {
		ew.printf("  deploy diff (patch -p1):\n")
		writeDiffBlock(ew, p.DeployDiff)
	}
	for _, cp := range p.CodePatches {
		ew.printf("  code patch %s (patch -p1 in the source folder):\n", Safe(cp.File, 200))
		writeDiffBlock(ew, cp.Diff)
	}
	if ht := p.HostTuning; ht != nil {
		// one line of commands (what each does: the JSON's
		// plan.host_tuning and the HTML report)
		ew.printf("  optional host tuning (not in the deploy diff; %s):\n", Safe(ht.Reason, 300))
		cmds := make([]string, 0, len(ht.Lines))
		for _, l := range ht.Lines {
			c := Safe(l.Command, 200)
			if l.InScript {
				c += ew.l.t(" (already in the script)")
			}
			cmds = append(cmds, c)
		}
		ew.printf("    %s\n", strings.Join(cmds, "; "))
	}
	writeWhatIf(ew, p.WhatIf)
}

// writeWhatIf writes the target-concurrency what-if: the step predicted
// at the target batch and each rule whose verdict or gain changes there
// (its metrics and basis: the JSON's plan.whatif and the HTML report).
func writeWhatIf(ew *errWriter, w *results.WhatIf) {
	if w == nil {
		return
	}
	ew.printf("  what-if at %d concurrent requests (%s): batch %d -> %d per replica, %.1f -> %.1f µs per decode step (%+.2f%% throughput)\n",
		w.Concurrency, Safe(w.Source, 200), w.BatchObserved, w.Batch, w.StepTimeUs.Before, w.StepTimeUs.After, w.ThroughputChangePct)
	if len(w.Findings) == 0 {
		ew.printf("    no rule's verdict or gain changes there\n")
	}
	for _, f := range w.Findings {
		ew.printf("    %s: %s\n", f.Rule, Safe(f.Note, 400))
	}
}

// writeDiffBlock writes a diff indented, never wrapped: a diff line wider
// than the screen runs on (a terminal cuts it: errWriter.verbatim), so
// the lines stay the patch's.
func writeDiffBlock(ew *errWriter, d string) {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		b.WriteString("    " + Safe(l, 400) + "\n")
	}
	ew.verbatim(b.String())
}
