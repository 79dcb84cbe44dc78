package rules

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/rules/rulefmt"
)

// CaseResult is one case of a case file, run: Problems is empty when the
// rule did what the case expects.
type CaseResult struct {
	Case     *rulefmt.Case
	Outcome  results.Outcome
	Problems []string
}

// RunCases evaluates cf's rule, taken from set, on each case's inputs: an
// analysis of Ranks ranks holding the case's metrics, and its facts as
// --fact gives them. An error: the set has no such rule.
func RunCases(set *Set, cf *rulefmt.CaseFile) ([]CaseResult, error) {
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
		out[i] = CaseResult{Case: c}
		at := fmt.Sprintf("%s:%d: case %q", cf.File, c.Line, c.Name)
		facts, err := BuildFacts(caseResult(c), nil, c.Facts)
		if err != nil {
			out[i].Problems = []string{fmt.Sprintf("%s: %v", at, err)}
			continue
		}
		rep := Evaluate(one, &Input{Result: caseResult(c), Facts: facts})
		out[i].Outcome = rep.Outcomes[0]
		var f *results.Finding
		if len(rep.Findings) > 0 {
			f = &rep.Findings[0]
		}
		for _, p := range caseProblems(c.Expect, rep.Outcomes[0], f) {
			out[i].Problems = append(out[i].Problems, at+": "+p)
		}
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
	case e.SavingUs != nil && math.Abs(saving-*e.SavingUs) > 5e-4*math.Abs(*e.SavingUs)+1e-9:
		p = append(p, fmt.Sprintf("saving %s µs, expected %s µs", format(saving), format(*e.SavingUs)))
	}
	return p
}
