package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/render"
)

// runIn runs npuprof with the locale's language lang and, when ascii, a
// locale that is not UTF-8.
func runIn(lang string, ascii bool, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	io := newStreams(strings.NewReader(""), &out, &errb)
	io.lang, io.asciiUnits = lang, ascii
	code = runMain(io, args)
	return code, out.String(), errb.String()
}

// A --lang value that is neither zh nor en is a usage error naming the
// flag and the values, with the help hint, on every command that has it.
func TestLangFlagInvalid(t *testing.T) {
	for _, c := range [][]string{
		{"analyze", "../../testdata/traces/clean"},
		{"check", "../../testdata/traces/clean"},
		{"report", "../../testdata/traces/clean", "-o", "-"},
		{"diff", "../../testdata/traces/clean", "../../testdata/traces/clean"},
	} {
		code, out, errs := run(append(c, "--lang", "fr")...)
		require.Equal(t, ExitUsage, code, c)
		require.Empty(t, out)
		require.Equal(t, `npuprof: --lang "fr": not a language: expected zh or en. Run 'npuprof `+c[0]+` --help'`+"\n", errs)
	}
}

// --lang zh writes the findings in Chinese and says so in the JSON
// document's lang; rule ids, metric names, values and the JSON keys stay.
// Without --lang the locale's language applies.
func TestLangJSON(t *testing.T) {
	args := []string{"analyze", "../../testdata/traces/ep-fc1-cumsum", "--format", "json", "-q"}
	docs := map[string]map[string]any{}
	for name, c := range map[string]struct {
		locale string
		flags  []string
	}{
		"en": {"", nil}, "zh": {"", []string{"--lang", "zh"}},
		"locale-zh": {"zh", nil}, "flag-wins": {"zh", []string{"--lang", "en"}},
	} {
		code, out, errs := runIn(c.locale, false, append(args, c.flags...)...)
		require.Equal(t, ExitOK, code, errs)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &doc))
		docs[name] = doc
	}
	require.Equal(t, "en", docs["en"]["lang"])
	require.Equal(t, "zh", docs["zh"]["lang"])
	require.Equal(t, docs["zh"], docs["locale-zh"])
	require.Equal(t, "en", docs["flag-wins"]["lang"])
	en, zh := docs["en"]["findings"].([]any), docs["zh"]["findings"].([]any)
	require.NotEmpty(t, en)
	require.Len(t, zh, len(en))
	for i := range en {
		e, z := en[i].(map[string]any), zh[i].(map[string]any)
		require.Equal(t, e["rule"], z["rule"])
		require.Equal(t, e["saving_us"], z["saving_us"])
		require.False(t, lang.HasHan(e["title"].(string)+e["fix"].(string)), e["rule"])
		require.True(t, lang.HasHan(z["title"].(string)), z["title"])
		require.True(t, lang.HasHan(z["fix"].(string)), z["fix"])
		ee, ze := e["evidence"].([]any), z["evidence"].([]any)
		require.Len(t, ze, len(ee))
		for k := range ee {
			require.Equal(t, ee[k].(map[string]any)["metric"], ze[k].(map[string]any)["metric"])
			require.Equal(t, ee[k].(map[string]any)["value"], ze[k].(map[string]any)["value"])
		}
	}
	for _, k := range []string{"findings", "lang"} {
		delete(docs["en"], k)
		delete(docs["zh"], k)
	}
	// the messages composed from data (reasons, sources, notes) are the
	// phrase table's Chinese of the English
	enDoc := docs["en"]
	lang.TranslateStrings(lang.ZH, &enDoc, nil)
	require.Equal(t, enDoc, docs["zh"], "only the findings' texts, lang and the translated messages differ")
}

// Chinese needs a UTF-8 locale on a terminal: on another the summary is
// English (µs spelled us), with a warning; the HTML report, UTF-8 whatever
// the locale, stays Chinese.
func TestLangNonUTF8Locale(t *testing.T) {
	args := []string{"analyze", "../../testdata/traces/ep-fc1-cumsum", "-q"}
	_, en, _ := runIn("", true, args...)
	code, out, errs := runIn("", true, append(args, "--lang", "zh")...)
	require.Equal(t, ExitOK, code, errs)
	require.Equal(t, en, out)
	require.Equal(t, "npuprof: warning: Chinese (--lang zh) needs a UTF-8 locale and this one is not (LC_ALL/LC_CTYPE/LANG): writing English; set LANG=zh_CN.UTF-8, or give --lang en\n", errs)

	html := filepath.Join(t.TempDir(), "r.html")
	code, _, errs = runIn("zh", true, "report", "../../testdata/traces/ep-fc1-cumsum", "-q", "-o", html)
	require.Equal(t, ExitOK, code, errs)
	require.Empty(t, errs)
	b, err := os.ReadFile(html)
	require.NoError(t, err)
	require.Contains(t, string(b), "每个 rank 在 MoE 路由路径中有 8 个 Cumsum 算子")
}

// The HTML report in Chinese: the findings' titles and fixes, the fixed
// labels and the embedded rule docs; the English report's page has no
// Chinese.
func TestLangHTML(t *testing.T) {
	dir := t.TempDir()
	zh, en := filepath.Join(dir, "zh.html"), filepath.Join(dir, "en.html")
	for f, l := range map[string]string{zh: "zh", en: "en"} {
		code, _, errs := run("report", "../../testdata/traces/ep-fc1-cumsum", "-q", "--lang", l, "-o", f)
		require.Equal(t, ExitOK, code, errs)
	}
	page := string(readFile(t, zh))
	for _, s := range []string{`<html lang="zh-CN">`, ">问题与修复 <", ">时间分解<", ">最大预计节省<", "预计节省 <b>", ">复制<", ">依据<",
		"对这个以 decode 为主的部署，关闭 FLASHCOMM1 和专家并行",                       // a fix
		"FLASHCOMM1 把每个 TP all-reduce 换成 reduce-scatter 加 all-gather", // comm-ep-flashcomm's embedded why
		`"name":"device 时间 (`, `"name":"MoE 层（step 中第 n 个路由算子）"`, // chart axis titles, the unit kept
	} {
		require.True(t, strings.Contains(page, s), s)
	}
	page = string(readFile(t, en))
	require.Contains(t, page, `<html lang="en">`)
	require.Contains(t, page, ">Findings <")
	body, _, _ := strings.Cut(page, `<script type="application/json"`) // the charting library has Chinese of its own
	require.False(t, lang.HasHan(body), "the English report holds no Chinese")
}

// The Chinese summary fits 100 columns like the English one, counting a
// Chinese character as two (the deploy diff, printed as is, aside).
func TestLangSummaryFits100Columns(t *testing.T) {
	code, out, errs := run("analyze", "../../testdata/traces/ep-fc1-cumsum", "-q", "--lang", "zh", "--deploy", "../../testdata/deploy/field-report-1.sh", "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	diff := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "--- a/") {
			diff = true
		}
		if diff && (l == "" || strings.ContainsAny(l[:1], " +-@")) {
			continue
		}
		diff = false
		require.LessOrEqual(t, render.DisplayWidth(l), 100, l)
	}
	require.Contains(t, out, "\n问题与修复\n")
	require.Contains(t, out, "\n采集窗口内的时间分解\n")
}

// rules list and rules explain print a rule's explanation and fix template
// in the chosen language.
func TestLangRulesExplain(t *testing.T) {
	code, out, errs := run("rules", "explain", "comm-ep-flashcomm", "--lang", "zh")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "\nWhy\n  FLASHCOMM1 把每个 TP all-reduce 换成 reduce-scatter 加 all-gather，并在 EP 组\n")
	require.Contains(t, out, "对这个以 decode 为主的部署，关闭 FLASHCOMM1 和专家并行：")
	code, out, errs = run("rules", "list", "--lang", "zh")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "\n    没有任何计算与之并行的通信，是 device 只在搬运数据（或等待其他 rank）的时\n    间。\n")
	_, out, _ = run("rules", "list")
	require.False(t, lang.HasHan(out))
}
