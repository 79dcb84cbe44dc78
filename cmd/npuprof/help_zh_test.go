package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/golden"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/render"
)

// runLocale runs npuprof with the locale's language l.
func runLocale(l string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	io := newStreams(strings.NewReader(""), &out, &errb)
	io.lang = l
	code := runMain(io, args)
	return code, out.String(), errb.String()
}

// Under a zh locale (or --lang zh) the help is Chinese: the root's whole,
// every command's summary, the shared flags and the exit codes; its
// golden pins it, with analyze's.
func TestZHHelp(t *testing.T) {
	code, out, errs := runLocale(lang.ZH, "--help")
	require.Equal(t, ExitOK, code, errs)
	require.Empty(t, lang.EnglishSentences(out), out)
	require.Contains(t, out, "可用命令：")
	golden.Check(t, filepath.Join("../..", goldenDir, "help-zh.txt"), []byte(out))

	code, an, errs := run("analyze", "--lang", "zh", "--help")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, an, "用法：\n  npuprof analyze PATH")
	require.Contains(t, an, "把输出写到 FILE 而不是标准输出")
	for _, l := range strings.Split(an, "\n") {
		if lang.HasHan(l) { // the Chinese wraps at the help's width
			require.LessOrEqual(t, render.DisplayWidth(l), 80, l)
		}
	}
	require.Contains(t, an, "退出码：")
	golden.Check(t, filepath.Join("../..", goldenDir, "analyze-help-zh.txt"), []byte(an))

	// every command's summary
	root := newRootCmd(newStreams(nil, nil, nil))
	localizeHelp(root, lang.ZH)
	for _, c := range allCmds(root) {
		require.True(t, lang.HasHan(c.Short), "%s: %q", c.CommandPath(), c.Short)
	}
	// English stays English
	code, en, _ := runLocale(lang.EN, "--help")
	require.NotContains(t, en, "默认")
	require.Equal(t, ExitOK, code)
	require.Contains(t, en, "Available Commands:")
}

// codeSpan is a `command` in a help text.
var codeSpan = regexp.MustCompile("`[^`\n]*`")

// Under a zh locale every command's --help is Chinese: no English
// sentence (lang.EnglishSentences: names, flags, values, paths and
// commands never count), pflag's "(default …)" suffix included, and no
// Chinese line wider than the help; testdata/golden/help-zh pins each.
func TestZHHelpEveryCommand(t *testing.T) {
	root := newRootCmd(newStreams(nil, nil, nil))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var found []string
	for _, c := range allCmds(root) {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, out, errs := runLocale(lang.ZH, args...)
		require.Equal(t, ExitOK, code, "%v: %s", args, errs)
		require.Contains(t, out, "用法：", args)
		require.NotContains(t, out, "(default", args)
		// a command in backticks is a command, not prose
		if c != root && c.Name() != "analyze" { // their goldens: TestZHHelp
			name := strings.Join(args[:len(args)-1], "-")
			golden.Check(t, filepath.Join("../..", goldenDir, "help-zh", name+".txt"), []byte(out))
		}
		for _, s := range lang.EnglishSentences(codeSpan.ReplaceAllString(out, "")) {
			found = append(found, c.CommandPath()+": "+s)
		}
		for _, l := range strings.Split(out, "\n") {
			cmd := strings.HasPrefix(strings.TrimSpace(l), "npuprof ") // the usage line
			if lang.HasHan(l) && !cmd {
				require.LessOrEqual(t, render.DisplayWidth(l), 80, "%v: %s", args, l)
			}
		}
	}
	require.Empty(t, found, "English in a command's Chinese --help")
	// the default's suffix, translated
	_, an, _ := runLocale(lang.ZH, "analyze", "--help")
	require.Contains(t, an, "（默认：summary）")
}

// An error is in the run's language (--lang, else the locale's).
func TestZHError(t *testing.T) {
	code, _, errs := run("analyze", "--lang", "zh", "--bogus")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "npuprof: 未知参数：--bogus。运行 'npuprof analyze --help' 查看用法\n", errs)
	code, _, errs = runLocale(lang.ZH, "analyze", "/nonexistent/npuprof")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "npuprof: /nonexistent/npuprof：没有这个文件或目录\n", errs)
	code, _, errs = run("analyze", "--bogus")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "unknown flag: --bogus")
}

// export's messages follow the locale.
func TestZHExport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	code, so, errs := runLocale(lang.ZH, "export", "../../testdata/traces/clean-2ranks", "-o", out, "-q")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, so, "已把 ../../testdata/traces/clean-2ranks 的 2 个 rank 导出到 "+out+"（")
	require.Empty(t, lang.EnglishSentences(so), so)
}

// Every translation of a command's description or examples names a
// command and field there is and was made from the English it has now:
// after an edit of the English, the test names the text to translate
// again and the fingerprint to give it.
func TestZHHelpPrints(t *testing.T) {
	root := newRootCmd(newStreams(nil, nil, nil))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	now := map[helpKey]string{}
	for _, c := range allCmds(root) {
		long, codes, ok := strings.Cut(c.Long, exitCodesHelp)
		if !ok || codes != "" {
			long = c.Long
		}
		now[helpKey{c.CommandPath(), helpLong}] = long
		now[helpKey{c.CommandPath(), helpExample}] = c.Example
	}
	var stale []string
	for k, z := range zhCommandHelp() {
		en, ok := now[k]
		require.True(t, ok, "zhCommandHelp: no command %q", k.cmd)
		if p := helpPrint(en); p != z.print {
			stale = append(stale, k.cmd+" "+k.field+": the English changed; translate it again and set its print to "+p)
		}
	}
	require.Empty(t, stale)
}
