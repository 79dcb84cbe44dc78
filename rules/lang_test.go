package rules

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// Every built-in rule carries Chinese for each English text it has: the
// summary, title, fix, why and every evidence note.
func TestBuiltinRulesHaveChinese(t *testing.T) {
	set := builtinEager(t)
	for _, r := range set.Rules {
		zh, err := r.textsErr(lang.ZH)
		require.NoError(t, err, r.ID)
		require.NotNil(t, zh, "%s: no zh: block", r.ID)
		require.True(t, lang.HasHan(zh.Summary), "%s: zh.summary", r.ID)
		require.NotNil(t, zh.Title, "%s: zh.title", r.ID)
		require.True(t, lang.HasHan(zh.Title.Source), "%s: zh.title", r.ID)
		require.NotNil(t, zh.Fix, "%s: zh.fix", r.ID)
		require.True(t, lang.HasHan(zh.Fix.Source), "%s: zh.fix", r.ID)
		require.True(t, lang.HasHan(zh.Why), "%s: zh.why", r.ID)
		for _, es := range r.Evidence {
			if es.Note != nil {
				require.NotNil(t, zh.Notes[es.Metric], "%s: zh note of evidence %s", r.ID, es.Metric)
				require.True(t, lang.HasHan(zh.Notes[es.Metric].Source), "%s: zh note of %s", r.ID, es.Metric)
			}
		}
	}
}

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
	for _, sc := range scenarios {
		results := []*analysis.Result{analyzedScenario(t, sc)}
		if sc.Name == "ep-fc1-cumsum" {
			results = append(results, withoutRoutingAICPU(results[0]))
		}
		for i, facts := range langFacts {
			for _, res := range results {
				t.Run(fmt.Sprintf("%s/%d", sc.Name, i), func(t *testing.T) {
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

// A rule file's zh: block is checked like the English texts: its keys,
// its templates, and each evidence note names an evidence item with an
// English note.
func TestZHBlockProblems(t *testing.T) {
	src := `rules:
  - id: my-rule
    title: "idle {{ pct(0.5) }}"
    when: "true"
    fix: "wait"
    evidence:
      - metric: overlap.free.time_us
        note: idle
      - metric: device.window.time_us
    zh:
      titel: "空闲"
      fix: "等待 {{ pct( }}"
      evidence:
        - metric: device.window.time_us
          note: 窗口
`
	_, err := Parse("my.yaml", []byte(src))
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, `my.yaml:11:7: rule my-rule: zh: unknown key "titel"`)
	require.Contains(t, msg, "my.yaml:12:")
	require.Contains(t, msg, "zh.fix: unexpected token EOF")
	require.Contains(t, msg, `my.yaml:14:19: rule my-rule: zh.evidence: the rule has no evidence item "device.window.time_us" with a note`)

	ok := strings.NewReplacer("titel", "title", "{{ pct( }}", "", "device.window.time_us\n          note", "overlap.free.time_us\n          note").Replace(src)
	set, err := Parse("my.yaml", []byte(ok))
	require.NoError(t, err)
	r := set.Rules[0]
	require.Equal(t, "空闲", r.TitleIn(lang.ZH).Source)
	require.Equal(t, "idle {{ pct(0.5) }}", r.TitleIn(lang.EN).Source)
	require.Equal(t, "", r.SummaryIn(lang.ZH), "no zh summary: the English one (none)")
	require.Equal(t, "窗口", r.noteIn(r.Evidence[0], lang.ZH).Source)
	require.Nil(t, r.noteIn(r.Evidence[1], lang.ZH))
}

// A built-in rule's Chinese (builtin/zh/FILE) is read only when a run asks
// for Chinese: an English run over a scenario where rules fire decodes
// none of it.
func TestEnglishRunReadsNoChinese(t *testing.T) {
	set, err := Load()
	require.NoError(t, err)
	res := analyzed(t, "ep-fc1-cumsum")
	fs, err := BuildFacts(res, nil, nil)
	require.NoError(t, err)
	en := Evaluate(set, &Input{Result: res, Facts: fs, Lang: lang.EN})
	require.NotEmpty(t, en.Findings)
	for _, r := range set.Rules {
		require.NotNil(t, r.zhLazy, "%s: its Chinese is not in builtin/zh", r.ID)
		require.NotNil(t, r.zhLazy.build, "%s: Chinese read by an English run", r.ID)
	}
	zh := Evaluate(set, &Input{Result: res, Facts: fs, Lang: lang.ZH})
	require.Len(t, zh.Findings, len(en.Findings))
	for _, f := range zh.Findings {
		require.True(t, lang.HasHan(f.Title), "%s: %s", f.Rule, f.Title)
		require.Nil(t, set.Lookup(f.Rule).zhLazy.build, "%s: its Chinese was read", f.Rule)
	}
}

// A texts file with a problem fails the Chinese title and fix of its rule
// with the problem's file:line:col, as a template that does not compile
// does; the English texts are untouched.
func TestBrokenTextsFileFailsTheRule(t *testing.T) {
	set, err := Parse("rules/builtin/my.yaml", []byte("rules:\n  - id: my-rule\n    title: idle\n    when: \"true\"\n    fix: wait\n"))
	require.NoError(t, err)
	for _, tc := range []struct{ data, problem string }{
		{"my-rule:\n  titel: 空闲\n", `rules/builtin/zh/my.yaml:2:3: rule my-rule: zh: unknown key "titel"`},
		{"other-rule:\n  title: 空闲\n", `rules/builtin/zh/my.yaml:1:1: texts of my.yaml: unknown key "other-rule"`},
		{"my-rule: [\n", "rules/builtin/zh/my.yaml: "},
	} {
		set.lazyTexts("rules/builtin/my.yaml", "rules/builtin/zh/my.yaml", func() ([]byte, error) { return []byte(tc.data), nil })
		r := set.Rules[0]
		_, err := r.textsErr(lang.ZH)
		require.ErrorContains(t, err, tc.problem)
		_, err = r.TitleIn(lang.ZH).compiled()
		require.ErrorContains(t, err, tc.problem)
		_, err = r.FixIn(lang.ZH).compiled()
		require.ErrorContains(t, err, tc.problem)
		require.Equal(t, "idle", r.TitleIn(lang.EN).Source)
	}
	set.lazyTexts("rules/builtin/my.yaml", "rules/builtin/zh/my.yaml", func() ([]byte, error) { return []byte("my-rule:\n  title: 空闲\n"), nil })
	require.Equal(t, "空闲", set.Rules[0].TitleIn(lang.ZH).Source)
	require.Equal(t, "wait", set.Rules[0].FixIn(lang.ZH).Source, "no zh fix: the English one")
}
