package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/parquetio"
)

// exportOptions are the flags of `npuprof export`.
type exportOptions struct {
	Path    string
	Output  string
	Workers int
	Quiet   bool
}

func newExportCmd(io *streams, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export PATH -o OUTDIR",
		Short: "Write the normalized model and metrics as Parquet tables, partitioned by rank",
		Long: `Export reads a profile (any PATH analyze accepts) and writes what npuprof
parsed and measured as Parquet, one file per table and rank, Hive-style:

  OUTDIR/device_tasks/rank=3/part-0.parquet   every device task
  OUTDIR/hccl_ops/rank=3/part-0.parquet       HCCL big ops (type, group)
  OUTDIR/framework_ops/rank=3/part-0.parquet  host torch ops
  OUTDIR/steps/rank=3/part-0.parquet          ProfilerStep#N and its breakdown
  OUTDIR/metrics/rank=3/part-0.parquet        every metric of the JSON document
  and links, comm_ops, step_trace, ranks (see docs/parquet.md, schema
  npuprof.parquet/v1.1).

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
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if opts.Output == "" {
				return usageErr("export needs -o OUTDIR (the folder to write the Parquet tables into)")
			}
			if opts.Output == "-" {
				// "-" is standard output everywhere else: never a folder named "-"
				return usageErr("export writes a folder of Parquet files, not a stream: -o - (standard output) cannot hold them; give -o OUTDIR")
			}
			if err := checkWorkers(opts.Workers); err != nil {
				return err
			}
			if st, err := os.Stat(opts.Output); err == nil && !st.IsDir() {
				return usageErr("-o %s is a file: export writes a folder of Parquet tables; give -o OUTDIR", opts.Output)
			}
			if abs, err := filepath.Abs(opts.Output); err == nil {
				if in, err := filepath.Abs(opts.Path); err == nil && abs == in {
					return usageErr("-o %s is the input: npuprof never writes into its input", opts.Output)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return exportRun(cmd.Context(), io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "write the tables under `OUTDIR` (created if needed)")
	workersFlag(f, &opts.Workers, "ranks parsed at once (0 = number of CPUs); memory grows with this, not with the rank count")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on standard error")
	return cmd
}

// exportExtra converts a rank's analysis into the rows export adds.
func exportExtra(rr *analysis.RankResult) parquetio.Extra {
	x := parquetio.Extra{Steps: map[int]parquetio.StepBreakdown{}}
	for name, v := range rr.Metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // the JSON document drops them too
		}
		v := v
		x.Metrics = append(x.Metrics, parquetio.Metric{Name: name, Value: &v})
	}
	for name, why := range rr.Unavailable {
		if _, ok := rr.Metrics[name]; ok {
			continue
		}
		why := why
		x.Metrics = append(x.Metrics, parquetio.Metric{Name: name, Unavailable: &why})
	}
	for _, s := range rr.Steps {
		b := parquetio.StepBreakdown{Window: s.Window, Computing: s.Computing, Tasks: s.Tasks}
		if s.HaveComm() {
			// else null: not measured (the metrics table carries why,
			// under steps.communication_us, ...)
			b.Communication, b.CommunicationNotOverlapped = &s.Communication, &s.CommunicationNotOverlapped
			b.Overlapped, b.Free = &s.Overlapped, &s.Free
		}
		x.Steps[s.Step] = b
	}
	return x
}

func exportRun(ctx context.Context, io *streams, opts *exportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	srcs, err := parser.Detect(opts.Path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(opts.Output, parquetio.ManifestDir), 0o755); err != nil {
		return usageErr("cannot write %s: %v", opts.Output, err)
	}
	staging, err := os.MkdirTemp(filepath.Join(opts.Output, parquetio.ManifestDir), "staging-")
	if err != nil {
		return usageErr("cannot write %s: %v", opts.Output, err)
	}
	defer os.RemoveAll(staging)
	parquetio.Version, parquetio.Revision = tool.Version, tool.Revision

	var ranks []int
	// Each rank is analyzed and written to a staging folder by the worker
	// that parsed it, then dropped; once every rank has its final number
	// (unknown ranks numbered, duplicates dropped: parser.Reconcile) the
	// staged partitions are moved into place.
	ids := make([]parser.RankID, len(srcs))
	errs := make([]error, len(srcs))
	staged := make([]string, len(srcs))
	var mu sync.Mutex
	var passErrs []analysis.PassError
	start := time.Now()
	popts := parser.Options{Workers: opts.Workers}
	if io.errIsTerminal && !opts.Quiet {
		popts.Progress = func(done, total int, p string) {
			if total > 1 || time.Since(start) > time.Second {
				fmt.Fprintf(io.err, "\rexported %d/%d ranks (%s)\x1b[K", done, total, filepath.Base(p))
				if done == total {
					fmt.Fprintln(io.err)
				}
			}
		}
	}
	err = parser.Walk(ctx, srcs, popts, func(i int, r *model.Rank, err error) {
		if err != nil {
			errs[i] = err
			return
		}
		ids[i] = parser.RankID{Rank: r.Rank, Path: r.Path, DirTimestamp: r.DirTimestamp, Steps: parser.StepIDs(r)}
		rr := analysis.AnalyzeRank(r)
		dir := filepath.Join(staging, strconv.Itoa(i))
		r.Rank = 0 // the staged partition is renamed once the rank is final
		if err := parquetio.WriteRank(dir, r, exportExtra(rr)); err != nil {
			errs[i] = fmt.Errorf("writing the Parquet tables: %w", err)
			return
		}
		staged[i] = dir
		mu.Lock()
		passErrs = append(passErrs, rr.Errors...)
		mu.Unlock()
	})
	if err != nil {
		return err
	}
	notes, err := parser.SourceNotes(srcs)
	if err != nil {
		return err
	}
	var okIDs []parser.RankID
	var okIdx []int
	var failed []string
	for i := range srcs {
		if errs[i] != nil {
			failed = append(failed, errs[i].Error())
			notes = append(notes, fmt.Sprintf("rank folder %s could not be read: %v", srcs[i].Root, errs[i]))
			continue
		}
		okIDs = append(okIDs, ids[i])
		okIdx = append(okIdx, i)
	}
	if len(okIDs) == 0 {
		return errkind.New(errkind.Usage, strings.Join(failed, "; "))
	}
	final, keep, rnotes := parser.Reconcile(okIDs)
	notes = parser.UniqueNotes(append(notes, rnotes...))
	for k, i := range okIdx {
		if !keep[k] {
			continue
		}
		rank := final[k]
		for _, table := range parquetio.Tables {
			to := parquetio.PartDir(opts.Output, table, rank)
			if err := os.RemoveAll(to); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			if err := os.Rename(parquetio.PartDir(staged[i], table, 0), to); err != nil {
				return fmt.Errorf("moving rank %d's %s into %s: %w", rank, table, opts.Output, err)
			}
		}
		ranks = append(ranks, rank)
	}
	if err := parquetio.WriteManifest(opts.Output, parquetio.Manifest{Npuprof: tool.Version, Revision: tool.Revision, Source: opts.Path, Ranks: ranks, Notes: notes}); err != nil {
		return err
	}
	sort.Ints(ranks)
	fmt.Fprintf(io.out, "exported %d rank(s) of %s to %s (%d tables, %s/<table>/rank=N/part-0.parquet; schema %s)\n",
		len(ranks), opts.Path, opts.Output, len(parquetio.Tables), opts.Output, parquetio.Schema)
	if len(passErrs) > 0 {
		return passErrors(&analysis.Result{Ranks: []*analysis.RankResult{{Errors: passErrs}}})
	}
	return nil
}
