package main

import (
	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/driver"
)

// ruleOptions are the flags shared by analyze, check and report.
type ruleOptions struct {
	RuleFiles []string
	selectOptions
	Deploy     string
	DeployLine int
	Facts      []string
	Source     string
	langFlag
}

func (o *ruleOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.RuleFiles, "rules", nil, "also load the rules and budgets in `FILE` (YAML, see 'npuprof docs rules'); repeatable")
	o.selectOptions.flags(cmd)
	f.StringVar(&o.Deploy, "deploy", "", "the deployment script (`FILE`: export lines and `vllm serve ...`): its facts are used (a value vLLM would refuse, e.g. an unknown cudagraph_mode, is a warning naming the line, and that fact stays unknown) and each finding carries a diff against it")
	intFlag(f, &o.DeployLine, "deploy-line", 0, deployLineRange, "when the --deploy script starts several vllm serve commands, use the one on line `N` (any line it spans) for the facts and the diff (default: the last, with a warning naming each)")
	f.StringVar(&o.Source, "source", "", "the vllm-ascend source (`DIR`: a checkout or the installed vllm_ascend package folder, only read): code fixes become unified diffs of its files; an installed tree's vllm_ascend/_version.py gives the vLLM-Ascend version when nothing else does")
	o.langFlag.register(f)
	f.StringArrayVar(&o.Facts, "fact", nil, "set or override a fact, `NAME=VALUE` (e.g. concurrency=25, vllm_ascend_version=v0.13.0rc2, cudagraph_mode=FULL_DECODE_ONLY: one of vLLM's NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE); repeatable")
}

// selectOptions are the rule selection flags (analyze, check, report, diff).
type selectOptions struct {
	Disable, Only []string
	NoBuiltin     bool
}

func (o *selectOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&o.Disable, "disable", nil, "do not run the rules (or budgets) `RULE[,RULE...]`: their status is disabled; repeatable")
	f.StringSliceVar(&o.Only, "only", nil, "run only the rules `RULE[,RULE...]` (budgets still run); the others are disabled; repeatable")
	f.BoolVar(&o.NoBuiltin, "no-builtin", false, "do not run the built-in rules (only those of --rules files)")
}

// selection is the rule selection of the flags and the rule files.
func (o *ruleOptions) selection() driver.RuleSelection {
	return o.selectOptions.selection(o.RuleFiles)
}

// selection is the selection of the flags over the rule files.
func (o *selectOptions) selection(files []string) driver.RuleSelection {
	return driver.RuleSelection{Files: files, Disable: o.Disable, Only: o.Only, NoBuiltin: o.NoBuiltin}
}

func newRulesCmd(io *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List the rules and explain what each checks",
		Long: `The rules turn measurements into findings with the exact fix. Built-in rules
are embedded in npuprof; --rules FILE adds your own ('npuprof docs rules').`,
		Args: cobra.NoArgs, // "rules nosuch" is an unknown command, not the help
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRulesListCmd(io), newRulesExplainCmd(io), newRulesTestCmd(io))
	return cmd
}

func newRulesListCmd(io *streams) *cobra.Command {
	return rulesSubcommand(io, &cobra.Command{
		Use:   "list",
		Short: "List the built-in rules (and those of --rules files)",
		Example: `  $ npuprof rules list
  $ npuprof rules list --rules team-rules.yaml`,
		Args: cobra.NoArgs,
	}, func(files []string, lang string, args []string) error {
		return driver.ListRules(io.out, files, lang)
	})
}

func newRulesExplainCmd(io *streams) *cobra.Command {
	return rulesSubcommand(io, &cobra.Command{
		Use:   "explain ID",
		Short: "Explain a rule: what it checks, the expression, thresholds, the fix, and why",
		Example: `  $ npuprof rules explain moe-routing-cumsum
  $ npuprof rules explain my-rule --rules team-rules.yaml`,
		Args: exactArgs(1),
	}, func(files []string, lang string, args []string) error {
		return driver.ExplainRule(io.out, files, args[0], lang)
	})
}

// rulesSubcommand gives cmd its --rules flag and a run over the rule set
// (built-in plus --rules files).
func rulesSubcommand(io *streams, cmd *cobra.Command, run func(files []string, lang string, args []string) error) *cobra.Command {
	var files []string
	var lf langFlag
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := lf.resolve(io, true); err != nil {
			return err
		}
		return run(files, lf.lang, args)
	}
	cmd.Flags().StringArrayVar(&files, "rules", nil, "also load the rules in `FILE`; repeatable")
	cmd.Flags().StringVarP(&lf.Lang, "lang", "l", "", "the language of the rules' explanations and fix templates: zh or en (default: from the locale, see analyze --help)")
	return cmd
}
