package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/driver"
	"github.com/npuprof/npuprof/internal/editdist"
	"github.com/npuprof/npuprof/internal/render"
)

// Help that teaches: each command's help opens with its usage, what it
// does and its examples, then its flags wrapped to the screen, then the
// longer description; a mistyped flag gets the nearest one, a habit of
// msprof-analyze gets npuprof's way; completion offers every enum value
// and the rule ids.

// helpTemplate is every command's --help.
const helpTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}

{{wrapText . .Short}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{wrappedFlags . .LocalFlags}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{wrappedFlags . .InheritedFlags}}{{end}}{{with .Long}}

Description:
{{wrapText $ .}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more about a command.{{end}}
`

// widthAnnotation is the root command's annotation holding the help's
// width in columns.
const widthAnnotation = "npuprof-width"

// helpWidth is the width of the help: the terminal's (or COLUMNS), at
// most 100; 80 when unknown.
func helpWidth(io *streams) int {
	switch {
	case io.width <= 0:
		return 80
	case io.width > 100:
		return 100
	}
	return max(io.width, 40)
}

func init() {
	cobra.AddTemplateFunc("wrappedFlags", func(c *cobra.Command, fs *pflag.FlagSet) string {
		return wrapWide(strings.TrimRight(fs.FlagUsagesWrapped(widthOf(c)), "\n"), widthOf(c))
	})
	cobra.AddTemplateFunc("wrapText", func(c *cobra.Command, s string) string { return wrapText(s, widthOf(c)) })
}

// widthOf is the help's width, from the root's annotation.
func widthOf(c *cobra.Command) int {
	w := 80
	if a := c.Root().Annotations[widthAnnotation]; a != "" {
		fmt.Sscan(a, &w)
	}
	return w
}

// wrapText wraps each line of s wider than width at a space, the rest
// indented by the line's indent and 4 more (an exit code's text under its
// text).
func wrapText(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		ind := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " "))+4)
		for len([]rune(line)) > width {
			r := []rune(line)
			cut := width
			for cut > len(ind) && r[cut] != ' ' {
				cut--
			}
			if cut <= len(ind) {
				break // one word wider than the line
			}
			out = append(out, strings.TrimRight(string(r[:cut]), " "))
			line = ind + strings.TrimLeft(string(r[cut:]), " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// setHelp gives root and its commands the help template and the help's
// width (the completions of the enum flags and rule ids are registered by
// runMain, for a completion request).
func setHelp(root *cobra.Command, io *streams) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[widthAnnotation] = fmt.Sprint(helpWidth(io))
	root.SetHelpTemplate(helpTemplate)
}

// isCompletion reports whether args ask for shell completions (cobra's
// hidden __complete commands), the only run that reads addCompletions'.
func isCompletion(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// allCmds is root and every command below it.
func allCmds(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, allCmds(s)...)
	}
	return out
}

// flagValues are the values completion offers for the enum flags.
var flagValues = map[string][]string{
	"lang":             {"zh", "en"},
	"fail-on":          {"high", "medium", "low"},
	"detail":           {"summary", "tables", "all"},
	"steps":            {"slowest", "all"},
	"ranks":            {"summary", "all"},
	"stage":            {"decode", "prefill"},
	"partial-findings": {"gate", "report"},
}

// addCompletions registers the completion of c's enum flags (--format's
// from the command's output table), of its rule-id flags and of `rules
// explain ID`.
func addCompletions(c *cobra.Command) {
	fixed := func(vals []string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		}
	}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := c.GetFlagCompletionFunc(f.Name); ok {
			return
		}
		switch {
		case flagValues[f.Name] != nil:
			_ = c.RegisterFlagCompletionFunc(f.Name, fixed(flagValues[f.Name]))
		case f.Name == "format":
			_ = c.RegisterFlagCompletionFunc(f.Name, fixed(formatNames(c)))
		case f.Name == "only" || f.Name == "disable":
			_ = c.RegisterFlagCompletionFunc(f.Name, ruleIDs)
		}
	})
	if c.CommandPath() == "npuprof rules explain" {
		c.ValidArgsFunction = func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return ruleIDs(cmd, args, "")
		}
	}
}

// formatNames are the --format values of c, from its output table.
func formatNames(c *cobra.Command) []string {
	var names []string
	for _, o := range render.RunOutputs {
		names = append(names, o.Name)
	}
	if strings.HasSuffix(c.CommandPath(), " diff") {
		names = nil
		for _, o := range render.DiffOutputs {
			names = append(names, o.Name)
		}
	}
	return names
}

// ruleIDs completes the built-in rule ids (and those of --rules files
// given before the cursor).
func ruleIDs(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	var files []string
	if f := cmd.Flags().Lookup("rules"); f != nil {
		if v, ok := f.Value.(pflag.SliceValue); ok {
			files = v.GetSlice()
		}
	}
	ids, err := driver.RuleIDs(files)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}

// msprofFlags are msprof-analyze's habits and what npuprof does instead.
var msprofFlags = map[string]string{
	"d":              "msprof-analyze's -d PATH: npuprof takes the profile folder as its argument, npuprof analyze PATH",
	"profiling_path": "msprof-analyze's --profiling_path: npuprof takes the profile folder as its argument, npuprof analyze PATH",
	"output_path":    "msprof-analyze's --output_path: npuprof writes to -o FILE",
	"m":              "msprof-analyze's -m MODE: npuprof has no modes, analyze runs every analysis and 'npuprof rules list' lists the rules",
	"mode":           "msprof-analyze's --mode: npuprof has no modes, analyze runs every analysis and 'npuprof rules list' lists the rules",
	"language":       "msprof-analyze's --language: npuprof's is --lang zh|en, or -l",
}

// flagHint is what to say after pflag's unknown-flag error msg on cmd:
// the nearest flag of the command, or npuprof's way for a habit of
// msprof-analyze; "" when there is none.
func flagHint(msg string, cmd *cobra.Command) string {
	var name string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		name = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: '"):
		name = strings.TrimPrefix(msg, "unknown shorthand flag: '")
		name, _, _ = strings.Cut(name, "'")
	default:
		return ""
	}
	if h, ok := msprofFlags[name]; ok {
		return h
	}
	if cmd == nil || len(name) < 2 {
		return ""
	}
	best, dist := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editdist.Distance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < dist || d == dist && best != "" && f.Name < best {
			best, dist = f.Name, d
		}
	})
	if best == "" || dist > 2 {
		return ""
	}
	return "did you mean --" + best + "?"
}
