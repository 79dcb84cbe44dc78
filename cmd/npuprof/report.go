package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/results"
)

// reportOptions are the flags of `npuprof report`.
type reportOptions struct {
	profileFlags
}

func (o *reportOptions) register(cmd *cobra.Command) {
	o.profileFlags.register(cmd, "write the HTML to `FILE` (- for standard output; without -o, standard output unless it is a terminal)", usageWorkers)
	o.outs.values = []string{"html"}
}

func (o *reportOptions) check(io *streams, _ *cobra.Command, args []string) error {
	o.Path, o.More = args[0], args[1:]
	if o.Output == "" && io.outIsTerminal {
		// megabytes of HTML and script would scroll past
		return usageErr("report: standard output is a terminal; write the HTML to a file with -o report.html, or give -o - to print it here anyway")
	}
	if err := o.checkFlags(io, false); err != nil {
		return err
	}
	return o.checkFiles(nil, "the HTML (-o)", "")
}

func newReportCmd(io *streams) *cobra.Command {
	return newCommand(io, &cobra.Command{
		Use:   "report PATH",
		Short: "Write the self-contained HTML findings report of a profile",
		Long: `Report reads a profile (the same PATH forms as analyze, a document saved
by analyze --format json-full included) and writes one HTML file: findings
with their fixes, the deployment facts they used with their sources (the
profile's parallel groups and environment, --deploy, --fact, the serving
context), the time breakdown per rank and per step, communication by
collective type and group, MoE routing and Cumsum, EVENT_WAIT per stream, a
sortable top-kernels table, a rank-skew heatmap, the expert load (layer x
expert heatmap and load per EP rank, when --experts or dumps inside PATH give
per-expert loads) and a mini timeline of one representative step per rank.

The file works offline: the charting library (Apache ECharts), styles and
data are inlined, and it makes no network request. Its numbers are the
ones in ` + "`npuprof analyze --format json`" + `. Without -o the HTML goes to
standard output, unless that is a terminal (then report refuses: give -o
FILE, or -o - to mean standard output).
` + "`npuprof analyze PATH --html FILE`" + ` writes the same file.

Each fix, finding diff and the all-fixes diff has a Copy button. It copies
the text byte for byte as the JSON document holds it
(` + "`fix`, `diff`, `deploy_diff`" + `): a diff against a CRLF deployment
script keeps its carriage returns, so ` + "`patch -p1`" + ` applies it to the
file as it is (the page shows the diff without them).`,
		Example: `  # Write the report of an 8-rank capture
  $ npuprof report ./profiles/ -o report.html

  # The terminal summary and the report in one run
  $ npuprof analyze ./profiles/ --html report.html

  # Pipe it somewhere
  $ npuprof report ./rank0_ascend_pt -q > rank0.html`,
		Args: atLeastArgs(1),
	}, &reportOptions{}, reportRun)
}

func reportRun(ctx context.Context, io *streams, opts *reportOptions) error {
	return runFailed(opts.execute(ctx, io, results.TextOptions{}))
}
