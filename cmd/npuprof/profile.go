package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/driver"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results"
)

// profileFlags are the flags of the commands that analyze one profile and
// run the rules on it (analyze, check, report): the profile, the output
// flags, the expert-load and serving inputs read with it, and the rules.
type profileFlags struct {
	Path string
	// More are the further PATHs: export folders analyzed together with
	// Path (pipeline.Options.More).
	More []string
	outputFlags
	expertFlags
	ruleOptions
	Serving servingOptions
	// Service is MS Service Profiler's parse output folder (--service).
	Service string
	outs    formats[*results.Document]
	// Debug prints the passes' timings on standard error before the
	// outputs (analyze's --debug).
	Debug bool

	req *driver.Request // built by checkFiles
	// outsReady: checkFiles found the outputs writable and distinct from
	// the inputs (check may then report an input error in them).
	outsReady bool
}

// register defines the flags; output and workers are the help of -o and
// --workers.
func (p *profileFlags) register(cmd *cobra.Command, output, workers string) {
	f := cmd.Flags()
	p.outs.outs = render.RunOutputs
	p.outputFlags.register(f, output, workers)
	p.expertFlags.register(f)
	p.ruleOptions.flags(cmd)
	p.Serving.addFlags(f)
	f.StringVar(&p.Service, "service", "", serviceHelp)
}

// serviceHelp is --service's help.
const serviceHelp = "read MS Service Profiler's parse output (request.csv, batch.csv, kvcache.csv, forward.csv or profiler.db) from `DIR`: request latency, batches, DP load, KV cache (default: a service folder in the profile folder, up to two levels down)"

// checkFlags refuses a negative --workers, a bad --stage and a bad
// --lang; terminal: the output is the text summary (see langFlag.resolve).
func (p *profileFlags) checkFlags(io *streams, terminal bool) error {
	if err := checkWorkers(p.Workers); err != nil {
		return err
	}
	if err := p.langFlag.resolve(io, terminal); err != nil {
		return err
	}
	return p.expertFlags.check()
}

// checkFiles reads the outputs (--format and the aliases: flag, output
// name, FILE) and refuses, before the profile is read, an output that
// cannot be written or is one of the inputs, two outputs on standard
// output, an input FILE flag naming nothing or a folder, and what the
// run's request refuses (a bad --deploy script...); it keeps the request
// (with what adjust adds to it, nil: nothing) for execute. main names -o
// in messages; baseline is check's --baseline ("" for the others).
func (p *profileFlags) checkFiles(adjust func(*driver.Request), main, baseline string, aliases ...string) error {
	if err := p.outs.parse(p.Output, aliases...); err != nil {
		return err
	}
	ins := append(append(p.ruleOptions.inputs(), p.More...), p.Path, baseline, p.Experts, p.Serving.VLLMLog, p.Serving.VLLMBench, p.Service)
	if err := p.outs.check(main, ins...); err != nil {
		return err
	}
	p.outsReady = true
	if err := checkInputFiles(append(inputFlags(&p.ruleOptions, &p.Serving), "--baseline", baseline)...); err != nil {
		return err
	}
	p.req = p.request()
	if adjust != nil {
		adjust(p.req)
	}
	return p.req.Check()
}

// execute runs the request checkFiles built, with the document's detail
// and the ranks' sampled timelines when an output reads them, sets the
// run's text options on the document and writes the outputs (an error
// writing one is returned, the run with it). A progress line (bytes read, ranks finished) is drawn on standard
// error only when it is a terminal, --quiet is off and the work takes more
// than a moment.
func (p *profileFlags) execute(ctx context.Context, io *streams, text results.TextOptions) (*driver.Result, error) {
	start := time.Now()
	req := p.req
	req.Detail, req.Load.TimelineSample = p.outs.needs()
	req.Loading = p.loading(io)
	run, err := driver.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	run.Doc.Run.Text, run.Doc.Run.Start = text, start
	lang.TranslateStrings(run.Doc.Lang, run.Doc, untranslated)
	if p.Debug {
		run.WriteTimings(io.err)
	}
	return run, p.outs.write(io, run.Doc)
}

// runFailed is the exit of a run that wrote its outputs: err, else the
// internal error of the passes and rules that failed (nil when none did).
func runFailed(run *driver.Result, err error) error {
	if err != nil {
		return err
	}
	return run.Failed
}

// untranslated are the fields of a document whose text a Chinese run
// keeps as it is: patches and diffs to apply byte for byte, and the
// findings' texts, which the rules wrote in the run's language.
var untranslated = map[string]bool{"Diff": true, "DeployDiff": true, "Patch": true, "Patches": true, "Fix": true, "Title": true,
	"Summary": true, "Why": true, "Schema": true, "Path": true}

// loading draws the progress line of a profile read with the options it
// is given, and finishes it once the profile is read: only when standard
// error is a terminal and --quiet is off.
func (o *outputFlags) loading(io *streams) func(*pipeline.Options) func() {
	return func(opts *pipeline.Options) func() {
		if !io.errIsTerminal || o.Quiet {
			return func() {}
		}
		line := newProgressLine(io.err, io.progressDelay, io.errWidth)
		line.lang = lang.Or(io.lang)
		opts.Progress, opts.BytesRead, opts.BytesTotal = line.rankDone, &line.read, &line.total
		return line.finish
	}
}

// request is the run the flags ask for (analyze's, report's; check adds
// its own).
func (p *profileFlags) request() *driver.Request {
	return &driver.Request{Path: p.Path,
		Load:    pipeline.Options{Workers: p.Workers, Experts: p.Experts, ExpertStage: p.Stage, Service: p.Service, More: p.More},
		Serving: p.Serving.options(), Rules: p.selection(),
		Deploy: p.Deploy, DeployLine: p.DeployLine, Facts: p.Facts, Source: p.Source, Lang: p.lang}
}

// expertFlags are the expert-load input flags of analyze and report.
type expertFlags struct {
	// Experts is an expert-load input (file or folder); Stage picks
	// decode or prefill dumps.
	Experts string
	Stage   string
}

func (e *expertFlags) register(f *pflag.FlagSet) {
	f.StringVar(&e.Experts, "experts", "", "per-expert load input: a `PATH` to MindIE dumps, a layer,expert,tokens CSV or a vLLM-Ascend log (default: dumps found inside the profile folder)")
	f.StringVar(&e.Stage, "stage", "", "which MindIE dumps to read when both exist: decode (default) or prefill")
}

func (e *expertFlags) check() error {
	return checkStage(e.Stage)
}

// checkStage refuses a --stage other than decode and prefill.
func checkStage(stage string) error {
	if stage != "" && stage != "decode" && stage != "prefill" {
		return usageErr("--stage %q: expected decode or prefill", stage)
	}
	return nil
}
