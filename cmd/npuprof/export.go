package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/driver"
	"github.com/npuprof/npuprof/internal/pipeline"
)

// exportOptions are the flags of `npuprof export`.
type exportOptions struct {
	Path string
	outputFlags
	// Service is the service profile folder (--service).
	Service string
	// SummaryOnly writes the node tables alone (--summary-only).
	SummaryOnly bool
}

func (o *exportOptions) register(cmd *cobra.Command) {
	o.outputFlags.register(cmd.Flags(), "write the tables under `OUTDIR` (created if needed)", usageWorkersMem)
	cmd.Flags().StringVar(&o.Service, "service", "", "also write the requests and batches of MS Service Profiler's parse output in `DIR` (service_requests, service_batches; default: a service folder in the profile folder)")
	cmd.Flags().BoolVar(&o.SummaryOnly, "summary-only", false, "write only the node tables (rank_state, rank_metrics, groups: one file each; what 'npuprof analyze' merges), not the per-rank tables")
}

func (o *exportOptions) check(_ *streams, _ *cobra.Command, args []string) error {
	o.Path = args[0]
	if o.Output == "" {
		return usageErr("export needs -o OUTDIR (the folder to write the Parquet tables into)")
	}
	if o.Output == "-" {
		// "-" is standard output everywhere else: never a folder named "-"
		return usageErr("export writes a folder of Parquet files, not a stream: -o - (standard output) cannot hold them; give -o OUTDIR")
	}
	if err := checkWorkers(o.Workers); err != nil {
		return err
	}
	if st, err := os.Stat(o.Output); err == nil && !st.IsDir() {
		return usageErr("-o %s is a file: export writes a folder of Parquet tables; give -o OUTDIR", o.Output)
	}
	if abs, err := filepath.Abs(o.Output); err == nil {
		if in, err := filepath.Abs(o.Path); err == nil && abs == in {
			return usageErr("-o %s is the input: npuprof never writes into its input", o.Output)
		}
	}
	return nil
}

func newExportCmd(io *streams) *cobra.Command {
	return newCommand(io, &cobra.Command{
		Use:   "export PATH -o OUTDIR",
		Short: "Write the normalized model and metrics as Parquet tables, partitioned by rank",
		Long: `Export reads a profile (any PATH analyze accepts) and writes what npuprof
parsed and measured as Parquet, one file per table and rank, Hive-style:

  OUTDIR/device_tasks/rank=3/part-0.parquet   every device task
  OUTDIR/hccl_ops/rank=3/part-0.parquet       HCCL big ops (type, group)
  OUTDIR/framework_ops/rank=3/part-0.parquet  host torch ops
  OUTDIR/steps/rank=3/part-0.parquet          ProfilerStep#N and its breakdown
  OUTDIR/metrics/rank=3/part-0.parquet        every metric of the JSON document
  and links, comm_ops, step_trace, ranks (see 'npuprof docs parquet', schema
  npuprof.parquet/v2); with a service profile (--service DIR, or a
  service folder in the profile folder), service_requests,
  service_batches, service_batch_dp, service_kvcache and service_forwards
  (one part-0.parquet each) too, which 'npuprof analyze OUTDIR' reads back.

and, once per export run, the node tables: what the cross-rank analysis
needs of every rank exported (rank_state, rank_metrics) and the parallel
groups they are in (groups), one file each (OUTDIR/rank_state/part-RUN.parquet).
'npuprof analyze' merges several exports from these alone (no device task
is read): export on each node, copy the node tables (--summary-only writes
nothing else), then 'npuprof analyze node*.pq'.

Each rank's folder is recorded as given (PATH may be relative), made
absolute in the current directory, with this machine's host name, so that
'npuprof analyze OUTDIR' run anywhere says where the rank came from: its
rank "path" is OUTDIR and "exported_from" holds path, abs_path and host.

A cluster too big for one machine is exported rank by rank where it was
captured (one export per node, all into the same OUTDIR on shared storage:
ranks are separate partitions) and queried as one data set with DuckDB,
Spark or Trino. 'npuprof analyze OUTDIR' reads an export back without
parsing JSON again and prints the same numbers. Ranks are parsed in
parallel and each rank's tables are written as soon as it is parsed, so
memory grows with --workers, not with the number of ranks. Existing
partitions of the exported ranks are replaced; other ranks are kept.`,
		Example: `  # Export an 8-rank capture
  $ npuprof export ./profiles/ -o ./pq

  # Per node of a large cluster, into one shared folder
  $ npuprof export /data/prof/node07/ -o /shared/run42.pq

  # Query the union with DuckDB: HCCL time per rank and type
  $ duckdb -c "SELECT rank, type, sum(dur_ns)/1e3 AS time_us FROM read_parquet('pq/hccl_ops/*/*.parquet', hive_partitioning=true) GROUP BY ALL ORDER BY ALL"`,
		Args: exactArgs(1),
	}, &exportOptions{}, exportRun)
}

func exportRun(ctx context.Context, io *streams, opts *exportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	popts := pipeline.ExportOptions{Workers: opts.Workers, Version: tool.Version, Revision: tool.Revision, Service: opts.Service, SummaryOnly: opts.SummaryOnly}
	if io.errIsTerminal && !opts.Quiet {
		popts.Progress = func(done, total int, p string) {
			if total > 1 || time.Since(start) > time.Second {
				line := fmt.Sprintf(exportText(io, "exported %d/%d ranks (%s)"), done, total, filepath.Base(p))
				fmt.Fprintf(io.err, "\r%s\x1b[K", cutTo(line, io.errWidth))
				if done == total {
					fmt.Fprintln(io.err)
				}
			}
		}
	}
	x, err := pipeline.Export(ctx, opts.Path, opts.Output, popts)
	if err != nil {
		return err
	}
	if opts.SummaryOnly {
		fmt.Fprintf(io.out, exportText(io, "exported %d rank(s) of %s to %s (%d node tables, %s/<table>/part-RUN.parquet; schema %s)\n"),
			len(x.Ranks), opts.Path, opts.Output, x.Tables, opts.Output, x.Schema)
	} else {
		fmt.Fprintf(io.out, exportText(io, "exported %d rank(s) of %s to %s (%d tables, %s/<table>/rank=N/part-0.parquet; schema %s)\n"),
			len(x.Ranks), opts.Path, opts.Output, x.Tables, opts.Output, x.Schema)
	}
	if x.Service != "" {
		fmt.Fprintf(io.out, exportText(io, "exported the service profile %s to %s/service_requests and %s/service_batches\n"), x.Service, opts.Output, opts.Output)
	}
	return driver.PassFailures(append(x.InputErrors, x.PassErrors...))
}
