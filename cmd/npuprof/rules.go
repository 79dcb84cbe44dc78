package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/compare"
	"github.com/npuprof/npuprof/deploy"
	"github.com/npuprof/npuprof/plan"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/rules"
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

	script *deploy.Script // read by loadDeploy
}

func (o *ruleOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.RuleFiles, "rules", nil, "also load the rules and budgets in `FILE` (YAML, see docs/rules.md); repeatable")
	o.selectOptions.flags(cmd)
	f.StringVar(&o.Deploy, "deploy", "", "the deployment script (`FILE`: export lines and `vllm serve ...`): its facts are used (a value vLLM would refuse, e.g. an unknown cudagraph_mode, is a warning naming the line, and that fact stays unknown) and each finding carries a diff against it")
	intFlag(f, &o.DeployLine, "deploy-line", 0, deployLineRange, "when the --deploy script starts several vllm serve commands, use the one on line `N` (any line it spans) for the facts and the diff (default: the last, with a warning naming each)")
	f.StringVar(&o.Source, "source", "", "the vllm-ascend source (`DIR`: a checkout or the installed vllm_ascend package folder, only read): code fixes become unified diffs of its files")
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

// loadRules loads the built-in rules and --rules files and applies the
// selection (the files' disable/only/no_builtin keys, then the flags);
// problems in the files are input errors that list every file:line:col, an
// unknown rule id in a flag a usage error.
func loadRules(files []string, sel selectOptions) (*rules.Set, error) {
	set, err := rules.Load(files...)
	if err != nil {
		return nil, err
	}
	for _, s := range []rules.Selection{{Disable: sel.Disable, Source: "--disable"}, {Only: sel.Only, Source: "--only"}, {NoBuiltin: sel.NoBuiltin, Source: "--no-builtin"}} {
		if err := set.Select(s); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// loadDeploy reads the --deploy script and picks its command
// (--deploy-line); a problem is a usage error. Commands call it before
// reading the profile, so a wrong script or line fails fast.
func (o *ruleOptions) loadDeploy() error {
	if o.Source != "" {
		if st, err := os.Stat(o.Source); err != nil || !st.IsDir() {
			return usageErr("--source %s: not a folder (expected a vllm-ascend checkout or the vllm_ascend package folder)", o.Source)
		}
	}
	if o.script != nil {
		return nil
	}
	if o.DeployLine < 0 {
		return usageErr("--deploy-line %d: out of range: expected %s", o.DeployLine, deployLineRange)
	}
	if o.Deploy == "" {
		if o.DeployLine != 0 {
			return usageErr("--deploy-line needs --deploy FILE (the script whose line it names)")
		}
		return nil
	}
	s, err := deploy.ReadFile(o.Deploy)
	if err != nil {
		return usageErr("--deploy: %v", err)
	}
	if s.Serve == nil {
		return usageErr("--deploy %s: no `vllm serve` command found (expected a shell script that starts vLLM)", o.Deploy)
	}
	if o.DeployLine != 0 {
		if err := s.Select(o.DeployLine); err != nil {
			return usageErr("--deploy-line: %v", err)
		}
	}
	o.script = s
	return nil
}

// deployWarnings are what the reports say about the --deploy script:
// several `vllm serve` commands, and which one was read.
func (o *ruleOptions) deployWarnings() []string {
	if o.script == nil {
		return nil
	}
	unread := o.script.Unread()
	w := o.script.Warning()
	if w == "" {
		return unread
	}
	if o.script.Selected {
		w += fmt.Sprintf(" (--deploy-line %d)", o.DeployLine)
	} else {
		w += "; pick another with --deploy-line N (any line of it)"
	}
	return append([]string{w}, unread...)
}

// evaluateRules reads the deployment script and facts, then runs the rules.
func evaluateRules(res *analysis.Result, set *rules.Set, o *ruleOptions, baseline *results.Baseline) (*rules.Report, *rules.FactSet, error) {
	if err := o.loadDeploy(); err != nil {
		return nil, nil, err
	}
	var dep *rules.Deployment
	if o.script != nil {
		facts, invalid := o.script.FactsChecked()
		dep = rules.NewDeployment(o.script.Path, facts, invalid)
	}
	facts, err := rules.BuildFacts(res, dep, o.Facts)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	in := &rules.Input{Result: res, Facts: facts, Baseline: baseline, Lang: o.lang}
	rep := rules.Evaluate(set, in)
	var ed rules.Editor
	if o.script != nil {
		// the findings' actions become diffs of the script after the rules ran
		rep.AttachDiffs(o.script)
		ed = o.script
	}
	// predictions and the fix plan (whose diff is the combined deploy diff)
	plan.Build(res, rep, ed)
	if o.Source != "" {
		plan.AddPatches(rep, o.Source)
	}
	rep.EvalPlanBudgets(set, in)
	rep.Warnings = append(rep.Warnings, o.deployWarnings()...)
	// a value of the user's script npuprof cannot use (an unknown
	// cudagraph_mode) does not fail the run: the reports say it
	rep.Warnings = append(rep.Warnings, facts.Warnings()...)
	return rep, facts, nil
}

func newRulesCmd(io *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List the rules and explain what each checks",
		Long: `The rules turn measurements into findings with the exact fix. Built-in rules
are embedded in npuprof; --rules FILE adds your own (docs/rules.md).`,
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
	}, func(set *rules.Set, lang string, args []string) error {
		for _, r := range set.Rules {
			src := "built-in"
			if !r.Builtin {
				src = fmt.Sprintf("%s:%d", r.File, r.Line)
			}
			why := strings.TrimSpace(r.WhyIn(lang))
			if i := strings.Index(why, ". "); i > 0 {
				why = why[:i+1]
			} else if i := strings.Index(why, "。"); i > 0 {
				why = why[:i+len("。")]
			}
			fmt.Fprintf(io.out, "%-22s %-7s %s\n", r.ID, r.Severity, src)
			if why != "" {
				fmt.Fprintf(io.out, "    %s\n", why)
			}
		}
		for _, b := range set.Budgets {
			fmt.Fprintf(io.out, "%-22s %-7s %s:%d\n    budget: %s\n", b.ID, b.Severity, b.File, b.Line, b.Text)
		}
		return nil
	})
}

func newRulesExplainCmd(io *streams) *cobra.Command {
	return rulesSubcommand(io, &cobra.Command{
		Use:   "explain ID",
		Short: "Explain a rule: what it checks, the expression, thresholds, the fix, and why",
		Example: `  $ npuprof rules explain moe-routing-cumsum
  $ npuprof rules explain my-rule --rules team-rules.yaml`,
		Args: exactArgs(1),
	}, func(set *rules.Set, lang string, args []string) error {
		r := set.Lookup(args[0])
		if r == nil {
			var ids []string
			for _, x := range set.Rules {
				ids = append(ids, x.ID)
			}
			if near := rules.Suggest(args[0], ids, 3); len(near) > 0 {
				return usageErr("no rule %q; did you mean %s?", args[0], strings.Join(near, ", "))
			}
			return usageErr("no rule %q; 'npuprof rules list' lists the %d rules", args[0], len(ids))
		}
		explain(io, r, lang)
		return nil
	})
}

// rulesSubcommand gives cmd its --rules flag and a run over the rule set
// (built-in plus --rules files).
func rulesSubcommand(io *streams, cmd *cobra.Command, run func(set *rules.Set, lang string, args []string) error) *cobra.Command {
	var files []string
	var lf langFlag
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := lf.resolve(io, true); err != nil {
			return err
		}
		set, err := loadRules(files, selectOptions{})
		if err != nil {
			return err
		}
		return run(set, lf.lang, args)
	}
	cmd.Flags().StringArrayVar(&files, "rules", nil, "also load the rules in `FILE`; repeatable")
	cmd.Flags().StringVar(&lf.Lang, "lang", "", "the language of the rules' explanations and fix templates: zh or en (default: from the locale, see analyze --help)")
	return cmd
}

// explain prints what rule r checks; its why and fix template in lang.
func explain(io *streams, r *rules.Rule, lang string) {
	w := io.out
	src := "built-in (" + r.File + ")"
	if !r.Builtin {
		src = fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	fmt.Fprintf(w, "%s  [%s]  %s\n\n", r.ID, r.Severity, src)
	if why := strings.TrimSpace(r.WhyIn(lang)); why != "" {
		fmt.Fprintf(w, "Why\n  %s\n\n", wrap(why, "  "))
	}
	a := r.AppliesTo
	if a.VllmAscend != "" || len(a.Phase) > 0 || len(a.ModelFamily) > 0 {
		fmt.Fprintf(w, "Applies to\n")
		if a.VllmAscend != "" {
			fmt.Fprintf(w, "  vllm_ascend_version %s\n", a.VllmAscend)
		}
		if len(a.Phase) > 0 {
			fmt.Fprintf(w, "  phase %s\n", strings.Join(a.Phase, ", "))
		}
		if len(a.ModelFamily) > 0 {
			fmt.Fprintf(w, "  model %s\n", strings.Join(a.ModelFamily, ", "))
		}
		fmt.Fprintln(w)
	}
	if len(r.Thresholds) > 0 {
		fmt.Fprintf(w, "Thresholds\n")
		names := slices.Sorted(maps.Keys(r.Thresholds))
		for _, k := range names {
			fmt.Fprintf(w, "  threshold.%s = %g\n", k, r.Thresholds[k])
		}
		fmt.Fprintln(w)
	}
	if len(r.Vars) > 0 {
		fmt.Fprintf(w, "Values\n")
		for _, v := range r.Vars {
			fmt.Fprintf(w, "  %s = %s\n", v.Name, indentRest(strings.TrimSpace(v.Source), "      "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Fires when\n  %s\n\n", indentRest(strings.TrimSpace(r.When.Source), "  "))
	if r.Saving != nil {
		fmt.Fprintf(w, "Estimated saving (µs per rank over the capture)\n  %s\n\n", indentRest(strings.TrimSpace(r.Saving.Source), "  "))
	}
	if r.Severity == "auto" {
		fmt.Fprintf(w, "Severity\n  from the saving's share of the device window: >= 5%% high, >= 1%% medium, else low\n\n")
	}
	metrics := map[string]bool{}
	facts := map[string]bool{}
	collect := func(e *rules.Expr) {
		if e == nil {
			return
		}
		for _, m := range e.Metrics {
			metrics[m] = true
		}
		for _, f := range e.Facts {
			facts[f] = true
		}
	}
	collect(r.When)
	collect(r.Saving)
	for _, e := range r.Evidence {
		metrics[e.Metric] = true
	}
	if len(metrics) > 0 {
		fmt.Fprintf(w, "Metrics it reads\n")
		for _, m := range slices.Sorted(maps.Keys(metrics)) {
			d, _ := rules.LookupMetric(m)
			fmt.Fprintf(w, "  %-40s %s\n", m, d.Doc)
		}
		fmt.Fprintln(w)
	}
	if len(facts) > 0 {
		fmt.Fprintf(w, "Facts it reads\n")
		for _, f := range slices.Sorted(maps.Keys(facts)) {
			d, _ := rules.LookupFact(f)
			fmt.Fprintf(w, "  fact.%-30s %s (from %s)\n", f, d.Doc, d.From)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Fix (template)\n  %s\n", indentRest(strings.TrimSpace(r.FixIn(lang).Source), "  "))
	if len(r.Edits) > 0 {
		fmt.Fprintf(w, "\nChanges to the --deploy script\n")
		for _, e := range r.Edits {
			line := "  " + e.Op + " " + e.Name
			if e.Value != nil {
				line += " " + e.Value.Source
			}
			if e.If != nil {
				line += "   (if " + strings.TrimSpace(e.If.Source) + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
	if r.Docs != "" {
		fmt.Fprintf(w, "\nDocs: %s\n", r.Docs)
	}
}

func indentRest(s, ind string) string {
	return strings.ReplaceAll(s, "\n", "\n"+ind)
}

func wrap(s, ind string) string {
	words := strings.Fields(s)
	var b strings.Builder
	n := 0
	for _, w := range words {
		if n > 0 && n+len(w) > 76 {
			b.WriteString("\n" + ind)
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// readBaseline loads --baseline OLD.json.
func readBaseline(path string) (*results.Baseline, *results.Document, error) {
	doc, err := readDocument(path, "--baseline: ")
	if err != nil {
		return nil, nil, err
	}
	return compare.Baseline(doc, path), doc, nil
}
