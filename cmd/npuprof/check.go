package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/compare"
	"github.com/npuprof/npuprof/render"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/results/diff"
	"github.com/npuprof/npuprof/rules"
)

// --partial-findings values.
const (
	partialGate   = "gate"
	partialReport = "report"
)

// checkOptions are the flags of `npuprof check`.
type checkOptions struct {
	profileFlags
	FailOn   string
	Baseline string
	Budgets  []string
	JUnit    string
	SARIF    string
	Format   string
	summaryFlags
	// PartialFindings is what a finding built on metrics of a truncated
	// file does to the exit code: gate (like any finding) or report.
	PartialFindings string
	// RequireAllRanks fails the check when ranks of the world the
	// profile states are missing (results.Input.MissingRanks).
	RequireAllRanks bool
}

func (o *checkOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.FailOn, "fail-on", "high", "lowest severity that fails the check: high, medium or low")
	f.StringVar(&o.Baseline, "baseline", "", "a saved `OLD.json` (npuprof analyze --format json) that budgets compare with")
	f.StringArrayVar(&o.Budgets, "budget", nil, "a budget `'METRIC OP EXPR'` against --baseline, e.g. 'hccl.total.time_us <= baseline * 1.05'; repeatable")
	f.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	f.StringVar(&o.SARIF, "sarif", "", "also write a SARIF 2.1.0 log to `FILE`")
	formatFlag(f, &o.Format, render.RunOutputs)
	f.StringVar(&o.PartialFindings, "partial-findings", partialGate, "findings that read metrics of a truncated file: gate (fail the check like any finding) or report (show them, labelled, without failing)")
	f.BoolVar(&o.RequireAllRanks, "require-all-ranks", false, "exit 1 when ranks of the world the profile states (parallel_group_info, profiler_info, a Kineto header) are missing")
	o.profileFlags.register(cmd, usageOutput, usageWorkers)
	o.summaryFlags.register(f)
}

func (o *checkOptions) check(io *streams, _ *cobra.Command, args []string) error {
	o.Path = args[0]
	if results.SeverityRank(o.FailOn) == 0 {
		return usageErr("--fail-on %q: expected high, medium or low", o.FailOn)
	}
	if o.PartialFindings != partialGate && o.PartialFindings != partialReport {
		return usageErr("--partial-findings %q: expected gate or report", o.PartialFindings)
	}
	if err := checkFormat(render.RunOutputs, o.Format); err != nil {
		return err
	}
	if err := o.checkFlags(io, o.Format == "text"); err != nil {
		return err
	}
	if needsBaseline(o.Budgets) && o.Baseline == "" {
		return usageErr("--budget needs --baseline OLD.json (the document to compare with)")
	}
	return o.checkFiles("the "+o.Format+" output (-o)", o.Baseline, "--junit", o.JUnit, "--sarif", o.SARIF)
}

func newCheckCmd(io *streams) *cobra.Command {
	return newCommand(io, &cobra.Command{
		Use:   "check PATH",
		Short: "Gate CI on a captured profile: exit 1 when findings reach --fail-on",
		Long: `Check analyzes a profile like analyze, runs the rules (built-in, --rules
files, and budgets against a --baseline document), and exits with a code a CI
pipeline can gate on:

  0  no finding at or above --fail-on
  1  findings at or above --fail-on (or, with --require-all-ranks, ranks
     of the world the profile states are missing)
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
	}, &checkOptions{}, checkRun)
}

// checkRun analyzes, evaluates the rules, judges the report by the gate
// (--fail-on, --partial-findings), writes the outputs and exits by the
// verdict.
func checkRun(ctx context.Context, io *streams, opts *checkOptions) error {
	start := time.Now()
	set, err := loadRules(opts.RuleFiles, opts.selectOptions)
	if err != nil {
		return err
	}
	if err := rules.AddBudgets(set, opts.Budgets); err != nil {
		return err
	}
	baseline, baseDoc, err := readBaselineFlag(opts.Baseline)
	if err != nil {
		return err
	}
	res, err := opts.load(ctx, io, false)
	if err != nil {
		return err
	}
	if err := nothingMeasured(res); err != nil {
		return err
	}
	if err := loadServing(res, opts.Path, opts.Serving); err != nil {
		return err
	}
	a, err := opts.judge(res, set, baseline)
	if err != nil {
		return err
	}
	if err := nothingEvaluated(a.rep); err != nil {
		return err
	}
	c := &checked{analyzed: a, start: start, set: set,
		verdict: rules.Gate{FailOn: opts.FailOn, GatePartial: opts.PartialFindings == partialGate}.Judge(a.rep)}
	if baseDoc != nil {
		// the same comparison engine as npuprof diff: what changed since
		// the baseline, shown under the findings
		c.cmp = compare.Compare(baseDoc, c.doc(), compare.Options{Kernels: 5})
	}
	if err := writeCheck(io, opts, c); err != nil {
		return err
	}
	// 3 (a pass or rule failed) outranks 1 (findings)
	if err := a.errors(); err != nil {
		return err
	}
	if err := c.verdict.Err(); err != nil {
		return &exitError{code: ExitFindings, err: err}
	}
	if opts.RequireAllRanks && len(res.MissingRanks) > 0 {
		why := fmt.Sprintf("%d of the %d ranks of the world are missing", len(res.MissingRanks), res.WorldSize)
		for _, n := range res.Notes {
			if strings.Contains(n, " missing (world of ") {
				why = n // gather's note names them
				break
			}
		}
		return &exitError{code: ExitFindings, err: fmt.Errorf("--require-all-ranks: %s", why)}
	}
	return nil
}

// readBaselineFlag reads --baseline, nil when not given.
func readBaselineFlag(path string) (*results.Baseline, *results.Document, error) {
	if path == "" {
		return nil, nil, nil
	}
	return readBaseline(path)
}

// checked is what check found, for its outputs.
type checked struct {
	*analyzed
	start   time.Time // the check's start: JUnit's time is the wall time since
	set     *rules.Set
	cmp     *diff.Result // nil without --baseline
	verdict rules.Verdict
}

// writeCheck writes check's output (text or JSON) and the --junit and
// --sarif reports.
func writeCheck(io *streams, opts *checkOptions, c *checked) error {
	if c.cmp != nil {
		raw, err := json.Marshal(c.cmp)
		if err != nil {
			return err
		}
		c.doc().BaselineDiff = raw
	}
	in := c.runOutput(opts.Format, opts.text(io))
	in.Baseline, in.Verdict = c.cmp, "\n"+c.verdict.Summary()+"\n"
	if err := writeFormat(io, opts.Output, render.RunOutputs, opts.Format, in); err != nil {
		return err
	}
	if opts.JUnit != "" {
		if err := writeOutput(io, opts.JUnit, func(w ioWriter) error {
			return render.WriteJUnit(w, render.JUnitInput{Profile: opts.Path, Doc: c.doc(), FailOn: opts.FailOn,
				GatePartial: c.verdict.GatePartial, Tool: tool, Elapsed: time.Since(c.start)})
		}); err != nil {
			return err
		}
	}
	if opts.SARIF == "" {
		return nil
	}
	return writeOutput(io, opts.SARIF, func(w ioWriter) error {
		return render.WriteSARIF(w, render.SARIFInput{Profile: opts.Path, Deploy: opts.Deploy, Version: tool.Version, Revision: tool.Revision, Doc: c.doc(),
			PartialNotGated: !c.verdict.GatePartial})
	})
}

// nothingMeasured is check's refusal to pass on a profile in which no
// rank has device data (a capture that lost it would turn CI green): exit
// 2, naming what was missing.
func nothingMeasured(res *analysis.Result) error {
	var why []string
	for _, rr := range res.Ranks {
		w, none := render.NoDeviceData(rr.Metrics, rr.Unavailable)
		if !none {
			return nil
		}
		if len(why) < 3 {
			why = append(why, fmt.Sprintf("rank %d: %s", rr.Rank, w))
		}
	}
	if len(res.Ranks) > len(why) {
		why = append(why, fmt.Sprintf("and %d more rank(s)", len(res.Ranks)-len(why)))
	}
	return &exitError{code: ExitUsage, err: fmt.Errorf("%s: nothing to check: no rank has device data (%s)", res.Path, strings.Join(why, "; "))}
}

// nothingEvaluated refuses a check in which no rule or budget could be
// evaluated: exit 2, naming the first reasons.
func nothingEvaluated(rep *rules.Report) error {
	var why []string
	for _, o := range rep.Outcomes {
		switch o.Status {
		case results.StatusFired, results.StatusClear:
			return nil
		}
		if len(why) < 3 {
			why = append(why, o.Rule+": "+o.Reason)
		}
	}
	return &exitError{code: ExitUsage, err: fmt.Errorf("nothing to check: none of the %d rule(s) could be evaluated (%s)", len(rep.Outcomes), strings.Join(why, "; "))}
}

// needsBaseline reports whether a budget compares with the baseline: every
// budget but those on the fix plan's predicted change.
func needsBaseline(budgets []string) bool {
	for _, b := range budgets {
		if !strings.HasPrefix(strings.TrimSpace(b), rules.PlanMetricStepTimeChangePct) {
			return true
		}
	}
	return false
}
