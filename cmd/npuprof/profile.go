package main

import (
	"context"
	"sync"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/pipeline"
	"github.com/npuprof/npuprof/render"
	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/results/build"
	"github.com/npuprof/npuprof/rules"
)

// profileFlags are the flags of the commands that analyze one profile and
// run the rules on it (analyze, check, report): the profile, the output
// flags, the expert-load and serving inputs read with it, and the rules.
type profileFlags struct {
	Path string
	outputFlags
	expertFlags
	ruleOptions
	Serving servingOptions
}

// register defines the flags; output and workers are the help of -o and
// --workers.
func (p *profileFlags) register(cmd *cobra.Command, output, workers string) {
	f := cmd.Flags()
	p.outputFlags.register(f, output, workers)
	p.expertFlags.register(cmd)
	p.ruleOptions.flags(cmd)
	p.Serving.addFlags(f)
}

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

// checkFiles refuses, before the profile is read, an output that cannot
// be written or is one of the inputs, two outputs on standard output, an
// input FILE flag naming nothing or a folder, and a bad --deploy script.
// main names -o in messages; others are the other output flags and their
// values; baseline is check's --baseline ("" for the others).
func (p *profileFlags) checkFiles(main, baseline string, others ...string) error {
	outputs := []string{p.Output}
	for i := 1; i < len(others); i += 2 {
		outputs = append(outputs, others[i])
	}
	ins := append(p.ruleOptions.inputs(), p.Path, baseline, p.Experts, p.Serving.VLLMLog, p.Serving.VLLMBench)
	if err := checkOutputs(outputs, ins...); err != nil {
		return err
	}
	if err := oneStdout(main, p.Output, others...); err != nil {
		return err
	}
	if err := checkInputFiles(append(inputFlags(&p.ruleOptions, &p.Serving), "--baseline", baseline)...); err != nil {
		return err
	}
	return p.ruleOptions.loadDeploy()
}

// load analyzes the profile (html: keep what the HTML report draws).
func (p *profileFlags) load(ctx context.Context, io *streams, html bool) (*analysis.Result, error) {
	return loadAndAnalyze(ctx, io, p.Path, p.Workers, p.Quiet, html, p.expertFlags)
}

// analyzeAndJudge is analyze's and report's work before their outputs:
// the profile analyzed, its serving context read, the rules loaded and
// evaluated.
func (p *profileFlags) analyzeAndJudge(ctx context.Context, io *streams, html bool) (*analyzed, error) {
	res, err := p.load(ctx, io, html)
	if err != nil {
		return nil, err
	}
	if err := loadServing(res, p.Path, p.Serving); err != nil {
		return nil, err
	}
	set, err := loadRules(p.RuleFiles, p.selectOptions)
	if err != nil {
		return nil, err
	}
	return p.judge(res, set, nil)
}

// judge evaluates the rules of set on res (budgets against baseline, nil
// without --baseline).
func (p *profileFlags) judge(res *analysis.Result, set *rules.Set, baseline *results.Baseline) (*analyzed, error) {
	rep, facts, err := evaluateRules(res, set, &p.ruleOptions, baseline)
	if err != nil {
		return nil, err
	}
	a := &analyzed{res: res, rep: rep, facts: facts,
		doc: sync.OnceValue(func() *results.Document {
			doc := build.NewContract(res, rep, facts)
			build.AddRuleSet(doc, set) // SARIF describes every rule evaluated
			return doc
		})}
	a.viewDoc = sync.OnceValue(func() *results.Document {
		doc := a.doc()
		build.AddView(doc, res)
		// every output reads the documents from here on, and the view
		// copied what the writers show of the passes' results: 18 MiB
		// of the 2048-rank report's heap (docs/performance.md)
		res.ReleasePassResults()
		return doc
	})
	return a, nil
}

// analyzed is a profile analyzed and judged by the rules: what analyze,
// check and report write.
type analyzed struct {
	res   *analysis.Result
	rep   *rules.Report
	facts *rules.FactSet
	doc   func() *results.Document // built on first use, without the view
	// viewDoc is doc with its view added (on first use), for the terminal
	// summary and the HTML report.
	viewDoc func() *results.Document
}

// runOutput is the input of the --format output format: the document with
// its view only when that output reads it.
func (a *analyzed) runOutput(format string, text render.TextOptions) render.RunOutput {
	doc := a.doc
	if out, _ := render.RunOutputs.Lookup(format); out.View {
		doc = a.viewDoc
	}
	return render.RunOutput{Doc: doc(), Text: text}
}

// errors is exit code 3 when a pass or a rule failed to run.
func (a *analyzed) errors() error {
	return runErrors([]*analysis.Result{a.res}, []*rules.Report{a.rep})
}

// expertFlags are the expert-load input flags of analyze and report.
type expertFlags struct {
	// Experts is an expert-load input (file or folder); Stage picks
	// decode or prefill dumps.
	Experts string
	Stage   string
}

func (e *expertFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
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

// loadAndAnalyze is shared by every command that starts from a profile.
// Ranks are parsed and analyzed in a bounded pool (--workers); a progress
// line (bytes read, ranks finished) is drawn on standard error only when it
// is a terminal, --quiet is off and the work takes more than a moment.
//
// ex names the expert-load input (--experts, --stage).
//
// Every rank's model is released once its passes ran, whatever is
// rendered (the HTML report draws from results), so memory grows with
// --workers, not with the number of ranks.
func loadAndAnalyze(ctx context.Context, io *streams, path string, workers int, quiet, html bool, ex expertFlags) (*analysis.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	// the mini timeline's sample is kept per rank only for the HTML report
	opts := pipeline.Options{Workers: workers, Experts: ex.Experts, ExpertStage: ex.Stage, TimelineSample: html}
	var line *progressLine
	if io.errIsTerminal && !quiet {
		line = newProgressLine(io.err, io.progressDelay)
		opts.Progress, opts.BytesRead = line.rankDone, &line.read
	}
	restore := pipeline.TuneGCFor(path)
	res, err := pipeline.Analyze(ctx, path, opts)
	restore()
	if line != nil {
		line.finish()
	}
	return res, err
}
