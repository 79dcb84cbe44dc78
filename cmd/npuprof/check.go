package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/buildinfo"
	"github.com/npuprof/npuprof/internal/driver"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/results"
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
	summaryFlags
	// PartialFindings is what a finding built on metrics of a truncated
	// file does to the exit code: gate (like any finding) or report.
	PartialFindings string
	// AllowMissing lets a budget that cannot be evaluated pass.
	AllowMissing bool
	// RequireAllRanks fails the check when ranks of the world the
	// profile states are missing (results.Input.MissingRanks).
	RequireAllRanks bool
}

func (o *checkOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.FailOn, "fail-on", "high", "lowest severity that fails the check: high, medium or low")
	f.StringVar(&o.Baseline, "baseline", "", "a saved `OLD.json` (npuprof analyze --format json) that budgets compare with")
	f.StringArrayVar(&o.Budgets, "budget", nil, "a budget `'METRIC OP EXPR'` against --baseline, e.g. 'hccl.total.time_us <= baseline * 1.05'; repeatable")
	f.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to `FILE` (--format junit=FILE)")
	f.StringVar(&o.SARIF, "sarif", "", "also write a SARIF 2.1.0 log to `FILE` (--format sarif=FILE)")
	f.StringVar(&o.PartialFindings, "partial-findings", partialGate, "findings that read metrics of a truncated file: gate (fail the check like any finding) or report (show them, labelled, without failing)")
	f.BoolVar(&o.AllowMissing, "allow-missing", false, "let a budget pass that cannot be evaluated (its metric missing from the capture or the baseline); by default it fails the check (exit 1) with the reason")
	f.BoolVar(&o.RequireAllRanks, "require-all-ranks", false, "exit 1 when ranks of the world the profile states (parallel_group_info, profiler_info, a Kineto header) are missing")
	o.profileFlags.register(cmd, usageOutput, usageWorkers)
	o.outs.register(f)
	o.summaryFlags.register(f)
}

func (o *checkOptions) check(io *streams, _ *cobra.Command, args []string) error {
	o.Path, o.More = args[0], args[1:]
	if results.SeverityRank(o.FailOn) == 0 {
		return usageErr("--fail-on %q: expected high, medium or low", o.FailOn)
	}
	if o.PartialFindings != partialGate && o.PartialFindings != partialReport {
		return usageErr("--partial-findings %q: expected gate or report", o.PartialFindings)
	}
	if err := o.checkFlags(io, o.outs.main() == "text"); err != nil {
		return err
	}
	gate := func(req *driver.Request) {
		req.Budgets, req.Baseline = o.Budgets, o.Baseline
		req.Gate = &results.Gate{FailOn: o.FailOn, GatePartial: o.PartialFindings == partialGate, AllowMissing: o.AllowMissing}
	}
	err := o.checkFiles(gate, "the "+o.outs.main()+" output (-o)", o.Baseline, "--junit", "junit", o.JUnit, "--sarif", "sarif", o.SARIF)
	if err != nil && o.outsReady && exitCode(err) == ExitUsage {
		return o.writeFailed(io, err)
	}
	return err
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
says "baseline rank N"). See 'npuprof docs rules', "Partial inputs".

--junit and --sarif write reports for CI systems (one test case / result
per rule; the same as --format junit=FILE, --format sarif=FILE); --format
json prints the npuprof.analysis/v1 document with findings and every
rule's outcome. --format repeats: NAME=FILE writes one more output.

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
		Args: atLeastArgs(1),
	}, &checkOptions{}, checkRun)
}

// checkRun analyzes, evaluates the rules, judges the findings by the gate
// (--fail-on, --partial-findings), writes the outputs and exits by the
// verdict.
func checkRun(ctx context.Context, io *streams, opts *checkOptions) error {
	run, err := opts.execute(ctx, io, opts.text(io))
	if err != nil {
		// nil run: the input could not be analyzed, nothing was written
		if run == nil && exitCode(err) == ExitUsage {
			return opts.writeFailed(io, err)
		}
		return err
	}
	// 3 (a pass or rule failed) outranks 1 (findings)
	if run.Failed != nil {
		return run.Failed
	}
	if err := run.Verdict.Err(); err != nil {
		return &exitError{code: ExitFindings, err: err}
	}
	if in := run.Doc.Input; opts.RequireAllRanks && len(in.MissingRanks) > 0 {
		why := fmt.Sprintf("%d of the %d ranks of the world are missing", len(in.MissingRanks), in.WorldSize)
		for _, n := range run.Doc.Notes {
			if strings.Contains(n, " missing (world of ") {
				why = n // gather's note names them
				break
			}
		}
		return &exitError{code: ExitFindings, err: fmt.Errorf("--require-all-ranks: %s", why)}
	}
	return nil
}

// writeFailed writes the outputs that report a check that could not
// analyze its input (JUnit, SARIF; an input or usage error found once the
// outputs are known writable), so that a CI job collecting them sees err;
// it returns err (exit 2), with the error writing one if any.
func (o *checkOptions) writeFailed(io *streams, err error) error {
	tool := buildinfo.Get()
	doc := &results.Document{Tool: &tool, Lang: o.lang, Input: results.Input{Path: o.Path},
		Run: results.RunInfo{Gate: &results.Gate{FailOn: o.FailOn}, InputError: lang.Translate(o.lang, err.Error())}}
	for _, s := range o.outs.specs {
		if s.Failed == nil {
			continue
		}
		if werr := writeOutput(io, s.file, func(w ioWriter) error { return s.Failed(w, doc) }); werr != nil {
			return fmt.Errorf("%w (and %v)", err, werr)
		}
	}
	return err
}
