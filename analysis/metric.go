package analysis

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/parser/model"
)

// Metric declares one metric a pass sets, or a family of them: a name with
// one variable part in angle brackets (hccl.<type>.time_us). Each metric is
// declared once, next to its pass, as a Metric* (or Family*) constant in
// the block "Metrics of the NAME pass", whose line comment is its unit and
// doc ("µs: sum of HCCL big ops"; a family's "count, base
// MetricHCCLTotalCount: ..."); go generate ./results/metric writes the
// rows of metrics_gen.go from them, and the pass's Metrics field is its
// slice of those rows. MetricTable gathers them. Rules, renderers and the
// comparison name metrics through the constants.
type Metric struct {
	Name string
	// Unit is µs, count, ratio, tokens, rank or stream (a stream id).
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
var metricUnits = []string{"µs", "count", "ratio", "tokens", "rank", "stream", "stage"}

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
	once     sync.Once
	all      []Metric
	patterns []*regexp.Regexp
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
				t.all = append(t.all, m)
				t.patterns = append(t.patterns, familyPattern(m.Name))
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

// familyPattern matches the members of a family (a plain name: itself).
func familyPattern(name string) *regexp.Regexp {
	p := regexp.QuoteMeta(name)
	for ph, re := range MetricPlaceholders {
		p = strings.ReplaceAll(p, regexp.QuoteMeta(ph), re)
	}
	return regexp.MustCompile("^" + p + "$")
}

// LookupMetric returns the declaration a metric name belongs to: the
// metric itself, or the family it is a member of.
func LookupMetric(name string) (Metric, bool) {
	loadMetricTable()
	t := &metricTable
	if i, ok := t.exact[name]; ok {
		return t.all[i], true
	}
	for i, re := range t.patterns {
		if t.all[i].IsFamily() && re.MatchString(name) {
			return t.all[i], true
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
