package pipeline

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

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser"
	"github.com/npuprof/npuprof/parser/expertload"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/parquetio"
)

// ExportOptions tune Export.
type ExportOptions struct {
	// Workers bounds how many ranks are parsed and written at once (0 =
	// GOMAXPROCS); Progress, when set, is called after each rank.
	Workers  int
	Progress func(done, total int, path string)
	// Version and Revision name the npuprof that writes the export.
	Version, Revision string
}

// Exported is what Export wrote.
type Exported struct {
	// Ranks are the final rank numbers written, sorted.
	Ranks []int
	// Tables is how many tables each rank has; Schema the export's schema.
	Tables int
	Schema string
	// PassErrors are the rank passes that failed (the tables are written
	// all the same; their metrics say unavailable).
	PassErrors []analysis.PassError
}

// staged is what the export's walk leaves: per source, the rank's staged
// partition folder and identity, or the error that kept it out.
type staged struct {
	dirs     []string
	errs     []error
	ids      []parser.RankID
	passErrs []analysis.PassError
}

// Export reads the profile at path and writes its model and metrics as
// Parquet tables under out, one partition per rank. Each rank is analyzed
// and written to a staging folder by the worker that parsed it, then
// dropped; once every rank has its final number (unknown ranks numbered,
// duplicates dropped: parser.Reconcile) the staged partitions are moved
// into place, so memory grows with Workers, not with the rank count.
func Export(ctx context.Context, path, out string, opts ExportOptions) (*Exported, error) {
	srcs, err := parser.Detect(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(out, parquetio.ManifestDir), 0o755); err != nil {
		return nil, errkind.Errorf(errkind.Usage, "cannot write %s: %v", out, err)
	}
	staging, err := os.MkdirTemp(filepath.Join(out, parquetio.ManifestDir), "staging-")
	if err != nil {
		return nil, errkind.Errorf(errkind.Usage, "cannot write %s: %v", out, err)
	}
	defer os.RemoveAll(staging)
	parquetio.Version, parquetio.Revision = opts.Version, opts.Revision
	st, err := stage(ctx, srcs, staging, opts)
	if err != nil {
		return nil, err
	}
	notes, err := parser.SourceNotes(srcs)
	if err != nil {
		return nil, err
	}
	ranks, notes, err := place(srcs, st, out, notes)
	if err != nil {
		return nil, err
	}
	// the expert loads analyze would find in the profile folder travel
	// with the export (a problem reading them is only a note, as there),
	// named by absolute paths, as the ranks' origins are
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	x, xnote, err := expertload.ForProfile(abs, "", expertload.Options{})
	if err != nil {
		return nil, err
	}
	m := parquetio.Manifest{Npuprof: opts.Version, Revision: opts.Revision, Source: path, Ranks: ranks, Notes: notes, Experts: x, ExpertsNote: xnote}
	if err := parquetio.WriteManifest(out, m); err != nil {
		return nil, err
	}
	sort.Ints(ranks)
	return &Exported{Ranks: ranks, Tables: len(parquetio.Tables), Schema: parquetio.Schema, PassErrors: st.passErrs}, nil
}

// stage parses, analyzes and writes every rank to its own folder under
// staging (as rank 0: the partition is renamed once the rank is final).
func stage(ctx context.Context, srcs []parser.Source, staging string, opts ExportOptions) (*staged, error) {
	st := &staged{dirs: make([]string, len(srcs)), errs: make([]error, len(srcs)), ids: make([]parser.RankID, len(srcs))}
	var mu sync.Mutex
	popts := parser.Options{Workers: opts.Workers, Progress: opts.Progress}
	err := parser.Walk(ctx, srcs, popts, func(i int, r *model.Rank, err error) {
		if err != nil {
			st.errs[i] = err
			return
		}
		st.ids[i] = parser.IDOf(r)
		rr := analysis.AnalyzeRank(r)
		dir := filepath.Join(staging, strconv.Itoa(i))
		r.Rank = 0 // the staged partition is renamed once the rank is final
		if err := parquetio.WriteRank(dir, r, exportExtra(rr)); err != nil {
			st.errs[i] = fmt.Errorf("writing the Parquet tables: %w", err)
			return
		}
		st.dirs[i] = dir
		mu.Lock()
		st.passErrs = append(st.passErrs, rr.Errors...)
		mu.Unlock()
	})
	return st, err
}

// place moves the staged partitions of the ranks Reconcile keeps under out
// (replacing those ranks' old partitions) and returns their final numbers
// and the notes with the reconciliation's.
func place(srcs []parser.Source, st *staged, out string, notes []string) ([]int, []string, error) {
	var okIDs []parser.RankID
	var okIdx []int
	var failed []string
	for i := range srcs {
		if st.errs[i] != nil {
			failed = append(failed, st.errs[i].Error())
			notes = append(notes, fmt.Sprintf("rank folder %s could not be read: %v", srcs[i].Root, st.errs[i]))
			continue
		}
		okIDs = append(okIDs, st.ids[i])
		okIdx = append(okIdx, i)
	}
	if len(okIDs) == 0 {
		return nil, nil, errkind.New(errkind.Usage, strings.Join(failed, "; "))
	}
	final, keep, rnotes := parser.Reconcile(okIDs)
	notes = parser.UniqueNotes(append(notes, rnotes...))
	var ranks []int
	for k, i := range okIdx {
		if !keep[k] {
			continue
		}
		rank := final[k]
		for _, table := range parquetio.Tables {
			to := parquetio.PartDir(out, table, rank)
			if err := os.RemoveAll(to); err != nil {
				return nil, nil, err
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return nil, nil, err
			}
			if err := os.Rename(parquetio.PartDir(st.dirs[i], table, 0), to); err != nil {
				return nil, nil, fmt.Errorf("moving rank %d's %s into %s: %w", rank, table, out, err)
			}
		}
		ranks = append(ranks, rank)
	}
	return ranks, notes, nil
}

// exportExtra converts a rank's analysis into the rows export adds.
func exportExtra(rr *analysis.RankResult) parquetio.Extra {
	x := parquetio.Extra{Steps: map[int]parquetio.StepBreakdown{}, DeviceFile: rr.Sources.Get(analysis.KeyDevice)}
	source := func(name string) *string {
		if src, ok := rr.Sources.Lookup(name); ok {
			return &src
		}
		return nil
	}
	for name, v := range rr.Metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // the JSON document drops them too
		}
		v := v
		x.Metrics = append(x.Metrics, parquetio.Metric{Name: name, Value: &v, Source: source(name)})
	}
	for name, why := range rr.Unavailable {
		if _, ok := rr.Metrics[name]; ok {
			continue
		}
		why := why
		x.Metrics = append(x.Metrics, parquetio.Metric{Name: name, Unavailable: &why, Source: source(name)})
	}
	for _, s := range analysis.StepsOf(rr) {
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
