package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// allCommands returns every command under root, root first.
func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, allCommands(s)...)
	}
	return out
}

// Every numeric flag of every command says what it expects, and a value
// that does not parse is refused with the flag, the value and that range
// (not strconv's "parsing "abc": invalid syntax"), then where the help is.
func TestNumericFlagErrorsNameFlagAndRange(t *testing.T) {
	numeric := 0
	for _, c := range allCommands(newRootCmd(&streams{})) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "int", "int64", "uint", "float64", "duration":
			default:
				return
			}
			numeric++
			want := f.Annotations[rangeAnnotation]
			require.Len(t, want, 1, "%s --%s has no expected range: define it with intFlag", c.CommandPath(), f.Name)
			path := strings.Fields(c.CommandPath())[1:]
			code, _, errs := run(append(path, "--"+f.Name, "abc")...)
			require.Equal(t, ExitUsage, code, errs)
			require.Equal(t, "npuprof: --"+f.Name+` "abc": not a whole number; expected `+want[0]+". Run '"+c.CommandPath()+" --help'\n", errs)
		})
	}
	require.GreaterOrEqual(t, numeric, 9, "--workers on five commands, --kernels, --redundant, --ep-size, --deploy-line")

	// every command with --workers refuses a negative one, before reading anything
	for _, args := range [][]string{{"analyze", "x"}, {"check", "x"}, {"report", "x", "-o", "-"}, {"diff", "a", "b"}, {"export", "x", "-o", "out"}} {
		code, _, errs := run(append(args, "--workers", "-3")...)
		require.Equal(t, ExitUsage, code, args)
		require.Equal(t, "npuprof: --workers -3: out of range: expected 0 (one per CPU) or more. Run 'npuprof "+args[0]+" --help'\n", errs)
	}
	code, _, errs := run("diff", "a", "b", "--kernels=-1")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "npuprof: --kernels -1: out of range: expected 0 or more. Run 'npuprof diff --help'\n", errs)
}

// Unknown flags and commands end with the help to read.
func TestUnknownFlagsAndCommandsPointToHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "--nosuch"}, "npuprof: unknown flag: --nosuch. Run 'npuprof analyze --help'\n"},
		{[]string{"check", "-Z"}, "npuprof: unknown shorthand flag: 'Z' in -Z. Run 'npuprof check --help'\n"},
		{[]string{"eplb", "plan", "--nosuch"}, "npuprof: unknown flag: --nosuch. Run 'npuprof eplb plan --help'\n"},
		{[]string{"nosuch"}, "npuprof: unknown command \"nosuch\" for \"npuprof\". Run 'npuprof --help'\n"},
		{[]string{"rules", "nosuch"}, "npuprof: unknown command \"nosuch\" for \"npuprof rules\". Run 'npuprof rules --help'\n"},
		{[]string{"report", "x", "-o"}, "npuprof: flag needs an argument: 'o' in -o. Run 'npuprof report --help'\n"},
		{[]string{"analyse", "x"}, "npuprof: unknown command \"analyse\" for \"npuprof\" (did you mean analyze?). Run 'npuprof --help'\n"},
	} {
		code, out, errs := run(c.args...)
		require.Equal(t, ExitUsage, code, "%v", c.args)
		require.Empty(t, out)
		require.Equal(t, c.want, errs, "%v", c.args)
	}
	// a bare group command still shows its help
	code, out, _ := run("rules")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "Available Commands:")
}

// `rules explain` suggests ids by edit distance, and none when nothing is
// close (it used to name three unrelated rules).
func TestRulesExplainSuggests(t *testing.T) {
	code, _, errs := run("rules", "explain", "moe-routing-cumsm")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "npuprof: no rule \"moe-routing-cumsm\"; did you mean moe-routing-cumsum?\n", errs)
	code, _, errs = run("rules", "explain", "nosuch")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "npuprof: no rule \"nosuch\"; 'npuprof rules list' lists the 20 rules\n", errs)
}

// `npuprof report PATH` without -o refuses to pour HTML into a terminal;
// -o - still means standard output, and a pipe gets the HTML.
func TestReportRefusesTerminal(t *testing.T) {
	trace := "../../testdata/traces/clean-2ranks"
	var out, errb bytes.Buffer
	tty := &streams{in: strings.NewReader(""), out: &out, err: &errb, outIsTerminal: true}
	require.Equal(t, ExitUsage, runMain(tty, []string{"report", trace, "-q"}))
	require.Empty(t, out.String())
	require.Equal(t, "npuprof: report: standard output is a terminal; write the HTML to a file with -o report.html, or give -o - to print it here anyway\n", errb.String())

	errb.Reset()
	require.Equal(t, ExitOK, runMain(tty, []string{"report", trace, "-q", "-o", "-"}), errb.String())
	require.True(t, strings.HasPrefix(out.String(), "<!DOCTYPE html>"), out.String()[:min(40, out.Len())])

	code, html, errs := run("report", trace, "-q")
	require.Equal(t, ExitOK, code, errs)
	require.True(t, strings.HasPrefix(html, "<!DOCTYPE html>"))
}

// /dev/null is a character device but not a terminal: no progress bar and
// no refusal for `npuprof report PATH > /dev/null`.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	require.False(t, isTerminal(f))
	require.False(t, isTerminal(&bytes.Buffer{}))
}

// The root help shows three examples: analyze, report and check.
func TestRootHelpExamples(t *testing.T) {
	code, out, errs := run("--help")
	require.Equal(t, ExitOK, code, errs)
	_, ex, ok := strings.Cut(out, "Examples:\n")
	require.True(t, ok, out)
	ex, _, _ = strings.Cut(ex, "\n\n\n")
	var cmds []string
	for _, l := range strings.Split(ex, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "$ npuprof ") {
			cmds = append(cmds, strings.Fields(l)[2])
		}
	}
	require.Equal(t, []string{"analyze", "report", "check"}, cmds, ex)
}
