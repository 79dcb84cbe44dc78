package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/compare"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/render"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/rules"
)

// diffOptions are the flags of `npuprof diff`.
type diffOptions struct {
	Before, After string
	Format        string
	outputFlags
	HTML      string
	All       bool
	Kernels   int
	LogBefore string
	LogAfter  string
	NoAuto    bool
	RuleFiles []string
	selectOptions
	langFlag
	reports []*rules.Report
}

func (o *diffOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	formatFlag(f, &o.Format, render.DiffOutputs)
	o.outputFlags.register(f, usageOutput, usageWorkers)
	f.StringVar(&o.HTML, "html", "", "also write the self-contained HTML diff to `FILE`")
	f.BoolVar(&o.All, "all", false, "list every metric in the text output, unchanged ones too")
	intFlag(f, &o.Kernels, "kernels", compare.DefaultKernels, kernelsRange, "how many kernels to list, largest change first")
	f.StringVar(&o.LogBefore, "vllm-log-before", "", "vLLM server log `FILE` of the before run (default: found in its profile folder)")
	f.StringVar(&o.LogAfter, "vllm-log-after", "", "vLLM server log `FILE` of the after run (default: found in its profile folder)")
	f.BoolVar(&o.NoAuto, "no-vllm-log", false, "do not look for vLLM logs in the profile folders")
	f.StringArrayVar(&o.RuleFiles, "rules", nil, "also run the rules in `FILE` on a side that is a profile (a saved document keeps its findings); repeatable")
	o.selectOptions.flags(cmd)
	o.langFlag.register(f)
}

func (o *diffOptions) check(io *streams, _ *cobra.Command, args []string) error {
	o.Before, o.After = args[0], args[1]
	if err := checkFormat(render.DiffOutputs, o.Format); err != nil {
		return err
	}
	if err := o.langFlag.resolve(io, o.Format == "text"); err != nil {
		return err
	}
	if err := checkWorkers(o.Workers); err != nil {
		return err
	}
	if o.Kernels < 0 {
		return usageErr("--kernels %d: out of range: expected %s", o.Kernels, kernelsRange)
	}
	ins := append([]string{o.Before, o.After, o.LogBefore, o.LogAfter}, o.RuleFiles...)
	if err := checkOutputs([]string{o.Output, o.HTML}, ins...); err != nil {
		return err
	}
	if err := oneStdout("the "+o.Format+" output (-o)", o.Output, "--html", o.HTML); err != nil {
		return err
	}
	flags := []string{"--vllm-log-before", o.LogBefore, "--vllm-log-after", o.LogAfter}
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
docs/diff.md, "Diffs of a truncated file") and the HTML adds a "Partial input"
column.

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

// loadDocument reads a saved JSON document, or analyzes a profile into one.
func loadDocument(ctx context.Context, io *streams, path string, opts *diffOptions, vllmLog string) (*results.Document, *analysis.Result, error) {
	if st, err := os.Stat(path); err == nil && !st.IsDir() && isJSONDocument(path) {
		doc, err := readDocument(path, "")
		if err != nil {
			return nil, nil, err
		}
		if vllmLog != "" {
			res := &analysis.Result{}
			if err := loadServing(res, path, servingOptions{VLLMLog: vllmLog, NoAuto: true}); err != nil {
				return nil, nil, err
			}
			doc.Serving = res.Serving
		}
		return doc, nil, nil
	}
	res, err := loadAndAnalyze(ctx, io, path, opts.Workers, opts.Quiet, false, expertFlags{})
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && !st.IsDir() && (errkind.Is(err, errkind.Usage) || errkind.Is(err, errkind.Input)) {
			// a file diff read as a profile: it was not a saved document either
			err = fmt.Errorf("%w; nor a document saved by npuprof analyze --format json (no \"schema\": %q)", err, results.Schema)
		}
		return nil, nil, err
	}
	if err := loadServing(res, path, servingOptions{VLLMLog: vllmLog, NoAuto: opts.NoAuto}); err != nil {
		return nil, nil, err
	}
	doc, rep, err := diffDocument(res, opts.RuleFiles, opts.selectOptions, opts.langFlag)
	if err != nil {
		return nil, nil, err
	}
	opts.reports = append(opts.reports, rep)
	return doc, res, nil
}

// readDocument reads a saved results document; a problem is a usage
// error, its message after prefix.
func readDocument(path, prefix string) (*results.Document, error) {
	f, err := infile.Open(path, infile.Document, infile.Opts{})
	if err != nil {
		return nil, usageErr("%s%v", prefix, err)
	}
	defer f.Close()
	doc, err := results.Read(f, path)
	if err != nil {
		return nil, usageErr("%s%v", prefix, err)
	}
	return doc, nil
}

// isJSONDocument reports whether a file is a saved npuprof document: a
// JSON object whose top-level "schema" names an npuprof schema, wherever
// the key sits and however the file is laid out (indented, compacted by
// jq -c, keys sorted by jq -S or Python). A trace in object form is told
// apart at its "traceEvents" key, before its events are read.
func isJSONDocument(path string) bool {
	f, err := infile.Open(path, infile.Document, infile.Opts{})
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		switch key {
		case "schema":
			var v string
			return dec.Decode(&v) == nil && strings.HasPrefix(v, "npuprof.")
		case "traceEvents":
			return false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

func diffRun(ctx context.Context, io *streams, opts *diffOptions) error {
	before, bres, err := loadDocument(ctx, io, opts.Before, opts, opts.LogBefore)
	if err != nil {
		return err
	}
	after, ares, err := loadDocument(ctx, io, opts.After, opts, opts.LogAfter)
	if err != nil {
		return err
	}
	r := compare.Compare(before, after, compare.Options{Kernels: opts.Kernels})
	if err := writeFormat(io, opts.Output, render.DiffOutputs, opts.Format, render.DiffOutput{Result: r, Text: render.DiffTextOptions{AllMetrics: opts.All}}); err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := writeOutput(io, opts.HTML, func(w ioWriter) error { return render.WriteDiffHTML(w, render.NewDiffHTMLInput(r, Version)) }); err != nil {
			return err
		}
	}
	return runErrors([]*analysis.Result{bres, ares}, opts.reports)
}
