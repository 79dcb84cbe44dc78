package results

import (
	"errors"
	"fmt"
)

// Gate is what fails a check: findings (budgets' included) at or above
// FailOn. A finding that read metrics of a file cut short fails it too
// when GatePartial (check --partial-findings gate), else it is only
// reported.
type Gate struct {
	FailOn      string
	GatePartial bool
}

// Verdict is a document's findings judged by a gate.
type Verdict struct {
	Gate
	// Findings counts every finding.
	Findings int
	// Failing are the findings that fail the check.
	Failing []Finding
	// Partial counts the findings at or above FailOn that read metrics of
	// a file cut short (failing or not, by GatePartial).
	Partial int
}

// AtOrAbove returns the findings whose severity is at least min.
func AtOrAbove(f []Finding, min string) []Finding {
	var out []Finding
	for _, x := range f {
		if SeverityRank(x.Severity) >= SeverityRank(min) {
			out = append(out, x)
		}
	}
	return out
}

// Judge applies the gate to findings.
func (g Gate) Judge(findings []Finding) Verdict {
	v := Verdict{Gate: g, Findings: len(findings)}
	atOrAbove := AtOrAbove(findings, g.FailOn)
	v.Failing = atOrAbove
	if !g.GatePartial {
		v.Failing = Whole(atOrAbove)
	}
	for _, f := range atOrAbove {
		if f.HasPartial() {
			v.Partial++
		}
	}
	return v
}

// Pass reports whether no finding fails the check.
func (v Verdict) Pass() bool { return len(v.Failing) == 0 }

// Summary is the verdict line of check's terminal output:
// "check: 3 finding(s), 1 at or above high: FAIL".
func (v Verdict) Summary() string {
	verdict := "PASS"
	if !v.Pass() {
		verdict = "FAIL"
	}
	partial := ""
	switch {
	case v.Partial > 0 && v.GatePartial:
		partial = fmt.Sprintf(" (%d of them from a truncated file)", v.Partial)
	case v.Partial > 0:
		partial = fmt.Sprintf(" (%d more from a truncated file, not gated: --partial-findings report)", v.Partial)
	}
	return fmt.Sprintf("check: %d finding(s), %d at or above %s%s: %s", v.Findings, len(v.Failing), v.FailOn, partial, verdict)
}

// Err is nil when the check passes, else what fails it: "2 finding(s) at
// or above high[, 1 of them from a truncated file]".
func (v Verdict) Err() error {
	if v.Pass() {
		return nil
	}
	msg := fmt.Sprintf("%d finding(s) at or above %s", len(v.Failing), v.FailOn)
	if v.GatePartial && v.Partial > 0 {
		msg += fmt.Sprintf(", %d of them from a truncated file", v.Partial)
	}
	return errors.New(msg)
}
