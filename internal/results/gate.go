package results

import (
	"errors"
	"fmt"
	"strings"
)

// Gate is what fails a check: findings (budgets' included) at or above
// FailOn. A finding that read metrics of a file cut short fails it too
// when GatePartial (check --partial-findings gate), else it is only
// reported.
//
// The gate never vouches for what it could not judge: a budget that could
// not be evaluated fails the check unless AllowMissing (check
// --allow-missing), and a check in which no rank was read whole fails
// whatever GatePartial says.
type Gate struct {
	FailOn      string
	GatePartial bool
	// AllowMissing lets a budget that cannot be evaluated pass.
	AllowMissing bool
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
	// Unjudged are the budgets that could not be evaluated and fail the
	// check (none with AllowMissing).
	Unjudged []Outcome
	// NoWholeRank says why the check fails although no finding does: no
	// rank was read whole ("" otherwise).
	NoWholeRank string
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

// JudgeDocument applies the gate to doc: its findings (Judge), its budgets
// that could not be evaluated (the rule set's budgets, Detail.RuleSet,
// whose outcome is not_evaluated; none with AllowMissing) and whether any
// of its ranks was read whole.
func (g Gate) JudgeDocument(doc *Document) Verdict {
	v := g.Judge(doc.Findings)
	if !g.AllowMissing {
		budgets := map[string]bool{}
		for _, r := range doc.Detail.RuleSet {
			if r.Budget != "" {
				budgets[r.ID] = true
			}
		}
		for _, o := range doc.Rules {
			if budgets[o.Rule] && o.Status == StatusNotEvaluated {
				v.Unjudged = append(v.Unjudged, o)
			}
		}
	}
	whole := 0
	for _, r := range doc.Ranks {
		if !r.Partial {
			whole++
		}
	}
	if len(doc.Ranks) > 0 && whole == 0 {
		v.NoWholeRank = fmt.Sprintf("no rank was read whole (all %d are partial: a file cut short or damaged), so the check cannot vouch for the capture", len(doc.Ranks))
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
// the budgets that could not be evaluated and why, and why no rank is
// whole.
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
