package rules

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

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
//
// The gate never vouches for what it could not judge: a budget (Budgets
// names them) that could not be evaluated fails the check unless
// AllowMissing (check --allow-missing), and a check in which no rank was
// read whole (Ranks read, WholeRanks of them not partial) fails whatever
// GatePartial says.
type Gate struct {
	FailOn      string
	GatePartial bool
	// AllowMissing lets a budget that cannot be evaluated pass.
	AllowMissing bool
	// Budgets are the budgets' ids (Set.Budgets): their outcomes are
	// judged by AllowMissing.
	Budgets []*Budget
	// Ranks is how many ranks were analyzed, WholeRanks how many of them
	// were read whole (not partial); Ranks 0 skips that judgement.
	Ranks, WholeRanks int
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
	// Unjudged are the budgets that could not be evaluated and fail the
	// check (none with AllowMissing).
	Unjudged []results.Outcome
	// NoWholeRank says why the check fails although no finding does: no
	// rank was read whole ("" otherwise).
	NoWholeRank string
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
	if !g.AllowMissing {
		ids := make(map[string]bool, len(g.Budgets))
		for _, b := range g.Budgets {
			ids[b.ID] = true
		}
		for _, o := range rep.Outcomes {
			if ids[o.Rule] && o.Status == results.StatusNotEvaluated {
				v.Unjudged = append(v.Unjudged, o)
			}
		}
	}
	if g.Ranks > 0 && g.WholeRanks == 0 {
		v.NoWholeRank = fmt.Sprintf("no rank was read whole (all %d are partial: a file cut short or damaged), so the check cannot vouch for the capture", g.Ranks)
	}
	return v
}

// Pass reports whether nothing fails the check: no finding, no budget
// that could not be evaluated (without AllowMissing), and a rank read
// whole.
func (v Verdict) Pass() bool {
	return len(v.Failing) == 0 && len(v.Unjudged) == 0 && v.NoWholeRank == ""
}

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
	extra := ""
	if len(v.Unjudged) > 0 {
		extra += fmt.Sprintf(", %d budget(s) not evaluated", len(v.Unjudged))
	}
	if v.NoWholeRank != "" {
		extra += ", no rank read whole"
	}
	return fmt.Sprintf("check: %d finding(s), %d at or above %s%s%s: %s", v.Findings, len(v.Failing), v.FailOn, partial, extra, verdict)
}

// Err is nil when the check passes, else what fails it: "2 finding(s) at
// or above high[, 1 of them from a truncated file]", then, after "; ",
// the budgets that could not be evaluated and why, and why no
// rank is whole.
func (v Verdict) Err() error {
	if v.Pass() {
		return nil
	}
	var lines []string
	if len(v.Failing) > 0 {
		msg := fmt.Sprintf("%d finding(s) at or above %s", len(v.Failing), v.FailOn)
		if v.GatePartial && v.Partial > 0 {
			msg += fmt.Sprintf(", %d of them from a truncated file", v.Partial)
		}
		lines = append(lines, msg)
	}
	for _, o := range v.Unjudged {
		name := o.Rule
		if !strings.HasPrefix(name, "budget") {
			name = "budget " + name
		}
		lines = append(lines, fmt.Sprintf("%s could not be evaluated: %s (--allow-missing lets it pass)", name, o.Reason))
	}
	if v.NoWholeRank != "" {
		lines = append(lines, v.NoWholeRank)
	}
	return errors.New(strings.Join(lines, "; "))
}
