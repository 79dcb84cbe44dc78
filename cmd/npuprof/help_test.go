package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
