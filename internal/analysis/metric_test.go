package analysis

import (
	"context"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/inputs/service"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/tracegen"
)

var reMetricName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.([a-z0-9_]+|<[a-z]+>))+$`)

// Every declaration is well formed, once, and names its pass and kind.
func TestMetricTableValid(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range MetricTable() {
		require.Regexp(t, reMetricName, m.Name)
		require.False(t, seen[m.Name], "%s declared twice", m.Name)
		seen[m.Name] = true
		require.Contains(t, metricUnits, m.Unit, m.Name)
		require.NotEmpty(t, strings.TrimSpace(m.Doc), m.Name)
		require.NotContains(t, m.Doc, "\n", "%s: the doc is one line", m.Name)
		require.NotEmpty(t, m.Pass, m.Name)
		require.Contains(t, []Kind{RankMetric, ClusterMetric}, m.Kind, m.Name)
		if m.IsFamily() {
			ph := regexp.MustCompile(`<[a-z]+>`).FindAllString(m.Name, -1)
			// one variable part; two for hccl.group.<group>.<type>.* (built
			// with HCCLGroupTypeMetric)
			require.True(t, len(ph) == 1 || len(ph) == 2 && ph[0] != ph[1], "%s: a family has one variable part (or two different ones)", m.Name)
			require.Contains(t, MetricPlaceholders, ph[0], m.Name)
		}
		if m.Base != "" {
			base, ok := LookupMetric(m.Base)
			require.True(t, ok, "%s: base %s", m.Name, m.Base)
			require.True(t, m.IsFamily() && !base.IsFamily() && base.Kind == m.Kind, "%s: base %s", m.Name, m.Base)
		}
		got, ok := LookupMetric(m.Name)
		require.True(t, ok, m.Name)
		require.Equal(t, m, got)
	}
	require.Equal(t, "hccl.allgather.time_us", FamilyHCCLTypeUs.Of("allgather"))
	// the doc written in the constant's comment lists the model's types
	hc, _ := LookupMetric(string(FamilyHCCLTypeUs))
	require.Equal(t, "HCCL big ops of one type: "+strings.Join(model.HCCLTypes(), ", "), hc.Doc)
	require.Equal(t, "event_wait.stream.2.count", FamilyEventWaitStreamCount.Of("2"))
	m, ok := LookupMetric("skew.free.max_rank")
	require.True(t, ok)
	require.Equal(t, Metric{Name: "skew.<q>.max_rank", Unit: "rank", Doc: "the rank holding that maximum", Kind: ClusterMetric, Pass: "skew"}, m)
	for _, n := range []string{"hccl.nothing.time_us", "skew.moe.max_rank", "event_wait.stream.x.count", "moe.cumsum"} {
		_, ok := LookupMetric(n)
		require.False(t, ok, n)
	}
}

// strictAnalyze analyzes p with strictMetrics on: a pass that sets (or
// calls unavailable) a metric it does not declare fails with an error.
func strictAnalyze(t *testing.T, p *gather.Set[*model.Rank]) *Result {
	t.Helper()
	strictMetrics = true
	defer func() { strictMetrics = false }()
	res, err := analyzeProfile(p)
	require.NoError(t, err)
	require.Empty(t, res.Errors())
	return res
}

// handMadeExperts is handMadeLoads with the updated ratios of a
// vLLM-Ascend summary line, so that every experts.* metric is measured.
func handMadeExperts() *model.ExpertLoads {
	x := handMadeLoads()
	x.Logs[0].Values["updated_mean"], x.Logs[0].Values["updated_max"] = 1.1, 1.2
	return x
}

// Every metric a pass sets on generated traces (and on a hand-made expert
// input) is declared by that pass, and every declared metric is set by
// some pass on one of them.
func TestMetricTableMatchesPasses(t *testing.T) {
	set := map[string]bool{}
	record := func(metrics map[string]float64) {
		for name := range metrics {
			m, ok := LookupMetric(name)
			require.True(t, ok, name)
			set[m.Name] = true
		}
	}
	var scs []tracegen.Scenario
	for _, name := range []string{"ep-fc1-cumsum", "hot-experts", "captured-batch", "clean-steps"} {
		sc, ok := tracegen.Lookup(name)
		require.True(t, ok, name)
		scs = append(scs, sc)
	}
	// the MC2 dispatcher: dispatch/combine waits across EP ranks
	scs = append(scs, tracegen.DispatcherScenario("mc2"))
	// two pipeline stages, the second heavier: the pipeline.* metrics
	pp, _ := tracegen.Lookup("clean-steps")
	pp.Ranks, pp.TP, pp.PP, pp.StageFactor = 8, 4, 2, 1.5
	scs = append(scs, pp)
	for _, sc := range scs {
		dir := t.TempDir()
		_, err := tracegen.Generate(dir, sc)
		require.NoError(t, err)
		p, err := gather.Models(context.Background(), dir, gather.Options{})
		require.NoError(t, err)
		res := strictAnalyze(t, p)
		for _, rr := range res.Ranks {
			record(rr.Metrics)
		}
		record(res.Cluster.Metrics)
	}
	record(strictAnalyze(t, &gather.Set[*model.Rank]{Experts: handMadeExperts()}).Cluster.Metrics)
	for _, sc := range tracegen.ServiceScenarios() {
		dir := t.TempDir()
		_, err := tracegen.GenerateService(dir, sc, tracegen.ServiceDatetime)
		require.NoError(t, err)
		sp, err := service.Read(dir)
		require.NoError(t, err)
		got, _ := serviceMetricsOf(t, sp)
		record(got)
	}
	record(joinedServiceMetrics(t))
	var never []string
	for _, m := range MetricTable() {
		if !set[m.Name] {
			never = append(never, m.Name)
		}
	}
	require.Empty(t, never, "declared metrics no pass set")
}

// joinedServiceMetrics are the cluster metrics of a device capture (the A3
// system's rank 0) run with the service folder of the same run.
func joinedServiceMetrics(t *testing.T) map[string]float64 {
	t.Helper()
	dir := t.TempDir()
	res, _, steps := fieldCapture(t, dir)
	_, err := tracegen.GenerateServiceJoined(filepath.Join(dir, "service"), steps, 120, 4, 4)
	require.NoError(t, err)
	sp, err := service.Read(filepath.Join(dir, "service"))
	require.NoError(t, err)
	strictMetrics = true
	defer func() { strictMetrics = false }()
	cr := RunClusterWith(res.Ranks, ClusterInputs{Service: sp})
	require.Empty(t, cr.Errors)
	return cr.Metrics
}

// The strict runner catches a pass that sets a metric it does not declare.
func TestStrictMetricsCatchesUndeclared(t *testing.T) {
	rogue := &Pass{Name: "rogue", Doc: "sets what it does not declare", Run: func(ctx *Context) (any, error) {
		ctx.SetCount(MetricHCCLTotalCount, 1) // the hccl pass's
		ctx.Set("rogue.value", 1)
		return nil, nil
	}}
	strictMetrics = true
	defer func() { strictMetrics = false }()
	_, _, errs, _ := runRank(&model.Rank{}, []*Pass{rogue})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Message)
	}
	require.Equal(t, []string{
		"internal error: sets undeclared rank metric hccl.total.count",
		"internal error: sets undeclared rank metric rogue.value",
	}, msgs)
}

// docs/json.md lists every metric (its generated table, see rules'
// TestDocsInSync).
func TestJSONDocListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile("../../docs/json.md")
	require.NoError(t, err)
	var missing []string
	for _, m := range MetricTable() {
		if !strings.Contains(string(b), "| `"+m.Name+"` |") {
			missing = append(missing, m.Name)
		}
	}
	require.Empty(t, missing, "docs/json.md lacks these metrics")
}

// Outside the passes, metric names come from the table's constants: no
// other package's code spells one as a string literal (tests and the
// trace generator, which states the ground truth, may).
// generatedFile matches Go's generated-code header.
var generatedFile = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func TestNoMetricNameLiterals(t *testing.T) {
	var found []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "analysis", "tracegen", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generatedFile.Match(src) {
			return nil // generated from this table (internal/results/metric/names.go)
		}
		var s scanner.Scanner
		fset := token.NewFileSet()
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.STRING {
				continue
			}
			if v, err := strconv.Unquote(lit); err == nil {
				if _, ok := LookupMetric(v); ok {
					found = append(found, fmt.Sprintf("%s: %s", fset.Position(pos), lit))
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "metric names spelled as literals: use the analysis.Metric* constants and Family* values")
}

// familyRegexp is what familyMatcher replaced: the family name with each
// placeholder replaced by its pattern, anchored.
func familyRegexp(name string) *regexp.Regexp {
	p := regexp.QuoteMeta(name)
	for ph, re := range MetricPlaceholders {
		p = strings.ReplaceAll(p, regexp.QuoteMeta(ph), re)
	}
	return regexp.MustCompile("^" + p + "$")
}

// Every family's matcher accepts exactly what its regular expression
// accepts, on every family's members of every placeholder value, on the
// other metrics' names, and on near misses.
func TestFamilyMatcherIsItsRegexp(t *testing.T) {
	vals := map[string][]string{
		"<type>":  model.HCCLTypes(),
		"<q>":     SkewQuantities,
		"<group>": {"tp", "ep", "dp_0", "A9", "x", "tp.ep", "", "-"},
		"<id>":    {"0", "2", "17", "x", "", "1a"},
	}
	var names []string
	for _, m := range MetricTable() {
		names = append(names, m.Name, m.Name+"x", "x"+m.Name, strings.TrimSuffix(m.Name, "_us"))
		if !m.IsFamily() {
			continue
		}
		for ph, vs := range vals {
			for _, v := range vs {
				n := strings.ReplaceAll(m.Name, ph, v)
				names = append(names, n)
				for ph2, vs2 := range vals {
					for _, v2 := range vs2 {
						names = append(names, strings.ReplaceAll(n, ph2, v2))
					}
				}
			}
		}
	}
	checked := 0
	for _, m := range MetricTable() {
		if !m.IsFamily() {
			continue
		}
		re, fm := familyRegexp(m.Name), newFamilyMatcher(m.Name)
		for _, n := range names {
			require.Equal(t, re.MatchString(n), fm.match(n), "family %s, name %q", m.Name, n)
			if fm.match(n) {
				checked++
			}
		}
	}
	require.Greater(t, checked, 100)
}
