package main

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/docs"
	"github.com/npuprof/npuprof/internal/editdist"
)

// docTopics are the embedded documentation pages by topic (the page's
// file name without .md), each with its title (its first heading).
func docTopics() (topics []string, titles map[string]string) {
	titles = map[string]string{}
	pages, _ := fs.Glob(docs.Pages, "*.md")
	for _, p := range pages {
		topic := strings.TrimSuffix(path.Base(p), ".md")
		b, _ := fs.ReadFile(docs.Pages, p)
		title, _, _ := strings.Cut(string(b), "\n")
		topics, titles[topic] = append(topics, topic), strings.TrimSpace(strings.TrimLeft(title, "# "))
	}
	slices.Sort(topics)
	return topics, titles
}

func newDocsCmd(io *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "docs [TOPIC]",
		Short: "Print npuprof's documentation, embedded in the binary",
		Long: `Docs prints a page of npuprof's documentation (Markdown, as in the
repository's docs/ folder, which the help and the outputs cite as
'npuprof docs TOPIC'). Without TOPIC it lists the topics.`,
		Example: `  $ npuprof docs
  $ npuprof docs rules
  $ npuprof docs cli | less`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			topics, _ := docTopics()
			return topics, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			topics, titles := docTopics()
			if len(args) == 0 {
				for _, t := range topics {
					fmt.Fprintf(io.out, "  %-12s %s\n", t, titles[t])
				}
				fmt.Fprintln(io.out, "\nnpuprof docs TOPIC prints one.")
				return nil
			}
			topic := strings.TrimSuffix(strings.TrimPrefix(args[0], "docs/"), ".md")
			if !slices.Contains(topics, topic) {
				msg := fmt.Sprintf("docs: no topic %q; the topics are %s", args[0], strings.Join(topics, ", "))
				best, d := "", 3
				for _, t := range topics {
					if e := editdist.Distance(topic, t); e < d {
						best, d = t, e
					}
				}
				if best != "" {
					msg = fmt.Sprintf("docs: no topic %q; did you mean %s?", args[0], best)
				}
				return usageErr("%s", msg)
			}
			b, err := fs.ReadFile(docs.Pages, topic+".md")
			if err != nil {
				return err
			}
			_, err = io.out.Write(b)
			return err
		},
	}
	return cmd
}
