package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/compare"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/render"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/rules"
)

// --partial-findings values.
const (
	partialGate   = "gate"
	partialReport = "report"
)

// checkOptions are the flags of `npuprof check`.
type checkOptions struct {
	Path     string
	FailOn   string
	Baseline string
	Budgets  []string
	JUnit    string
	SARIF    string
	Format   string
	Output   string
	Workers  int
	Quiet    bool
	// PartialFindings is what a finding built on metrics of a truncated
	// file does to the exit code: gate (like any finding) or report.
	PartialFindings string
	ruleOptions
	expertFlags
	Serving servingOptions
}

func newCheckCmd(io *streams, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check PATH",
		Short: "Gate CI on a captured profile: exit 1 when findings reach --fail-on",
		Long: `Check analyzes a profile like analyze, runs the rules (built-in, --rules
files, and budgets against a --baseline document), and exits with a code a CI
pipeline can gate on:

  0  no finding at or above --fail-on
  1  findings at or above --fail-on
  2  usage or input error (bad flag, unreadable rule file, no profile)
  3  an analysis pass or a rule failed to run (shown, never skipped)

A rule whose inputs are not in the profile is "not evaluated" with the
reason; it does not fail the check.

A finding that read metrics of a file cut short (a truncated
trace_view.json or kernel_details.csv: the rank is PARTIAL) says so in
every output: which rank, which metrics, whether they decided the finding
("when") or its saving, and that its saving is then uncertain. By default
(--partial-findings gate) it gates like any other finding. With
--partial-findings report it is still shown but does not fail the check
(JUnit: system-out, not a failure; SARIF: level note): use it on a capture
you know was cut, not as a way to silence a regression. A budget whose
--baseline document had a rank cut short is such a finding too (its caveat
says "baseline rank N"). See docs/rules.md, "Partial inputs".

--junit and --sarif write reports for CI systems (one test case / result
per rule); --format json prints the npuprof.analysis/v1 document with
findings and every rule's outcome.

Budgets compare with a saved document: a rule file's "budgets:" list, or
--budget, e.g. 'hccl.allgather.time_us <= baseline * 1.05', where baseline is
the same metric (mean over ranks) in the --baseline file.`,
		Example: `  # Fail the pipeline on high-severity findings
  $ npuprof check ./profiles/ --fail-on high --junit npuprof.xml

  # With the deployment script: findings carry a diff against it
  $ npuprof check ./profiles/ --deploy serve.sh --fact concurrency=25 --sarif npuprof.sarif

  # A capture that may be cut short: report its findings, gate only on whole inputs
  $ npuprof check ./profiles/ --fail-on medium --partial-findings report

  # Guard against regressions from a saved analysis
  $ npuprof check ./profiles/ --baseline main.json --budget 'hccl.allgather.time_us <= baseline * 1.05'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if rules.SeverityRank(opts.FailOn) == 0 {
				return usageErr("--fail-on %q: expected high, medium or low", opts.FailOn)
			}
			if opts.PartialFindings != partialGate && opts.PartialFindings != partialReport {
				return usageErr("--partial-findings %q: expected gate or report", opts.PartialFindings)
			}
			if opts.Format != "text" && opts.Format != "json" {
				return usageErr("--format %q: expected text or json", opts.Format)
			}
			if err := opts.expertFlags.check(); err != nil {
				return err
			}
			if len(opts.Budgets) > 0 && opts.Baseline == "" {
				return usageErr("--budget needs --baseline OLD.json (the document to compare with)")
			}
			ins := append(opts.ruleOptions.inputs(), opts.Path, opts.Baseline, opts.Experts, opts.Serving.VLLMLog, opts.Serving.VLLMBench)
			if err := checkOutputs([]string{opts.Output, opts.JUnit, opts.SARIF}, ins...); err != nil {
				return err
			}
			if err := oneStdout("the "+opts.Format+" output (-o)", opts.Output, "--junit", opts.JUnit, "--sarif", opts.SARIF); err != nil {
				return err
			}
			if err := checkInputFiles(append(inputFlags(&opts.ruleOptions, &opts.Serving), "--baseline", opts.Baseline)...); err != nil {
				return err
			}
			if err := opts.ruleOptions.loadDeploy(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return checkRun(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.FailOn, "fail-on", "high", "lowest severity that fails the check: high, medium or low")
	f.StringVar(&opts.Baseline, "baseline", "", "a saved `OLD.json` (npuprof analyze --format json) that budgets compare with")
	f.StringArrayVar(&opts.Budgets, "budget", nil, "a budget `'METRIC OP EXPR'` against --baseline, e.g. 'hccl.total.time_us <= baseline * 1.05'; repeatable")
	f.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	f.StringVar(&opts.SARIF, "sarif", "", "also write a SARIF 2.1.0 log to `FILE`")
	f.StringVar(&opts.Format, "format", "text", "output format: text or json")
	f.StringVar(&opts.PartialFindings, "partial-findings", partialGate, "findings that read metrics of a truncated file: gate (fail the check like any finding) or report (show them, labelled, without failing)")
	f.StringVarP(&opts.Output, "output", "o", "", "write the output to `FILE` instead of standard output")
	workersFlag(f, &opts.Workers, "ranks parsed at once (0 = number of CPUs)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on standard error")
	opts.flags(cmd)
	opts.expertFlags.register(cmd)
	opts.Serving.addFlags(f)
	return cmd
}

// reBudgetPos is the file:line:col prefix of a problem in a --budget.
var reBudgetPos = regexp.MustCompile(`^--budget:\d+:\d+: `)

func checkRun(ctx context.Context, io *streams, opts *checkOptions) error {
	set, err := loadRules(opts.RuleFiles)
	if err != nil {
		return err
	}
	var problems []string
	for _, x := range opts.Budgets {
		// each --budget is parsed alone, and its problems are named by its
		// text rather than by a line:col of the YAML it is wrapped in
		extra, err := rules.Parse("--budget", fmt.Appendf(nil, "budgets:\n  - %q\n", x))
		switch {
		case errkind.Problems(err) != nil:
			for _, p := range errkind.Problems(err) {
				problems = append(problems, reBudgetPos.ReplaceAllLiteralString(p, "--budget '"+x+"': "))
			}
		case err != nil:
			return errkind.Wrap(errkind.Usage, err)
		default:
			for i := range extra.Budgets {
				// a problem found while it runs names it the same way
				extra.Budgets[i].File, extra.Budgets[i].Line = "--budget '"+x+"'", 0
			}
			set.Budgets = append(set.Budgets, extra.Budgets...)
		}
	}
	if len(problems) > 0 {
		return errkind.List(errkind.Usage, problems)
	}
	var baseline *rules.Baseline
	var baseDoc *results.Document
	if opts.Baseline != "" {
		if baseline, baseDoc, err = readBaseline(opts.Baseline); err != nil {
			return err
		}
	}
	res, err := loadAndAnalyze(ctx, io, opts.Path, opts.Workers, opts.Quiet, false, opts.expertFlags)
	if err != nil {
		return err
	}
	if err := loadServing(res, opts.Path, opts.Serving); err != nil {
		return err
	}
	rep, facts, err := evaluateRules(res, set, &opts.ruleOptions, baseline)
	if err != nil {
		return err
	}
	// The same comparison engine as npuprof diff: what changed since the
	// baseline, shown under the findings.
	doc := sync.OnceValue(func() *results.Document { return results.New(res, rep, facts) })
	var cmp *compare.Result
	if baseDoc != nil {
		cmp = compare.Compare(baseDoc, doc(), compare.Options{Kernels: 5})
	}
	gatePartial := opts.PartialFindings == partialGate
	atOrAbove := rules.AtOrAbove(rep.Findings, opts.FailOn)
	failing := atOrAbove
	if !gatePartial {
		failing = rules.Whole(atOrAbove)
	}
	partialCount := 0
	for _, f := range atOrAbove {
		if f.HasPartial() {
			partialCount++
		}
	}
	if err := writeOutput(io, opts.Output, func(w ioWriter) error {
		if opts.Format == "json" {
			doc := doc()
			if cmp != nil {
				raw, err := json.Marshal(cmp)
				if err != nil {
					return err
				}
				doc.BaselineDiff = raw
			}
			return render.WriteJSON(w, doc)
		}
		if err := render.WriteTextReport(w, res, rep, facts); err != nil {
			return err
		}
		if cmp != nil {
			if err := render.WriteDiffSummary(w, cmp); err != nil {
				return err
			}
		}
		verdict := "PASS"
		if len(failing) > 0 {
			verdict = "FAIL"
		}
		partial := ""
		switch {
		case partialCount > 0 && gatePartial:
			partial = fmt.Sprintf(" (%d of them from a truncated file)", partialCount)
		case partialCount > 0:
			partial = fmt.Sprintf(" (%d more from a truncated file, not gated: --partial-findings report)", partialCount)
		}
		_, err := fmt.Fprintf(w, "\ncheck: %d finding(s), %d at or above %s%s: %s\n", len(rep.Findings), len(failing), opts.FailOn, partial, verdict)
		return err
	}); err != nil {
		return err
	}
	if opts.JUnit != "" {
		if err := writeOutput(io, opts.JUnit, func(w ioWriter) error {
			return render.WriteJUnit(w, opts.Path, rep, opts.FailOn, gatePartial)
		}); err != nil {
			return err
		}
	}
	if opts.SARIF != "" {
		if err := writeOutput(io, opts.SARIF, func(w ioWriter) error {
			return render.WriteSARIF(w, render.SARIFInput{Profile: opts.Path, Deploy: opts.Deploy, Version: Version, Rules: set, Report: rep,
				PartialNotGated: !gatePartial})
		}); err != nil {
			return err
		}
	}
	// 3 (a pass or rule failed) outranks 1 (findings)
	if err := passErrors(res); err != nil {
		return err
	}
	if err := ruleErrors(rep); err != nil {
		return err
	}
	if len(failing) > 0 {
		msg := fmt.Sprintf("%d finding(s) at or above %s", len(failing), opts.FailOn)
		if gatePartial && partialCount > 0 {
			msg += fmt.Sprintf(", %d of them from a truncated file", partialCount)
		}
		return &exitError{code: ExitFindings, err: errors.New(msg)}
	}
	return nil
}
