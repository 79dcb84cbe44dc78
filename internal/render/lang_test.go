package render

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
)

var reVerb = regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?(\[\d+\])?[a-zA-Z%]`)

// verbs are the printf verbs of format in the order of their arguments
// (an explicit index [n] places a verb), without the index.
func verbs(format string) []string {
	byArg := map[int]string{}
	next := 1
	for _, m := range reVerb.FindAllStringSubmatch(format, -1) {
		v := m[0]
		if strings.HasSuffix(v, "%") {
			continue
		}
		idx := m[1] + m[3]
		if idx != "" {
			next, _ = strconv.Atoi(strings.Trim(idx, "[]"))
			v = strings.Replace(v, idx, "", 1)
		}
		byArg[next] = v
		next++
	}
	out := make([]string, len(byArg))
	for i := range out {
		out[i] = byArg[i+1]
	}
	return out
}

// Every Chinese label stands for an English text the code still writes
// (a changed English text would silently fall back to English), and takes
// the same printf verbs for the same arguments.
func TestZHLabels(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}
	for _, f := range []string{"assets/report.html.tmpl", "assets/diff.html.tmpl"} {
		tmpl, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(tmpl)
	}
	for en, zh := range zhLabels() {
		require.True(t, strings.Contains(src.String(), strconv.Quote(en)), "zhLabels key not in the code: %q", en)
		require.Equal(t, verbs(en), verbs(zh), "%q -> %q", en, zh)
		require.Equal(t, strings.Count(en, "\t"), strings.Count(zh, "\t"), "%q: the same table cells", en)
		require.Equal(t, strings.HasPrefix(en, "\n"), strings.HasPrefix(zh, "\n"), en)
		require.Equal(t, strings.HasSuffix(en, "\n"), strings.HasSuffix(zh, "\n"), en)
	}
	require.Equal(t, []string{"%.1f", "%d"}, verbs("%[2]d of %.1[1]f"))
}

// A line of Chinese wraps at 100 columns counting each character as two,
// between characters (never before a closing mark), keeping its indent.
func TestWrapChinese(t *testing.T) {
	line := "      " + strings.Repeat("集合通信", 12) + "，占窗口的 7.6%；" + strings.Repeat("等待", 20)
	got := wrapLine(line, 100)
	for _, l := range strings.Split(got, "\n") {
		require.LessOrEqual(t, DisplayWidth(l), 100, l)
		require.False(t, strings.HasPrefix(strings.TrimLeft(l, " "), "，"), l)
	}
	require.Equal(t, strings.ReplaceAll(line, " ", ""), strings.ReplaceAll(strings.ReplaceAll(got, "\n", ""), " ", ""))
	require.True(t, strings.HasPrefix(strings.Split(got, "\n")[1], "          "), "continuation indented by four more")
	require.Equal(t, 6, DisplayWidth("集合ab"))
	require.Equal(t, "表\uE000格", padWide("表格")[:len("表\uE000格")])
}

// No line break wrapLine may make (at a space, or beside Chinese text,
// never after an opening mark) starts an English sentence
// (lang.EnglishSentences) inside a Chinese phrase. A phrase follows a path
// or a name of any length, so where its line breaks depends on the input:
// "：Avg generation throughput 的均值" broken after "：" opened a line with
// three English words, and the zh outputs' tests failed or passed by the
// length of their temporary directory's name.
func TestZHPhrasesNoEnglishAtAnyBreak(t *testing.T) {
	var found []string
	for en, zh := range lang.Phrases(lang.ZH) {
		s := reVerb.ReplaceAllStringFunc(zh, func(v string) string {
			if v == "%%" {
				return "%"
			}
			return "/p/x_1"
		})
		r := []rune(s)
		for i := 0; i < len(r); i++ {
			text := s
			if i > 0 {
				if !breakable(r, i) {
					continue
				}
				text = strings.TrimRight(string(r[:i]), " ") + "\n" + strings.TrimLeft(string(r[i:]), " ")
			}
			if e := lang.EnglishSentences(text); len(e) > 0 {
				found = append(found, strconv.Quote(en)+" -> "+strconv.Quote(text)+": "+strings.Join(e, " | "))
				break
			}
		}
	}
	slices.Sort(found)
	require.Empty(t, found, "%d Chinese phrase(s) with an English sentence at a line break", len(found))
}

// The report's and the diff page's text fonts end in a CJK font stack, so
// a Chinese page never falls back to boxes where a CJK font is installed
// (.ci/run installs fonts-noto-cjk for the browser test).
func TestCSSNamesCJKFonts(t *testing.T) {
	for _, font := range []string{`"Noto Sans CJK SC"`, `"PingFang SC"`, `"Microsoft YaHei"`, `"WenQuanYi Micro Hei"`} {
		require.Contains(t, reportCSS, font)
	}
	require.Regexp(t, `--sans: [^;]*var\(--cjk\), sans-serif;`, reportCSS)
	require.Regexp(t, `--mono: [^;]*var\(--cjk\), monospace;`, reportCSS)
}
