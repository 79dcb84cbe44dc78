package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newManCmd is `npuprof man DIR` (hidden; `make man` runs it): one man
// page per command, npuprof.1, npuprof-analyze.1, ..., from the commands'
// help, so the pages say what --help says.
func newManCmd(io *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page per command into DIR (make man)",
		Example: `  $ npuprof man man/
  $ man -l man/npuprof-analyze.1`,
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return usageErr("man: %v", err)
			}
			for _, c := range allCmds(cmd.Root()) {
				if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
					continue
				}
				name := manName(c)
				if err := os.WriteFile(filepath.Join(dir, name+".1"), []byte(manPage(c)), 0o644); err != nil {
					return usageErr("man: %v", err)
				}
				fmt.Fprintf(io.out, "%s\n", filepath.Join(dir, name+".1"))
			}
			return nil
		},
	}
}

// manName is the page's name: the command path joined by dashes.
func manName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// roff escapes text for a man page: backslashes, and a line that starts
// with a control character.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffText is a help text as man paragraphs: a blank line starts one, and
// indented lines (exit codes, commands) are kept as they are.
func roffText(s string) string {
	var b strings.Builder
	inBlock := false
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			if inBlock {
				b.WriteString(".fi\n")
				inBlock = false
			}
			b.WriteString(".PP\n")
		case strings.HasPrefix(l, "  ") && !inBlock:
			b.WriteString(".nf\n" + roff(l) + "\n")
			inBlock = true
		case !strings.HasPrefix(l, "  ") && inBlock:
			b.WriteString(".fi\n" + roff(l) + "\n")
			inBlock = false
		default:
			b.WriteString(roff(l) + "\n")
		}
	}
	if inBlock {
		b.WriteString(".fi\n")
	}
	return b.String()
}

// manPage is c's man page.
func manPage(c *cobra.Command) string {
	var b strings.Builder
	name := manName(c)
	fmt.Fprintf(&b, ".TH %q 1 \"\" \"npuprof %s\" \"npuprof manual\"\n", strings.ToUpper(name), tool.Version)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", name, roff(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roff(c.UseLine()))
	if c.Long != "" {
		fmt.Fprintf(&b, ".SH DESCRIPTION\n%s", roffText(c.Long))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString(".SH COMMANDS\n")
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				fmt.Fprintf(&b, ".TP\n\\fB%s\\fR\n%s\n", s.Name(), roff(s.Short))
			}
		}
	}
	flags := c.NonInheritedFlags()
	if flags.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS\n")
		flags.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			varname, usage := pflag.UnquoteUsage(f)
			head := `\fB\-\-` + f.Name + `\fR`
			if f.Shorthand != "" {
				head = `\fB\-` + f.Shorthand + `\fR, ` + head
			}
			if varname != "" && f.Value.Type() != "bool" {
				head += ` \fI` + roff(varname) + `\fR`
			}
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
				usage += " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(&b, ".TP\n%s\n%s\n", head, roff(usage))
		})
	}
	if c.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLES\n.nf\n%s\n.fi\n", roff(c.Example))
	}
	var see []string
	if p := c.Parent(); p != nil {
		see = append(see, manName(p)+"(1)")
	}
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() && s.Name() != "completion" {
			see = append(see, manName(s)+"(1)")
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(see, ", "))
	}
	return b.String()
}
