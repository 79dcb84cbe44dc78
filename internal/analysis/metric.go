package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Metric declares one metric a pass sets, or a family of them: a name with
// one variable part in angle brackets (hccl.<type>.time_us). Each metric is
// declared once, next to its pass, as a Metric* (or Family*) constant in
// the block "Metrics of the NAME pass", whose line comment is its unit and
// doc ("µs: sum of HCCL big ops"; a family's "count, base
// MetricHCCLTotalCount: ..."); go generate ./internal/results/metric writes the
// rows of metrics_gen.go from them, and the pass's Metrics field is its
// slice of those rows. MetricTable gathers them. Rules, renderers and the
// comparison name metrics through the constants.
type Metric struct {
	Name string
	// Unit is µs, ms, count, ratio, tokens, tokens/s, rank or stream (a
	// stream id).
	Unit string
	// Doc is one line: what the number is.
	Doc string
	// Base, for a family, is the metric whose being measured on a rank
	// makes an absent member 0 there (no such collective or wait
	// happened); "" when an absent member is unknown.
	Base string
	// Kind and Pass are filled in by MetricTable from the pass that
	// declares the metric.
	Kind Kind
	Pass string
}

// Kind says whether a metric has one value per rank or one per profile.
type Kind string

// Metric kinds.
const (
	// RankMetric is set by a rank pass: ranks[].metrics.
	RankMetric Kind = "rank"
	// ClusterMetric is set by a cluster pass over every rank's results:
	// cluster.metrics.
	ClusterMetric Kind = "cluster"
)

// Units a metric may have.
var metricUnits = []string{"µs", "ms", "count", "ratio", "tokens", "tokens/s", "rank", "stream", "stage"}

// IsCluster reports whether the metric is a cross-rank one.
func (m Metric) IsCluster() bool { return m.Kind == ClusterMetric }

// IsFamily reports whether the name has a variable part.
func (m Metric) IsFamily() bool { return strings.Contains(m.Name, "<") }

// Family is the name of a metric family: one variable part in angle
// brackets, e.g. "hccl.<type>.time_us".
type Family string

// Of returns the family member for the variable part v:
// FamilyHCCLTypeUs.Of("allgather") is "hccl.allgather.time_us".
func (f Family) Of(v string) string {
	s := string(f)
	i, j := strings.IndexByte(s, '<'), strings.IndexByte(s, '>')
	// one copy for every rank: a finished rank keeps its metric names
	return keepName(s[:i] + v + s[j+1:])
}

// MetricPlaceholders are the variable parts of family names and the
// members they stand for (a regular expression).
var MetricPlaceholders = map[string]string{
	"<type>":  "(?:" + strings.Join(model.HCCLTypes(), "|") + ")",
	"<group>": `[A-Za-z0-9_]+`,
	"<id>":    `[0-9]+`,
	"<q>":     "(?:" + strings.Join(SkewQuantities, "|") + ")",
}

var metricTable struct {
	once sync.Once
	all  []Metric
	// families index all's families, patterns their members' patterns
	// (a plain name is looked up in exact: no pattern is compiled for it)
	families []int
	patterns []familyMatcher
	exact    map[string]int
}

// MetricTable returns every metric the passes declare: the rank passes in
// registry order, then the cluster passes.
func MetricTable() []Metric {
	loadMetricTable()
	return metricTable.all
}

func loadMetricTable() {
	metricTable.once.Do(func() {
		t := &metricTable
		t.exact = map[string]int{}
		add := func(pass string, kind Kind, ms []Metric) {
			for _, m := range ms {
				m.Pass, m.Kind = pass, kind
				t.exact[m.Name] = len(t.all)
				if m.IsFamily() {
					t.families = append(t.families, len(t.all))
					t.patterns = append(t.patterns, newFamilyMatcher(m.Name))
				}
				t.all = append(t.all, m)
			}
		}
		for _, p := range Passes {
			add(p.Name, RankMetric, p.Metrics)
		}
		for _, p := range ClusterPasses {
			add(p.Name, ClusterMetric, p.Metrics)
		}
	})
}

// familyMatcher matches the members of a family: the name's literal parts
// and its placeholders (MetricPlaceholders), matched as the regular
// expression ^name$ with each placeholder replaced by its pattern would
// match (TestFamilyMatcherIsItsRegexp), without compiling one: the
// catalog's families cost 1.9 M instructions to compile, a quarter of them
// for every run.
type familyMatcher []familyPart

// familyPart is a literal (ph == "") or a placeholder: one of alts
// (<type>, <q>), else one or more bytes of its class (<group>, <id>).
type familyPart struct {
	lit, ph string
	alts    []string
}

func newFamilyMatcher(name string) familyMatcher {
	var m familyMatcher
	lit := 0
	for i := 0; i < len(name); i++ {
		if name[i] != '<' {
			continue
		}
		j := strings.IndexByte(name[i:], '>')
		if j < 0 {
			break
		}
		ph := name[i : i+j+1]
		if _, ok := MetricPlaceholders[ph]; !ok {
			continue
		}
		if lit < i {
			m = append(m, familyPart{lit: name[lit:i]})
		}
		var alts []string
		switch ph {
		case "<type>":
			alts = model.HCCLTypes()
		case "<q>":
			alts = SkewQuantities
		}
		m = append(m, familyPart{ph: ph, alts: alts})
		i += j
		lit = i + 1
	}
	if lit < len(name) {
		m = append(m, familyPart{lit: name[lit:]})
	}
	return m
}

// match reports whether s is a member of the family.
func (m familyMatcher) match(s string) bool {
	if len(m) == 0 {
		return s == ""
	}
	p, rest := m[0], m[1:]
	var in func(c byte) bool
	switch p.ph {
	case "":
		return strings.HasPrefix(s, p.lit) && rest.match(s[len(p.lit):])
	case "<group>":
		in = func(c byte) bool {
			return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
		}
	case "<id>":
		in = func(c byte) bool { return c >= '0' && c <= '9' }
	}
	for _, a := range p.alts {
		if strings.HasPrefix(s, a) && rest.match(s[len(a):]) {
			return true
		}
	}
	if in != nil {
		for n := 1; n <= len(s) && in(s[n-1]); n++ {
			if rest.match(s[n:]) {
				return true
			}
		}
	}
	return false
}

// LookupMetric returns the declaration a metric name belongs to: the
// metric itself, or the family it is a member of.
func LookupMetric(name string) (Metric, bool) {
	loadMetricTable()
	t := &metricTable
	if i, ok := t.exact[name]; ok {
		return t.all[i], true
	}
	for k, fm := range t.patterns {
		if fm.match(name) {
			return t.all[t.families[k]], true
		}
	}
	return Metric{}, false
}

// strictMetrics (set by tests) makes the runners report every metric a
// pass sets or calls unavailable that it does not declare, as an error of
// that pass.
var strictMetrics bool

// undeclared returns an error for each name in set (and each unavailable
// metric) that pass does not declare with that kind.
func undeclared(pass string, kind Kind, rank int, set map[string]float64, unavailable map[string]string) []PassError {
	var errs []PassError
	check := func(name, what string) {
		m, ok := LookupMetric(name)
		if ok && m.Pass == pass && m.Kind == kind {
			return
		}
		errs = append(errs, PassError{Pass: pass, Rank: rank, Message: fmt.Sprintf("internal error: %s undeclared %s metric %s", what, kind, name)})
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		check(name, "sets")
	}
	for _, name := range slices.Sorted(maps.Keys(unavailable)) {
		if !notMetric(name) {
			check(name, "calls unavailable")
		}
	}
	return errs
}

// notMetric: unavailable keys that are not metrics: a pass's failure, a
// family (hccl.group.*), the per-step list and its fields, the slow-rank
// list.
func notMetric(key string) bool {
	return strings.HasPrefix(key, "pass.") || strings.HasSuffix(key, ".*") || key == "steps" ||
		strings.HasPrefix(key, "steps.") || key == "slow_ranks"
}
