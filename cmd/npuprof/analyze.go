package main

import (
	"context"

	"github.com/spf13/cobra"
)

// analyzeOptions are the flags of `npuprof analyze`.
type analyzeOptions struct {
	profileFlags
	HTML string
	summaryFlags
}

func (o *analyzeOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	o.profileFlags.register(cmd, usageOutput, usageWorkersMem)
	o.outs.register(f)
	f.StringVar(&o.HTML, "html", "", "also write the self-contained HTML report to `FILE` (see `npuprof report`; --format html=FILE)")
	o.summaryFlags.register(f)
	f.BoolVar(&o.Debug, "debug", false, "print per-pass timings on standard error")
}

func (o *analyzeOptions) check(io *streams, _ *cobra.Command, args []string) error {
	o.Path, o.More = args[0], args[1:]
	if err := o.checkFlags(io, o.outs.main() == "text"); err != nil {
		return err
	}
	return o.checkFiles(nil, "the "+o.outs.main()+" output (-o)", "", "--html", "html", o.HTML)
}

func newAnalyzeCmd(io *streams) *cobra.Command {
	return newCommand(io, &cobra.Command{
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
the same numbers). Several export folders (PATH PATH..., a glob, or a
folder of them: one export per node) are merged from their node tables,
without reading a device task. Any text input may be gzip- or zstd-compressed
(trace_view.json.gz, kernel_details.csv.zst, ...). PATH may also be a
document saved by --format json-full: it is rendered again as the profile
was (its findings stand; the rule flags are not applied again).

Ranks are parsed and analyzed in parallel, --workers at a time: a rank's
parse is held only while it is analyzed, so memory grows with --workers;
what a finished rank keeps for the cross-rank passes and the document (its
results and collective arrival times) grows with the rank count (see
'npuprof docs performance'). Missing, duplicate (the newest folder is kept) and
unknown ranks, and ranks with different step sets, are reported as notes,
never fatal. Nothing is ever written into PATH; -o writes where you say.

Outputs: --format NAME is the output -o writes (text by default); --format
NAME=FILE, repeatable, writes one more output to FILE in the same run
(json, json-full, html, junit, sarif; --html FILE is --format html=FILE).

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
PATH (in it or one folder below). See 'npuprof docs experts'.


Then the rules run (built-in, plus --rules FILE): findings with the exact fix
and the estimated saving come first, sorted by saving. --deploy FILE reads
your deployment script for facts (tp, expert parallel, FLASHCOMM1, capture
sizes, max-num-seqs, env) and gives each finding a diff against it; --fact
NAME=VALUE sets one (e.g. concurrency=25). Use 'npuprof check' to gate CI.`,
		Example: `  # Summarize an 8-rank vLLM-Ascend capture
  $ npuprof analyze ./profiles/

  # The JSON document for tools and CI
  $ npuprof analyze ./profiles/ --format json -o analysis.json

  # The summary, the document with its detail and the HTML report in one run
  $ npuprof analyze ./profiles/ --format json-full=run.json --format html=report.html

  # A saved document (--format json-full) renders as the profile did
  $ npuprof analyze run.json

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
		Args: atLeastArgs(1),
	}, &analyzeOptions{}, analyzeRun)
}

func analyzeRun(ctx context.Context, io *streams, opts *analyzeOptions) error {
	return runFailed(opts.execute(ctx, io, opts.text(io)))
}
