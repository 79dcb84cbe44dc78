package results

import "time"

// RunInfo is what the writers read of the run that writes them beyond the
// document's data: the options of its command line and what only a
// running npuprof knows. It is never saved: a saved document written
// again gets the options of the run that writes it.
type RunInfo struct {
	// Text caps the terminal summary (--steps all, --ranks all,
	// --detail all, µs spelled us).
	Text TextOptions
	// Gate is check's (--fail-on, --partial-findings); nil: no gate (the
	// text ends with no verdict).
	Gate *Gate
	// Deploy is the --deploy script's path ("" none): SARIF locates a
	// finding with a diff in it.
	Deploy string
	// Start is when the run started (JUnit's time is the wall time
	// since); zero: unknown, 0 s.
	Start time.Time
	// RuleTimes are how long each rule and budget took to evaluate, by id
	// (JUnit's test case times).
	RuleTimes map[string]time.Duration
	// InputError is, for a check that could not analyze its input, the
	// error in the run's language: the outputs that report it (an
	// output's Failed: JUnit, SARIF) write it in place of the findings.
	InputError string
}

// TextOptions are the terminal summary's caps: AllSteps (--steps all)
// lists every step, AllRanks (--ranks all) every rank.
type TextOptions struct {
	AllSteps bool
	AllRanks bool
	// AllDetail (--detail all) shows each finding's whole fix, its
	// prediction's whole basis and every evidence metric, and why each
	// rule was not applicable or not evaluated; the summary shows each
	// fix's first lines and no evidence, and names those rules on one
	// line each.
	AllDetail bool
	// ASCIIUnits spells µs as us, for a terminal whose locale is not UTF-8
	// (the JSON and the other outputs keep their units).
	ASCIIUnits bool
	// Tables (--detail tables, and --detail all) writes each section's
	// tables; the summary gives each section one line.
	Tables bool
	// Width is the widest line in columns (the terminal's, or COLUMNS);
	// 0: 100, the width off a terminal.
	Width int
	// Colour marks the findings' severities with ANSI colours (a
	// terminal without NO_COLOR); Terminal turns the terminal's line
	// wrap off around a diff, which must not be broken.
	Colour, Terminal bool
}

// Verdict is the gate's verdict on the document's findings; ok is false
// without a gate.
func (d *Document) Verdict() (v Verdict, ok bool) {
	if d.Run.Gate == nil {
		return Verdict{}, false
	}
	return d.Run.Gate.JudgeDocument(d), true
}
