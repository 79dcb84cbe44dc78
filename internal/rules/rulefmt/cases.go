package rulefmt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/results"
)

// A rule's cases are data beside it (internal/rules/builtin/tests/ID.yaml): each
// gives metrics per rank and cluster and facts, and the outcome the rule
// must reach on them (fired or clear, its severity, saving, ranks, words
// of its title or reason). docs/rules.md, "Testing a rule".

// CaseFile is the cases of one rule.
type CaseFile struct {
	File string
	// Rule is the id of the rule the cases are for; Line is where it is
	// named.
	Rule string
	Line int
	// NoFiredCase says why no case fires the rule (its texts read what
	// only a capture holds); "" when one does.
	NoFiredCase string
	Cases       []Case
}

// Case is one set of inputs and the outcome expected from them.
type Case struct {
	Name string
	Line int
	// Ranks is how many ranks (0..Ranks-1) the analysis has; each holds
	// Metrics, then its PerRank values.
	Ranks   int
	Metrics map[string]float64
	PerRank map[int]map[string]float64
	// Cluster are the cluster metrics (skew.*, collectives.*).
	Cluster map[string]float64
	// Facts are NAME=VALUE, as --fact takes them (env.NAME for an
	// environment variable).
	Facts  []string
	Expect Expect
}

// Expect is what a case expects of the rule's outcome; a field left out
// (zero) is not checked, but Status.
type Expect struct {
	Status   string
	Severity string
	// SavingUs is the saving in µs (within 0.05%); NoSaving: the finding
	// has no estimate.
	SavingUs *float64
	NoSaving bool
	Ranks    []int
	// Title and Reason are words the finding's title, or the outcome's
	// reason, holds.
	Title, Reason string
}

var (
	caseFileKeys = []string{"rule", "no_fired_case", "cases"}
	caseKeys     = []string{"name", "ranks", "metrics", "per_rank", "cluster", "facts", "expect"}
	expectKeys   = []string{"status", "severity", "saving_us", "ranks", "title", "reason"}
	caseStatuses = []string{results.StatusFired, results.StatusClear, results.StatusNotApplicable, results.StatusNotEvaluated, results.StatusFailed}
)

// ParseCases reads a case file. Its problems (unknown keys, metrics and
// facts, a cluster metric given per rank) are one errkind.Input list
// error, each with file:line:col.
func ParseCases(file string, data []byte) (*CaseFile, error) {
	l := &loader{file: file, lines: strings.Split(string(data), "\n")}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errkind.List(errkind.Input, []string{syntaxProblem(file, data, err)})
	}
	if len(doc.Content) == 0 {
		return nil, errkind.List(errkind.Input, []string{file + ": empty case file (expected rule: and cases:)"})
	}
	cf := &CaseFile{File: file}
	top := l.mapping(doc.Content[0], "case file", caseFileKeys)
	cf.Rule = l.str(top["rule"], "rule")
	if top["rule"] == nil {
		l.errf(doc.Content[0], "case file: missing rule (the id of the rule the cases are for)")
	} else {
		cf.Line = top["rule"].Line
	}
	cf.NoFiredCase = l.str(top["no_fired_case"], "no_fired_case")
	for i, n := range l.seq(top["cases"], "cases") {
		cf.Cases = append(cf.Cases, l.oneCase(n, i))
	}
	if len(cf.Cases) == 0 && len(l.problems) == 0 {
		l.errf(doc.Content[0], "case file: no cases")
	}
	if len(l.problems) > 0 {
		return nil, errkind.List(errkind.Input, l.problems)
	}
	return cf, nil
}

// oneCase reads case number idx.
func (l *loader) oneCase(n *yaml.Node, idx int) Case {
	m := l.mapping(n, fmt.Sprintf("case #%d", idx+1), caseKeys)
	c := Case{Name: l.str(m["name"], "name"), Line: n.Line, Ranks: 1, PerRank: map[int]map[string]float64{}}
	what := fmt.Sprintf("case %q", c.Name)
	if m["name"] == nil {
		what = fmt.Sprintf("case #%d", idx+1)
		l.errf(n, "%s: missing name", what)
	}
	if rn := m["ranks"]; rn != nil {
		v, err := strconv.Atoi(rn.Value)
		if rn.Kind != yaml.ScalarNode || err != nil || v < 1 {
			l.errf(rn, "%s: ranks: expected a count of ranks (1 or more), found %q", what, rn.Value)
		} else {
			c.Ranks = v
		}
	}
	c.Metrics = l.metrics(m["metrics"], what+": metrics", false)
	l.pairs(m["per_rank"], what+": per_rank", "rank: metrics", func(k, v *yaml.Node) {
		r, err := strconv.Atoi(k.Value)
		if err != nil || r < 0 || r >= c.Ranks {
			l.errf(k, "%s: per_rank: rank %q: expected 0..%d (ranks: %d)", what, k.Value, c.Ranks-1, c.Ranks)
			return
		}
		c.PerRank[r] = l.metrics(v, fmt.Sprintf("%s: per_rank %d", what, r), false)
	})
	c.Cluster = l.metrics(m["cluster"], what+": cluster", true)
	l.pairs(m["facts"], what+": facts", "name: value", func(k, v *yaml.Node) {
		c.Facts = append(c.Facts, k.Value+"="+l.factValue(k, v, what))
	})
	if en := m["expect"]; en != nil {
		c.Expect = l.expect(en, what)
	} else {
		l.errf(n, "%s: missing expect", what)
	}
	return c
}

// metrics reads name: number pairs of known metrics, per rank or of the
// cluster.
func (l *loader) metrics(n *yaml.Node, what string, cluster bool) map[string]float64 {
	out := map[string]float64{}
	l.pairs(n, what, "metric: number", func(k, v *yaml.Node) {
		d, ok := LookupMetric(k.Value)
		switch {
		case !ok:
			l.errf(k, "%s: unknown metric %q (closest: %s)", what, k.Value, strings.Join(Closest(k.Value, MetricNames(), 3), ", "))
			return
		case d.IsCluster() && !cluster:
			l.errf(k, "%s: %s is a cluster metric: give it under cluster", what, k.Value)
			return
		case !d.IsCluster() && cluster:
			l.errf(k, "%s: %s is a per-rank metric: give it under metrics or per_rank", what, k.Value)
			return
		}
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || err != nil {
			l.errf(v, "%s: %s: expected a number, found %q", what, k.Value, v.Value)
			return
		}
		out[k.Value] = f
	})
	return out
}

// factValue is a fact's value as --fact takes it (a list is 1,2,3);
// the fact's name is checked here, its value when the case runs.
func (l *loader) factValue(k, v *yaml.Node, what string) string {
	if _, ok := LookupFact(k.Value); !ok && !strings.HasPrefix(k.Value, "env.") {
		l.errf(k, "%s: unknown fact %q (closest: %s)", what, k.Value, strings.Join(Closest(k.Value, FactNames(), 3), ", "))
	}
	if v.Kind == yaml.SequenceNode {
		return strings.Join(l.strList(v, what+": "+k.Value), ",")
	}
	return l.str(v, what+": "+k.Value)
}

// expect reads a case's expect: status (required), severity, saving_us
// (a number or none), ranks, title and reason.
func (l *loader) expect(n *yaml.Node, what string) Expect {
	m := l.mapping(n, what+": expect", expectKeys)
	e := Expect{Status: l.str(m["status"], "status"), Severity: l.str(m["severity"], "severity"),
		Title: l.str(m["title"], "title"), Reason: l.str(m["reason"], "reason")}
	if !slices.Contains(caseStatuses, e.Status) {
		l.errf(n, "%s: expect: status %q (expected one of %s)", what, e.Status, strings.Join(caseStatuses, ", "))
	}
	if e.Severity != "" && !slices.Contains(severities[:4], e.Severity) {
		l.errf(m["severity"], "%s: expect: severity %q (expected high, medium, low or info)", what, e.Severity)
	}
	if sn := m["saving_us"]; sn != nil {
		f, err := strconv.ParseFloat(sn.Value, 64)
		switch {
		case sn.Value == "none":
			e.NoSaving = true
		case sn.Kind != yaml.ScalarNode || err != nil:
			l.errf(sn, "%s: expect: saving_us: expected a number of µs or none, found %q", what, sn.Value)
		default:
			e.SavingUs = &f
		}
	}
	for _, s := range l.strList(m["ranks"], what+": expect: ranks") {
		r, err := strconv.Atoi(s)
		if err != nil {
			l.errf(m["ranks"], "%s: expect: ranks: %q is not a rank", what, s)
		}
		e.Ranks = append(e.Ranks, r)
	}
	fired := e.Status == results.StatusFired
	if !fired && (e.Severity != "" || e.SavingUs != nil || e.NoSaving || e.Ranks != nil || e.Title != "") {
		l.errf(n, "%s: expect: severity, saving_us, ranks and title are a finding's: only with status fired", what)
	}
	return e
}
