package rules

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/results"
)

// reBudgetPos is the file:line:col prefix of a problem in a --budget.
var reBudgetPos = regexp.MustCompile(`^--budget:\d+:\d+: `)

// AddBudgets parses budgets given one by one (check's --budget
// 'METRIC OP EXPR') into set. Each is parsed alone, and its problems, and
// those found while it runs, are named by its text rather than by a
// line:col of the YAML it is wrapped in; problems are a usage error that
// lists every one.
func AddBudgets(set *Set, budgets []string) error {
	var problems []string
	for _, x := range budgets {
		extra, err := Parse("--budget", fmt.Appendf(nil, "budgets:\n  - %q\n", x))
		switch {
		case errkind.Problems(err) != nil:
			for _, p := range errkind.Problems(err) {
				problems = append(problems, reBudgetPos.ReplaceAllLiteralString(p, "--budget '"+x+"': "))
			}
		case err != nil:
			return errkind.Wrap(errkind.Usage, err)
		default:
			for i := range extra.Budgets {
				extra.Budgets[i].File, extra.Budgets[i].Line = "--budget '"+x+"'", 0
			}
			set.Budgets = append(set.Budgets, extra.Budgets...)
		}
	}
	if len(problems) > 0 {
		return errkind.List(errkind.Usage, problems)
	}
	return nil
}

// Gate is what fails a check: findings (budgets' included) at or above
// FailOn. A finding that read metrics of a file cut short fails it too
// when GatePartial (check --partial-findings gate), else it is only
// reported.
type Gate struct {
	FailOn      string
	GatePartial bool
}

// Verdict is a report judged by a gate.
type Verdict struct {
	Gate
	// Findings counts every finding of the report.
	Findings int
	// Failing are the findings that fail the check.
	Failing []results.Finding
	// Partial counts the findings at or above FailOn that read metrics of
	// a file cut short (failing or not, by GatePartial).
	Partial int
}

// Judge applies the gate to rep.
func (g Gate) Judge(rep *Report) Verdict {
	v := Verdict{Gate: g, Findings: len(rep.Findings)}
	atOrAbove := AtOrAbove(rep.Findings, g.FailOn)
	v.Failing = atOrAbove
	if !g.GatePartial {
		v.Failing = results.Whole(atOrAbove)
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
