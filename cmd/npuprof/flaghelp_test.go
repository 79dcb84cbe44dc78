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
