package lang

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// LC_ALL, then LC_MESSAGES, then LANG: the first one set decides.
func TestFromLocale(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, EN},
		{map[string]string{"LANG": "zh_CN.UTF-8"}, ZH},
		{map[string]string{"LANG": "zh_TW.Big5"}, ZH},
		{map[string]string{"LANG": "en_US.UTF-8"}, EN},
		{map[string]string{"LANG": "C"}, EN},
		{map[string]string{"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, ZH},
		{map[string]string{"LC_ALL": "C", "LC_MESSAGES": "zh_CN.UTF-8"}, EN},
		{map[string]string{"LC_ALL": "zh_CN.GB18030", "LANG": "en_US.UTF-8"}, ZH},
		{map[string]string{"LC_CTYPE": "zh_CN.UTF-8"}, EN}, // the character set, not the messages
		{map[string]string{"LANG": "zhx"}, EN},
	} {
		require.Equal(t, c.want, FromLocale(func(k string) string { return c.env[k] }), "%v", c.env)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"zh": ZH, "ZH": ZH, "en": EN, " en ": EN, "cn": ZH, "CN": ZH, "zh-CN": ZH} {
		got, err := Parse(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := Parse("fr")
	require.EqualError(t, err, `"fr": expected one of zh, en`)
	require.Equal(t, EN, Or(""))
	require.Equal(t, ZH, Or(ZH))
}

// Prose is found; names, flags, kernels, paths and Chinese are not.
func TestEnglishSentences(t *testing.T) {
	require.Equal(t, []string{"profiling data has no"}, EnglishSentences("专家不均衡：不可用：no per-expert loads: profiling data has no per-expert counts"))
	require.Equal(t, []string{"with device work the capture has no"}, EnglishSentences("steps.*: no ProfilerStep#N with device work (the capture has no torch_npu steps)"))
	require.Empty(t, EnglishSentences("aclnnGroupedMatmulV4_GroupedMatmul  GroupedMatmul  AI_CORE  128  13.69ms"))
	require.Empty(t, EnglishSentences("  部署脚本 diff（patch -p1）：--compilation-config '{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}' /models/Qwen3-235B"))
	require.Empty(t, EnglishSentences("  8 个 rank，torch_npu_text，profiler level Level1"))
	require.Equal(t, []string{"Compare two profiles or saved analyses"}, EnglishSentences("Compare two profiles (or saved analyses)"))
}

// Every Chinese phrase takes as many values as its English key gives (an
// explicit index %[n]s reorders them), and the table translates what the
// analysis composes: whole, and cut at its separators.
func TestZHPhrases(t *testing.T) {
	reIdx := regexp.MustCompile(`%\[(\d+)\]s`)
	for en, zh := range zhPhrases() {
		n := len(reFormatVerb().FindAllString(en, -1))
		require.True(t, strings.Contains(en, " "), "%q: a phrase has a space (Translate skips text without one)", en)
		if idx := reIdx.FindAllStringSubmatch(zh, -1); len(idx) > 0 {
			seen := map[string]bool{}
			for _, m := range idx {
				seen[m[1]] = true
			}
			require.Len(t, seen, n, "%q -> %q", en, zh)
			require.Empty(t, reFormatVerb().FindAllString(zh, -1), "%q: index every verb or none", zh)
			continue
		}
		require.Len(t, reFormatVerb().FindAllString(zh, -1), n, "%q -> %q", en, zh)
	}
	require.Equal(t, "decode step 少于两个：没有成对的 ProfilerStep#N，MoE 层之间也没有 step 边界",
		Translate(ZH, "fewer than two decode steps: no ProfilerStep#N pair and no step boundary between MoE layers"))
	require.Equal(t, "冲突：tp 在 profile 中为 2（profile：parallel_group_info 中 tp 组有 2 个 rank），但在 run.sh:16 中为 8（--tensor-parallel-size 8）；规则使用 2，即实际运行的值",
		Translate(ZH, "conflict: tp is 2 in the profile (profile: parallel_group_info group tp has 2 ranks) but 8 in run.sh:16 (--tensor-parallel-size 8); the rules use 2, what ran"))
	// a text a %s would take half a bracket of is cut instead
	require.Equal(t, "x：8 个文件中有追加写入的 dump（a.csv, b.csv）：每个文件保留最后 6 行，丢弃了之前的 48 行",
		Translate(ZH, "x: appended dumps in 8 file(s) (a.csv, b.csv): kept the last 6 lines of each, dropped 48 earlier line(s)"))
	require.Equal(t, "MoeInitRoutingV2_x", Translate(ZH, "MoeInitRoutingV2_x"))
	require.Equal(t, "no collective data", Translate(EN, "no collective data"))
}

// TranslateStrings reaches strings through structs, pointers, slices and
// map values, never keys or skipped fields.
func TestTranslateStrings(t *testing.T) {
	type inner struct{ Why string }
	v := struct {
		A    string
		M    map[string]string
		S    []*inner
		Diff string
		Any  any
	}{A: "no collective data", M: map[string]string{"no collective data": "no collective data"}, S: []*inner{{"no collective data"}},
		Diff: "no collective data", Any: "no collective data"}
	TranslateStrings(ZH, &v, map[string]bool{"Diff": true})
	require.Equal(t, "没有集合通信数据", v.A)
	require.Equal(t, map[string]string{"no collective data": "没有集合通信数据"}, v.M)
	require.Equal(t, "没有集合通信数据", v.S[0].Why)
	require.Equal(t, "no collective data", v.Diff)
	require.Equal(t, "没有集合通信数据", v.Any)
}

// A what-if note (plan.whatIfNote) with a change of verdict is two
// messages, each with one key: the verdict's clause after the last "; "
// is never taken by the gain's last verb (which the Chinese may move).
func TestZHWhatIfNoteWithVerdict(t *testing.T) {
	for en, zh := range map[string]string{
		"-5.00% step time at batch 1, -9.00% step time at 90 concurrent requests; the rule is clear at batch 1 and is clear at 90":                                                                                                             "batch 1 时 -5.00% step time，90 个并发请求 时 -9.00% step time；该规则在 batch 1 时未触发，在 90 时未触发",
		"judged on vLLM's cache hit rates, which the replay does not change: its gain is in prefill, which the what-if does not replay; measure the hit rate again at 90 concurrent requests; the rule is clear at batch 1 and is clear at 90": "按 vLLM 的缓存命中率判断，重放不改变命中率：其收益在 prefill，而 what-if 不重放 prefill；请在 90 个并发请求 时重新测量命中率；该规则在 batch 1 时未触发，在 90 时未触发",
		"gains at batch 1 (-5.00% step time) but not at 90 concurrent requests (-0.10% step time); the rule fires at batch 1 and is clear at 90":                                                                                               "在 batch 1 时有收益（-5.00% step time），在 90 个并发请求 时没有（-0.10% step time）；该规则在 batch 1 时触发，在 90 时未触发",
		"no gain at batch 1 (+0.10% step time): revisit at 90 concurrent requests, where its fix is predicted at -28.10% step time":                                                                                                            "在 batch 1 时无收益（+0.10% step time）：在 90 个并发请求 时再评估，届时其修复预测为 -28.10% step time",
	} {
		require.Equal(t, zh, Translate(ZH, en))
	}
}
