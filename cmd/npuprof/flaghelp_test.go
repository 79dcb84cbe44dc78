package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// pflag takes the first `backquoted` word of a flag's usage as the name
// of its value in --help: it must be one placeholder word (FILE, PATH),
// not a phrase (--vllm-bench printed as `--vllm-bench vllm bench serve`).
func TestFlagValueNamesAreOneWord(t *testing.T) {
	root := newRootCmd(&streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			quotedWord := strings.HasPrefix(name, "'") && strings.HasSuffix(name, "'") // 'METRIC OP EXPR': one shell word
			if strings.ContainsAny(name, " \t") && !quotedWord {
				t.Errorf("%s --%s: value name %q is not one word (usage %q)", c.CommandPath(), f.Name, name, f.Usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// Every command that runs teaches in its --help: what it does, an
// example, the exit codes a script can test, and a usage for each flag.
func TestEveryCommandHelpTeaches(t *testing.T) {
	root := newRootCmd(&streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if !c.Runnable() || c.HasSubCommands() || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, out, _ := run(args...)
		if code != ExitOK {
			t.Errorf("%s: exit %d", c.CommandPath(), code)
		}
		for _, want := range []string{"\nExamples:\n", "\n  0  ", "\n  2  usage or input error", "\n  3  "} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help has no %q:\n%s", c.CommandPath(), strings.TrimSpace(want), out)
			}
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("%s --%s has no usage", c.CommandPath(), f.Name)
			}
		})
	}
	walk(root)
}
