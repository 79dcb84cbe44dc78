package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// CaseResult is one case of a case file, run: Problems is empty when the
// rule did what the case expects.
type CaseResult struct {
	Case     *rulefmt.Case
	Outcome  results.Outcome
	Problems []string
	// Where is the case's FILE:LINE.
	Where string
}

// RunCaseFile parses the case file data (rulefmt.ParseCases: its problems
// are an input error) and runs its cases, the rule writing in language l.
func RunCaseFile(set *Set, file string, data []byte, l string) ([]CaseResult, error) {
	cf, err := rulefmt.ParseCases(file, data)
	if err != nil {
		return nil, err
	}
	out, err := RunCases(set, cf, l)
	return out, errkind.Wrap(errkind.Input, err)
}

// RunCases evaluates cf's rule, taken from set, on each case's inputs: an
// analysis of Ranks ranks holding the case's metrics, and its facts as
// --fact gives them; the rule writes its texts in language l ("" is
// English). An error: the set has no such rule.
func RunCases(set *Set, cf *rulefmt.CaseFile, l string) ([]CaseResult, error) {
	r := set.Lookup(cf.Rule)
	if r == nil {
		var ids []string
		for _, x := range set.Rules {
			ids = append(ids, x.ID)
		}
		return nil, fmt.Errorf("%s:%d: no rule %q (closest: %s)", cf.File, cf.Line, cf.Rule, strings.Join(rulefmt.Closest(cf.Rule, ids, 3), ", "))
	}
	one := &Set{Rules: []*Rule{r}}
	out := make([]CaseResult, len(cf.Cases))
	for i := range cf.Cases {
		c := &cf.Cases[i]
		out[i] = CaseResult{Case: c, Where: fmt.Sprintf("%s:%d", cf.File, c.Line)}
		facts, err := BuildFacts(caseResult(c), nil, c.Facts)
		if err != nil {
			// the facts are --fact values: say where they were given
			out[i].Problems = []string{"facts: " + strings.TrimPrefix(err.Error(), "--fact ")}
			continue
		}
		rep := Evaluate(one, &Input{Result: caseResult(c), Facts: facts, Lang: l})
		out[i].Outcome = rep.Outcomes[0]
		var f *results.Finding
		if len(rep.Findings) > 0 {
			f = &rep.Findings[0].Finding
		}
		out[i].Problems = caseProblems(c.Expect, rep.Outcomes[0], f)
	}
	return out, nil
}

// caseResult is the analysis a case gives: its ranks' metrics and the
// cluster's.
func caseResult(c *rulefmt.Case) *analysis.Result {
	res := &analysis.Result{Path: "case " + c.Name}
	for r := range c.Ranks {
		m := maps.Clone(c.Metrics)
		maps.Copy(m, c.PerRank[r])
		res.Ranks = append(res.Ranks, &analysis.RankResult{Rank: r, Metrics: m, Unavailable: map[string]string{}})
	}
	if len(c.Cluster) > 0 {
		res.Cluster = &analysis.ClusterResult{Ranks: c.Ranks, Metrics: maps.Clone(c.Cluster), Unavailable: map[string]string{}}
	}
	return res
}

// caseProblems says how the outcome o and finding f (nil: none) differ
// from what e expects.
func caseProblems(e rulefmt.Expect, o results.Outcome, f *results.Finding) []string {
	var p []string
	if o.Status != e.Status {
		why := ""
		if o.Reason != "" {
			why = " (" + o.Reason + ")"
		}
		return []string{fmt.Sprintf("status %s%s, expected %s", o.Status, why, e.Status)}
	}
	if e.Reason != "" && !strings.Contains(o.Reason, e.Reason) {
		p = append(p, fmt.Sprintf("reason %q does not say %q", o.Reason, e.Reason))
	}
	if f == nil {
		return p
	}
	if e.Severity != "" && f.Severity != e.Severity {
		p = append(p, fmt.Sprintf("severity %s, expected %s", f.Severity, e.Severity))
	}
	if e.Title != "" && !strings.Contains(f.Title, e.Title) {
		p = append(p, fmt.Sprintf("title %q does not say %q", f.Title, e.Title))
	}
	if e.Ranks != nil && !slices.Equal(f.Ranks, e.Ranks) {
		p = append(p, fmt.Sprintf("ranks %v, expected %v", f.Ranks, e.Ranks))
	}
	saving, estimated := f.Saving()
	switch {
	case e.NoSaving && estimated:
		p = append(p, fmt.Sprintf("saving %s µs, expected none", format(saving)))
	case e.SavingUs != nil && !estimated:
		p = append(p, fmt.Sprintf("no saving estimate, expected %s µs", format(*e.SavingUs)))
	case e.SavingUs != nil && !within(saving, *e.SavingUs, 5e-4):
		p = append(p, fmt.Sprintf("saving %s µs, expected %s µs", format(saving), format(*e.SavingUs)))
	}
	return p
}

// within reports whether got is want to a relative tolerance tol.
func within(got, want, tol float64) bool {
	d, m := got-want, want
	if d < 0 {
		d = -d
	}
	if m < 0 {
		m = -m
	}
	return d <= tol*m+1e-9
}
