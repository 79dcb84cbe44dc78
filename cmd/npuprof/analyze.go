package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/pipeline"
	"github.com/npuprof/npuprof/render"
	"github.com/npuprof/npuprof/results"
)

// analyzeOptions are the flags of `npuprof analyze`.
type analyzeOptions struct {
	Path    string
	Format  string
	Output  string
	HTML    string
	Workers int
	Quiet   bool
	Debug   bool
	summaryFlags
	Serving servingOptions
	expertFlags
	ruleOptions
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
	if e.Stage != "" && e.Stage != "decode" && e.Stage != "prefill" {
		return usageErr("--stage %q: expected decode or prefill", e.Stage)
	}
	return nil
}

func newAnalyzeCmd(io *streams, runF func(*analyzeOptions) error) *cobra.Command {
	opts := &analyzeOptions{}
	cmd := &cobra.Command{
		Use:   "analyze PATH",
		Short: "Measure communication, MoE routing, EVENT_WAIT and the time breakdown of a profile",
		Long: `Analyze reads a profile and prints what it measured.

PATH is a trace_view.json file (only that file is measured; the rank folder
around it, if any, still gives the rank and its groups), an
ASCEND_PROFILER_OUTPUT folder, one
*_ascend_pt folder (text or db export), an msprof PROF_* folder (text or db
export), a profiler database (ascend_pytorch_profiler_*.db, msprof_*.db), or a
folder holding one of those per rank, in any mix (up to two levels down), or
the folder an 'npuprof export' wrote (read back without parsing JSON again;
the same numbers). Any text input may be gzip- or zstd-compressed
(trace_view.json.gz, kernel_details.csv.zst, ...). Ranks are parsed and analyzed in parallel, --workers at a time: memory grows
with --workers, not with the number of ranks. Missing, duplicate (the newest
folder is kept) and unknown ranks, and ranks with different step sets, are
reported as notes, never fatal. Nothing is ever written into PATH; -o writes
where you say.

Per rank it reports the time breakdown (computing, communication not
overlapped, free), collectives by type and by group (tp/ep/dp, from
parallel_group_info), MoeInitRouting* and the Cumsum kernels in the MoE routing
path (and whether they ran on the AI CPU), EVENT_WAIT per stream, and the top
compute kernels. Across ranks it matches every collective, names the rank
that arrived last and how long the others waited, and names slow ranks
(computing or free time a robust outlier: median and MAD over ranks). A
metric that cannot be measured from the files present is listed as
unavailable with the reason, never reported as 0.

Expert load: GroupedMatmul time and tokens per rank of the ep group give the
EP-rank skew from the trace alone. Per-expert loads come from --experts PATH
(MindIE {decode|prefill}_{rank}.csv dumps with model_gen_config.json and
{stage}_global_deployment.json, a layer,expert,tokens CSV, or a vLLM-Ascend /
vLLM log with expert-imbalance lines), or from dumps or a CSV placed inside
PATH (in it or one folder below). See docs/experts.md.


Then the rules run (built-in, plus --rules FILE): findings with the exact fix
and the estimated saving come first, sorted by saving. --deploy FILE reads
your deployment script for facts (tp, expert parallel, FLASHCOMM1, capture
sizes, max-num-seqs, env) and gives each finding a diff against it; --fact
NAME=VALUE sets one (e.g. concurrency=25). Use 'npuprof check' to gate CI.`,
		Example: `  # Summarize an 8-rank vLLM-Ascend capture
  $ npuprof analyze ./profiles/

  # The JSON document for tools and CI
  $ npuprof analyze ./profiles/ --format json -o analysis.json

  # Also write the self-contained HTML report
  $ npuprof analyze ./profiles/ --html report.html

  # With MindIE expert-load dumps kept next to the profile
  $ npuprof analyze ./profiles/ --experts ./expert_hotspot/

  # With the serving context from vLLM's log and a bench result
  $ npuprof analyze ./profiles/ --vllm-log server.log --vllm-bench bench.json

  # Findings as a diff against the deployment script
  $ npuprof analyze ./profiles/ --deploy serve.sh --fact concurrency=25

  # One rank's text export only
  $ npuprof analyze ./dp0_pp0_tp0_rank0_1234_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if err := checkFormat(render.RunOutputs, opts.Format); err != nil {
				return err
			}
			if err := checkWorkers(opts.Workers); err != nil {
				return err
			}
			if err := opts.expertFlags.check(); err != nil {
				return err
			}
			ins := append(opts.ruleOptions.inputs(), opts.Path, opts.Experts, opts.Serving.VLLMLog, opts.Serving.VLLMBench)
			if err := checkOutputs([]string{opts.Output, opts.HTML}, ins...); err != nil {
				return err
			}
			if err := oneStdout("the "+opts.Format+" output (-o)", opts.Output, "--html", opts.HTML); err != nil {
				return err
			}
			if err := checkInputFiles(inputFlags(&opts.ruleOptions, &opts.Serving)...); err != nil {
				return err
			}
			if err := opts.ruleOptions.loadDeploy(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return analyzeRun(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", render.RunOutputs.Default(), render.RunOutputs.Help())
	f.StringVarP(&opts.Output, "output", "o", "", "write the output to `FILE` instead of standard output")
	f.StringVar(&opts.HTML, "html", "", "also write the self-contained HTML report to `FILE` (see `npuprof report`)")
	workersFlag(f, &opts.Workers, "ranks parsed at once (0 = number of CPUs); memory grows with this, not with the rank count")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on standard error")
	opts.summaryFlags.register(f)
	f.BoolVar(&opts.Debug, "debug", false, "print per-pass timings on standard error")
	opts.expertFlags.register(cmd)
	opts.flags(cmd)
	opts.Serving.addFlags(f)
	return cmd
}

// loadAndAnalyze is shared by every command that starts from a profile.
// Ranks are parsed and analyzed in a bounded pool (--workers); a progress
// bar is drawn on standard error only when it is a terminal, --quiet is
// off and the work takes more than a moment.
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
	var bar *progressbar.ProgressBar
	if io.errIsTerminal && !quiet {
		start := time.Now()
		opts.Progress = func(done, total int, p string) {
			if bar == nil {
				if time.Since(start) < io.progressDelay || done == total {
					return
				}
				bar = progressbar.NewOptions(total,
					progressbar.OptionSetWriter(io.err),
					progressbar.OptionSetDescription("analyzing ranks"),
					progressbar.OptionShowCount(),
					progressbar.OptionSetWidth(30),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish(),
				)
			}
			_ = bar.Set(done)
		}
	}
	restore := pipeline.TuneGCFor(path)
	res, err := pipeline.Analyze(ctx, path, opts)
	restore()
	if bar != nil {
		_ = bar.Finish()
	}
	return res, err
}

func analyzeRun(ctx context.Context, io *streams, opts *analyzeOptions) error {
	res, err := loadAndAnalyze(ctx, io, opts.Path, opts.Workers, opts.Quiet, opts.HTML != "", opts.expertFlags)
	if err != nil {
		return err
	}
	if err := loadServing(res, opts.Path, opts.Serving); err != nil {
		return err
	}
	set, err := loadRules(opts.RuleFiles, opts.selectOptions)
	if err != nil {
		return err
	}
	rep, facts, err := evaluateRules(res, set, &opts.ruleOptions, nil)
	if err != nil {
		return err
	}
	if opts.Debug {
		for _, rr := range res.Ranks {
			for _, t := range rr.Timings {
				fmt.Fprintf(io.err, "rank %d pass %-10s %v\n", t.Rank, t.Pass, t.Duration)
			}
		}
		if res.Cluster != nil {
			for _, t := range res.Cluster.Timings {
				fmt.Fprintf(io.err, "cluster pass %-10s %v\n", t.Pass, t.Duration)
			}
		}
	}
	doc := sync.OnceValue(func() *results.Document { return results.New(res, rep, facts) })
	out, _ := render.RunOutputs.Lookup(opts.Format)
	if err := writeOutput(io, opts.Output, func(w ioWriter) error {
		return out.Write(w, render.RunOutput{Doc: doc(), Text: opts.text()})
	}); err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := writeHTMLReport(io, opts.HTML, facts, doc()); err != nil {
			return err
		}
	}
	if err := passErrors(res); err != nil {
		return err
	}
	return ruleErrors(rep)
}

// passErrors turns failed passes into exit code 3, after output is written.
func passErrors(res *analysis.Result) error {
	errs := res.Errors()
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, firstLine(e.Error()))
	}
	return errkind.Errorf(errkind.Internal, "%d analysis pass(es) failed: %s", len(errs), strings.Join(msgs, "; "))
}

type ioWriter = io.Writer

// checkFormat refuses a --format value that is not in outs.
func checkFormat[In any](outs render.Outputs[In], format string) error {
	if _, ok := outs.Lookup(format); !ok {
		return usageErr("--format %q: expected %s", format, outs.Names())
	}
	return nil
}

// writeOutput writes to FILE (created only after the content is ready:
// written beside it, then renamed over it; through a symlink, its file) or
// to standard output. An existing FILE that is not a regular file
// (/dev/null, a FIFO) is written in place, never replaced.
func writeOutput(io *streams, file string, fn func(ioWriter) error) error {
	if file == "" || file == "-" {
		return fn(io.out)
	}
	if err := outputProblem(file); err != nil {
		return err
	}
	target := file
	if st, err := os.Stat(file); err == nil {
		if !st.Mode().IsRegular() {
			// a device (/dev/null, /dev/stdout), FIFO or socket: written
			// in place; renaming over it would replace it with a file
			return writeInPlace(file, fn)
		}
		// a symlink keeps pointing at its file: replace that file
		if real, err := filepath.EvalSymlinks(file); err == nil {
			target = real
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".npuprof-*")
	if err != nil {
		return usageErr("cannot write %s: %v", file, bareError(err))
	}
	defer os.Remove(tmp.Name())
	if err := fn(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes 0600 files; reports are meant to be shared.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return usageErr("cannot write %s: %v", file, bareError(err))
	}
	return nil
}

// writeInPlace writes to an existing file that is not a regular file.
func writeInPlace(file string, fn func(ioWriter) error) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return usageErr("cannot write %s: %v", file, bareError(err))
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// outputProblem says why file cannot be written as an output file, or nil
// ("" and "-" are standard output): it names a folder, or the folder it
// goes into does not exist or is not a folder. Commands call it on their
// output flags before reading the profile, so a typo in -o is not found
// only after minutes of parsing.
func outputProblem(file string) error {
	if file == "" || file == "-" {
		return nil
	}
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return usageErr("cannot write %s: it is a folder; expected a file name", file)
	}
	dir := filepath.Dir(file)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageErr("cannot write %s: folder %s does not exist (create it first)", file, dir)
	case err != nil:
		return usageErr("cannot write %s: %v", file, bareError(err))
	case !st.IsDir():
		return usageErr("cannot write %s: %s is not a folder", file, dir)
	}
	return nil
}

// checkOutputs runs outputProblem on each of a command's output files and
// refuses one that is an input file of the command (the profile file, a
// saved document, a rule file...): writing it would destroy what is read.
func checkOutputs(outputs []string, inputs ...string) error {
	seen := map[string]string{}
	for _, o := range outputs {
		if o == "" || o == "-" {
			continue
		}
		key := filepath.Clean(o)
		if abs, err := filepath.Abs(o); err == nil {
			key = abs
		}
		if prev, ok := seen[key]; ok {
			return usageErr("%s and %s both name the same file: the second would replace the first", prev, o)
		}
		seen[key] = o
	}
	for _, o := range outputs {
		if err := outputProblem(o); err != nil {
			return err
		}
		if o == "" || o == "-" {
			continue
		}
		ost, err := os.Stat(o)
		if err != nil {
			continue // a new file is no input
		}
		for _, in := range inputs {
			if in == "" || in == "-" {
				continue
			}
			if ist, err := os.Stat(in); err == nil && os.SameFile(ost, ist) {
				return usageErr("cannot write %s: it is an input (%s); npuprof never writes into its input", o, in)
			}
		}
	}
	return nil
}

// oneStdout refuses two outputs on standard output, where neither could be
// read back. pairs are flag, value; the main output's value is "" (its
// default) or "-", any other output's is "-".
func oneStdout(mainFlag, mainValue string, pairs ...string) error {
	var on []string
	if mainValue == "" || mainValue == "-" {
		on = append(on, mainFlag)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "-" {
			on = append(on, pairs[i]+" -")
		}
	}
	if len(on) > 1 {
		all := "all"
		if len(on) == 2 {
			all = "both"
		}
		return usageErr("%s would %s write to standard output, one after the other; give all but one a FILE", strings.Join(on, " and "), all)
	}
	return nil
}

// checkInputFiles refuses, before anything is read, an input FILE flag
// that names nothing or a folder. pairs are flag, value; "" is not given.
func checkInputFiles(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		flag, v := pairs[i], pairs[i+1]
		if v == "" {
			continue
		}
		st, err := os.Stat(v)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return usageErr("%s %s: no such file", flag, v)
		case err != nil:
			return usageErr("%s %s: %v", flag, v, bareError(err))
		case st.IsDir():
			return usageErr("%s %s: is a folder; expected a FILE", flag, v)
		}
	}
	return nil
}

// inputFlags are the rule and serving input FILE flags, as
// checkInputFiles pairs.
func inputFlags(r *ruleOptions, s *servingOptions) []string {
	out := []string{"--deploy", r.Deploy}
	for _, f := range r.RuleFiles {
		if f != "" { // an empty --rules is named by the rule loader
			out = append(out, "--rules", f)
		}
	}
	if s != nil {
		out = append(out, "--vllm-log", s.VLLMLog, "--vllm-bench", s.VLLMBench)
	}
	return out
}

// inputs lists the input files the rule and serving flags name.
func (o *ruleOptions) inputs() []string {
	return append([]string{o.Deploy}, o.RuleFiles...)
}

// bareError drops the path from an *fs.PathError or *os.LinkError: the
// message names the user's file, not the temporary one written first.
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
