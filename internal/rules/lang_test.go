package rules

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// Every texts file in builtin/zh belongs to a rule file.
func TestBuiltinTextsFilesHaveRuleFiles(t *testing.T) {
	zh, err := fs.Glob(builtinFS, "builtin/zh/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, zh)
	for _, f := range zh {
		_, err := fs.Stat(builtinFS, path.Join("builtin", path.Base(f)))
		require.NoError(t, err, "%s has no rule file", f)
	}
}

// withoutRoutingAICPU is res with the routing Cumsum's AI CPU metrics
// dropped, so that aicpu-kernels counts those kernels as any AI CPU
// kernel: tracegen's scenarios run no other.
func withoutRoutingAICPU(res *analysis.Result) *analysis.Result {
	c := *res
	c.Ranks = nil
	for _, rr := range res.Ranks {
		r := *rr
		r.Metrics = maps.Clone(rr.Metrics)
		delete(r.Metrics, "moe.cumsum.aicpu.time_us")
		delete(r.Metrics, "moe.cumsum.aicpu.count")
		c.Ranks = append(c.Ranks, &r)
	}
	return &c
}

// langFacts are the fact sets the scenarios are evaluated with, so that
// every built-in rule fires on at least one of them.
var langFacts = [][]string{
	nil,
	{"vllm_ascend_version=v0.13.0rc1", "concurrency=2", "serving.mm_cache_hit_rate=0.2", "serving.prefix_cache_hit_rate=0.1", "serving.kv_cache_usage=0.8", "serving.prompt_tps=1200"},
	{"prefix_caching=false", "workload=training"},
}

// The Chinese templates render with the same vars as the English ones on
// tracegen's scenarios: the same rules fire with the same severity,
// ranks, saving and evidence values; no rule fails in either language;
// every title and fix in Chinese holds Chinese, and every built-in rule
// fired at least once.
func TestChineseTemplatesRender(t *testing.T) {
	set := builtin(t)
	fired := map[string]bool{}
	scenarios := append(append(tracegen.Scenarios(), tracegen.FieldReport()...), tracegen.FieldReport2()...)
	type named struct {
		name    string
		results []*analysis.Result
	}
	var runs []named
	for _, sc := range scenarios {
		results := []*analysis.Result{analyzedScenario(t, sc)}
		if sc.Name == "ep-fc1-cumsum" {
			results = append(results, withoutRoutingAICPU(results[0]))
		}
		runs = append(runs, named{sc.Name, results})
	}
	for _, sc := range tracegen.ServiceScenarios() {
		runs = append(runs, named{"service-" + sc.Name, []*analysis.Result{analyzedService(t, sc)}})
	}
	for _, run := range runs {
		for i, facts := range langFacts {
			for _, res := range run.results {
				t.Run(fmt.Sprintf("%s/%d", run.name, i), func(t *testing.T) {
					fs, err := BuildFacts(res, nil, facts)
					require.NoError(t, err)
					en := Evaluate(set, &Input{Result: res, Facts: fs})
					zh := Evaluate(set, &Input{Result: res, Facts: fs, Lang: lang.ZH})
					require.Empty(t, en.Failed())
					require.Empty(t, zh.Failed())
					require.Equal(t, lang.EN, en.Lang)
					require.Equal(t, lang.ZH, zh.Lang)
					require.Equal(t, len(en.Outcomes), len(zh.Outcomes))
					for j := range en.Outcomes {
						require.Equal(t, en.Outcomes[j].Status, zh.Outcomes[j].Status, en.Outcomes[j].Rule)
						require.Equal(t, en.Outcomes[j].Severity, zh.Outcomes[j].Severity, en.Outcomes[j].Rule)
					}
					require.Equal(t, len(en.Findings), len(zh.Findings))
					for j, e := range en.Findings {
						z := zh.Findings[j]
						fired[e.Rule] = true
						require.Equal(t, e.Rule, z.Rule)
						require.Equal(t, e.Ranks, z.Ranks, e.Rule)
						require.Equal(t, e.SavingUs, z.SavingUs, e.Rule)
						require.Equal(t, len(e.Evidence), len(z.Evidence), e.Rule)
						for k := range e.Evidence {
							require.Equal(t, e.Evidence[k].Metric, z.Evidence[k].Metric, e.Rule)
							require.Equal(t, e.Evidence[k].Value, z.Evidence[k].Value, e.Rule)
							require.Equal(t, e.Evidence[k].Note == "", z.Evidence[k].Note == "", e.Rule)
						}
						require.True(t, lang.HasHan(z.Title), "%s: %s", e.Rule, z.Title)
						require.True(t, lang.HasHan(z.Fix), "%s: %s", e.Rule, z.Fix)
						require.False(t, lang.HasHan(e.Title+e.Fix), "%s: English has no Chinese", e.Rule)
					}
				})
			}
		}
	}
	var missing []string
	for _, r := range set.Rules {
		if !fired[r.ID] {
			missing = append(missing, r.ID)
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "rules that fired on no scenario")
}

// A built-in rule's Chinese (builtin/zh/FILE) is read only when a run asks
// for Chinese: an English run over a scenario where rules fire decodes
// none of it.
func TestEnglishRunReadsNoChinese(t *testing.T) {
	files := &countingFS{FS: builtinFS, read: map[string]int{}}
	b := builtinRules
	b.FS = files
	set, err := rulefmt.Load(&b)
	require.NoError(t, err)
	res := analyzed(t, "ep-fc1-cumsum")
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	en := Evaluate(set, &Input{Result: res, Facts: fs, Lang: lang.EN})
	require.NotEmpty(t, en.Findings)
	for name := range files.read {
		require.False(t, strings.HasPrefix(name, "builtin/zh/"), "%s read by an English run", name)
	}
	zh := Evaluate(set, &Input{Result: res, Facts: fs, Lang: lang.ZH})
	require.Len(t, zh.Findings, len(en.Findings))
	for _, f := range zh.Findings {
		require.True(t, lang.HasHan(f.Title), "%s: %s", f.Rule, f.Title)
		require.Equal(t, 1, files.read["builtin/zh/"+path.Base(set.Lookup(f.Rule).File)], "%s: its Chinese read once", f.Rule)
	}
}

// countingFS counts the files read from FS, by name.
type countingFS struct {
	fs.FS
	mu   sync.Mutex
	read map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.read[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}
