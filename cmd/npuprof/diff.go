package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/driver"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results/diff"
)

// diffOptions are the flags of `npuprof diff`.
type diffOptions struct {
	// Before and After are the sides: the PATHs, their vLLM logs and
	// service profile folders (--vllm-log-before/after,
	// --service-before/after); NoAuto goes to both.
	Before, After driver.DiffSide
	outs          formats[*diff.Result]
	outputFlags
	HTML      string
	All       bool
	Kernels   int
	NoAuto    bool
	RuleFiles []string
	selectOptions
	langFlag
}

func (o *diffOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	o.outs.outs = render.DiffOutputs
	o.outs.register(f)
	o.outputFlags.register(f, usageOutput, usageWorkers)
	f.StringVar(&o.HTML, "html", "", "also write the self-contained HTML diff to `FILE`")
	f.BoolVar(&o.All, "all", false, "list every metric in the text output, unchanged ones too")
	intFlag(f, &o.Kernels, "kernels", driver.DefaultKernels, kernelsRange, "how many kernels to list, largest change first")
	for _, s := range [...]struct {
		name string
		side *driver.DiffSide
	}{{"before", &o.Before}, {"after", &o.After}} {
		f.StringVar(&s.side.VLLMLog, "vllm-log-"+s.name, "", "vLLM server log `FILE` of the "+s.name+" run (default: found in its profile folder)")
		f.StringVar(&s.side.Service, "service-"+s.name, "", "MS Service Profiler parse output `DIR` of the "+s.name+" run (default: a service folder in its profile folder)")
	}
	f.BoolVar(&o.NoAuto, "no-vllm-log", false, "do not look for vLLM logs in the profile folders")
	f.StringArrayVar(&o.RuleFiles, "rules", nil, "also run the rules in `FILE` on a side that is a profile (a saved document keeps its findings); repeatable")
	o.selectOptions.flags(cmd)
	o.langFlag.register(f)
}

func (o *diffOptions) check(io *streams, _ *cobra.Command, args []string) error {
	o.Before.Path, o.After.Path = args[0], args[1]
	if err := o.outs.parse(o.Output, "--html", "html", o.HTML); err != nil {
		return err
	}
	if err := o.langFlag.resolve(io, o.outs.terminal()); err != nil {
		return err
	}
	if err := checkWorkers(o.Workers); err != nil {
		return err
	}
	if o.Kernels < 0 {
		return usageErr("--kernels %d: out of range: expected %s", o.Kernels, kernelsRange)
	}
	ins := append([]string{o.Before.Path, o.After.Path, o.Before.VLLMLog, o.After.VLLMLog, o.Before.Service, o.After.Service}, o.RuleFiles...)
	if err := o.outs.check("the "+o.outs.main()+" output (-o)", ins...); err != nil {
		return err
	}
	flags := []string{"--vllm-log-before", o.Before.VLLMLog, "--vllm-log-after", o.After.VLLMLog}
	for _, f := range o.RuleFiles {
		if f != "" {
			flags = append(flags, "--rules", f)
		}
	}
	return checkInputFiles(flags...)
}

func newDiffCmd(io *streams) *cobra.Command {
	return newCommand(io, &cobra.Command{
		Use:   "diff BEFORE AFTER",
		Short: "Compare two profiles (or saved analyses): what changed, and did the fix do what it promised",
		Long: `Diff compares two captures of the same workload, before and after a change.
BEFORE and AFTER are each a profile (any PATH analyze reads) or a JSON
document saved by ` + "`npuprof analyze --format json`" + `.

It shows the per-step time (mean over every step of every rank), the
findings resolved, new or persisting, with each resolved finding's
predicted saving (the rule's saving_us) against the measured decrease of
the metric the rule estimates, the decode step-time change the before side
predicted for each resolved fix and for its plan against the measured one
(fixes resolved together are measured together: each names the others,
and the plan row, which says which of its steps were applied, is the
comparison), the collectives by type and group that appeared or
disappeared, the compute kernels whose time per step changed most (matched
by op type and name), the serving context (vLLM log, bench results), the
breakdown per rank, and every metric that changed (mean over ranks,
absolute and %). Per-step numbers divide by each side's step count
(ProfilerStep#N, else decode.steps.count), so captures of different length
compare fairly.

A side measured on a file cut short (a trace_view.json or
kernel_details.csv the profiler did not finish: analyze marks the rank
partial) is shown, never hidden, and never taken as exact: the diff opens
with one line per cut rank ("! AFTER rank 3 cut short: <file> is
truncated ...") and every row that read one of its values ends with
[partial: after rank 3]: a step mean, a metric (a cross-rank one when any
rank is cut), a collective, a kernel, a finding (it read a cut file, its
predicted saving is uncertain, its measured saving or its resolved/new
status rests on one). Such a change may come from the cut, not from the
runs: a cut AFTER looks faster, a cut BEFORE makes AFTER look slower. The
JSON says the same (before/after.partial[], partial[] on each row; see
'npuprof docs diff', "Diffs of a truncated file") and the HTML adds a
"Partial input" column.

diff has no gate: it exits 0 whatever changed (2 on bad usage, 3 when an
analysis pass or rule failed). To gate on a change, use npuprof check
--baseline OLD.json --budget '...': a budget read from a cut baseline or a
cut capture is a partial finding, which fails the check by default and is
only shown with --partial-findings report.`,
		Example: `  # Before and after turning FLASHCOMM1 and expert parallel off
  $ npuprof diff ./before/ ./after/

  # A saved baseline against a new capture, as JSON for tools
  $ npuprof analyze ./before/ --format json -o before.json
  $ npuprof diff before.json ./after/ --format json -o diff.json

  # The self-contained HTML diff
  $ npuprof diff before.json after.json --html diff.html`,
		Args: exactArgs(2),
	}, &diffOptions{}, diffRun)
}

func diffRun(ctx context.Context, io *streams, opts *diffOptions) error {
	opts.Before.NoAuto, opts.After.NoAuto = opts.NoAuto, opts.NoAuto
	req := &driver.DiffRequest{Before: opts.Before, After: opts.After,
		Load: pipeline.Options{Workers: opts.Workers}, Rules: opts.selection(opts.RuleFiles), Lang: opts.lang, Kernels: opts.Kernels}
	req.Loading = opts.loading(io)
	r, failed, err := driver.Diff(ctx, req)
	if err != nil {
		return err
	}
	r.Run = diff.RunInfo{AllMetrics: opts.All, Version: Version, Lang: opts.lang, Width: io.width}
	lang.TranslateStrings(opts.lang, r, untranslated)
	if err := opts.outs.write(io, r); err != nil {
		return err
	}
	return failed
}
