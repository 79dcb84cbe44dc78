package rulefmt

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
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
	require.Equal(t, "窗口", r.NoteIn(r.Evidence[0], lang.ZH).Source)
	require.Nil(t, r.NoteIn(r.Evidence[1], lang.ZH))
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
		{"my-rule: [\n", "rules/builtin/zh/my.yaml:1:10: a list opened with [ is not closed with ]"},
	} {
		set.lazyTexts("rules/builtin/my.yaml", "rules/builtin/zh/my.yaml", func() ([]byte, error) { return []byte(tc.data), nil })
		r := set.Rules[0]
		_, err := r.textsErr(lang.ZH)
		require.ErrorContains(t, err, tc.problem)
		_, err = r.TitleIn(lang.ZH).Parts()
		require.ErrorContains(t, err, tc.problem)
		_, err = r.FixIn(lang.ZH).Parts()
		require.ErrorContains(t, err, tc.problem)
		require.Equal(t, "idle", r.TitleIn(lang.EN).Source)
	}
	set.lazyTexts("rules/builtin/my.yaml", "rules/builtin/zh/my.yaml", func() ([]byte, error) { return []byte("my-rule:\n  title: 空闲\n"), nil })
	require.Equal(t, "空闲", set.Rules[0].TitleIn(lang.ZH).Source)
	require.Equal(t, "wait", set.Rules[0].FixIn(lang.ZH).Source, "no zh fix: the English one")
}
