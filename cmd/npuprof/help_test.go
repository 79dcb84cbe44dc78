package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
)

// --help opens with the usage, what the command does and its examples;
// every line fits the help's width (80 columns off a terminal) but the
// examples' commands, which are never broken.
func TestHelpOpensWithUsageAndExamples(t *testing.T) {
	code, out, _ := run("analyze", "--help")
	require.Equal(t, ExitOK, code)
	require.True(t, strings.HasPrefix(out, "Usage:\n  npuprof analyze PATH [flags]\n\nMeasure "), out)
	ex, fl, desc := strings.Index(out, "\nExamples:\n"), strings.Index(out, "\nFlags:\n"), strings.Index(out, "\nDescription:\n")
	require.True(t, 0 < ex && ex < fl && fl < desc, "usage, examples, flags, then the description")
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "  $ ") {
			require.LessOrEqual(t, len([]rune(l)), 80, l)
		}
	}
	require.Contains(t, out, "\n      --detail summary|tables|all   what the summary shows")
	code, out, _ = runWidth(120, "analyze", "--help")
	require.Equal(t, ExitOK, code)
	for _, l := range strings.Split(out, "\n") {
		require.LessOrEqual(t, len([]rune(l)), 100, "at most 100 columns on a wide terminal: %s", l)
	}
}

// A mistyped flag names the nearest one; msprof-analyze's habits say
// npuprof's way.
func TestFlagSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "x", "--detial", "all"}, "npuprof: unknown flag: --detial (did you mean --detail?). Run 'npuprof analyze --help'\n"},
		{[]string{"check", "x", "--fail-onn", "high"}, "npuprof: unknown flag: --fail-onn (did you mean --fail-on?). Run 'npuprof check --help'\n"},
		{[]string{"analyze", "-d", "x"}, "npuprof: unknown shorthand flag: 'd' in -d (msprof-analyze's -d PATH: npuprof takes the profile folder as its argument, npuprof analyze PATH). Run 'npuprof analyze --help'\n"},
		{[]string{"analyze", "x", "--profiling_path", "y"}, "npuprof: unknown flag: --profiling_path (msprof-analyze's --profiling_path: npuprof takes the profile folder as its argument, npuprof analyze PATH). Run 'npuprof analyze --help'\n"},
		{[]string{"analyze", "x", "--zzzzzz"}, "npuprof: unknown flag: --zzzzzz. Run 'npuprof analyze --help'\n"},
	} {
		code, _, errs := run(c.args...)
		require.Equal(t, ExitUsage, code, c.args)
		require.Equal(t, c.want, errs, c.args)
	}
	// -l is --lang, as msprof-analyze users type it, and cn is zh
	code, out, errs := run("rules", "explain", "moe-routing-cumsum", "-l", "cn")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "（")
}

// Completion offers the enum flags' values and the rule ids.
func TestCompletions(t *testing.T) {
	complete := func(args ...string) []string {
		code, out, errs := run(append([]string{"__complete"}, args...)...)
		require.Equal(t, ExitOK, code, errs)
		var vals []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, ":") {
				vals = append(vals, l)
			}
		}
		return vals
	}
	require.Equal(t, []string{"zh", "en"}, complete("analyze", "x", "--lang", ""))
	require.Equal(t, []string{"high", "medium", "low"}, complete("check", "x", "--fail-on", ""))
	require.Equal(t, []string{"summary", "tables", "all"}, complete("analyze", "x", "--detail", ""))
	require.Contains(t, complete("analyze", "x", "--format", ""), "json-full")
	require.Contains(t, complete("diff", "a", "b", "--format", ""), "html")
	ids := complete("rules", "explain", "")
	require.Contains(t, ids, "moe-routing-cumsum")
	require.Contains(t, complete("analyze", "x", "--only", ""), "graph-capture-sizes")
}

// `npuprof docs` lists the embedded pages, `npuprof docs TOPIC` prints
// one, and every page the help cites is one of them.
func TestDocsEmbedded(t *testing.T) {
	code, out, _ := run("docs")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "  rules        Rules: findings that name the fix\n")
	code, out, _ = run("docs", "rules")
	require.Equal(t, ExitOK, code)
	require.True(t, strings.HasPrefix(out, "# Rules: findings that name the fix\n"))
	code, _, errs := run("docs", "rulez")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "npuprof: docs: no topic \"rulez\"; did you mean rules?\n", errs)

	topics, _ := docTopics()
	cited := regexp.MustCompile(`'npuprof docs ([a-z]+)'`)
	for _, c := range allCmds(newRootCmd(&streams{})) {
		texts := []string{c.Long}
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, s := range texts {
			require.NotRegexp(t, `docs/[a-z]+\.md`, s, "%s cites a repository path", c.CommandPath())
			for _, m := range cited.FindAllStringSubmatch(s, -1) {
				require.Contains(t, topics, m[1], c.CommandPath())
			}
		}
	}
}

// `npuprof man DIR` (make man) writes one page per command.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := run("man", dir)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "npuprof-analyze.1")
	b, err := os.ReadFile(filepath.Join(dir, "npuprof-analyze.1"))
	require.NoError(t, err)
	page := string(b)
	require.True(t, strings.HasPrefix(page, ".TH \"NPUPROF-ANALYZE\" 1 "), page)
	for _, want := range []string{".SH NAME\nnpuprof-analyze \\- Measure ", ".SH SYNOPSIS\n", ".SH OPTIONS\n", "\\fB\\-\\-detail\\fR", ".SH EXAMPLES\n", ".SH SEE ALSO\nnpuprof(1)"} {
		require.Contains(t, page, want)
	}
	_, err = os.Stat(filepath.Join(dir, "npuprof-rules-explain.1"))
	require.NoError(t, err)
}

// A description's prose lines (not indented) fit 80 columns as written:
// the help wraps a wider line with a hanging indent meant for an exit
// code's text, which breaks a paragraph in the middle ("...: give\n    the").
func TestHelpProseFits80(t *testing.T) {
	for _, c := range allCmds(newRootCmd(&streams{})) {
		for _, l := range strings.Split(c.Long, "\n") {
			if !strings.HasPrefix(l, " ") {
				assert.LessOrEqual(t, len([]rune(l)), 80, "%s: %q", c.CommandPath(), l)
			}
		}
	}
}

// reMeasurement is a measured figure: a number with a unit of size, time,
// rate or speed-up ("75.6 MiB", "400 MB/s", "61 ms", "2.1×", "10%").
var reMeasurement = regexp.MustCompile(`\d+(?:[.,]\d+)?\s?(?:[KMGT]i?B(?:/s)?|[mµun]s|s|sec|seconds?|minutes?|毫秒|微秒|秒|×|x faster|%)(?:[^A-Za-z0-9]|$)`)

// The help carries no measurements, in either language: a figure of
// memory, throughput or time belongs in docs/performance.md, where it is
// measured and kept current ('npuprof docs performance').
func TestHelpCarriesNoMeasurements(t *testing.T) {
	root := newRootCmd(newStreams(nil, nil, nil))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmds := allCmds(root)
	require.Greater(t, len(cmds), 10)
	for _, l := range []string{lang.EN, lang.ZH} {
		for _, c := range cmds {
			args := append(strings.Fields(c.CommandPath())[1:], "--help")
			code, out, errs := runLocale(l, args...)
			require.Equal(t, ExitOK, code, "%v: %s", args, errs)
			for _, m := range reMeasurement.FindAllString(out, -1) {
				t.Errorf("%s %v: %q: the help states no measurement (docs/performance.md does)", l, args, m)
			}
		}
	}
	// the pattern finds each figure of a sentence that has them, and not a
	// count of ranks
	require.Len(t, reMeasurement.FindAllString("at 2048 ranks, 75.6 MiB; 400 MB/s; 61 ms; 10% less; 0.84×; 3 秒", -1), 6)
}
