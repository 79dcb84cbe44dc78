package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"syscall"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
)

// ExportOptions tune Export.
type ExportOptions struct {
	// Workers bounds how many ranks are parsed and written at once (0 =
	// GOMAXPROCS); Progress, when set, is called after each rank.
	Workers  int
	Progress func(done, total int, path string)
	// Version and Revision name the npuprof that writes the export.
	Version, Revision string
	// Service names the service profile folder whose requests and batches
	// are written too (--service); empty: one at or beside the rank
	// folders (analyze's).
	Service string
	// SummaryOnly writes the node tables alone (rank_state, rank_metrics,
	// groups: what `npuprof analyze` merges), not the per-rank tables.
	SummaryOnly bool
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
	// InputErrors are the reader bugs met (a rank left out: exit 3).
	InputErrors []analysis.PassError
	// Service is the service profile folder written (service_requests,
	// service_batches), "" when none.
	Service string
}

// stagedRank is a rank the export's walk wrote to its own staging folder
// (as rank 0: the partition is moved into place once the rank is final).
type stagedRank struct {
	dir  string
	rank int
	// node is the rank as the node tables hold it (its rank set once
	// final).
	node parquetio.NodeRank
}

// Export reads the profile at path and writes its model and metrics as
// Parquet tables under out, one partition per rank. Each rank is analyzed
// and written to a staging folder by the worker that read it, then
// dropped; once every rank has its final number (gather.Ranks: unknown
// ranks numbered, duplicates dropped) the staged partitions are moved into
// place, so memory grows with Workers, not with the rank count. The
// manifest records the notes on the input, never those on the set of
// ranks (missing ranks, different step sets): each node of a cluster may
// export its own ranks into one folder, and reading it back makes them
// again over every rank it holds.
func Export(ctx context.Context, path, out string, opts ExportOptions) (*Exported, error) {
	svc, svcNote, err := readService(path, opts.Service)
	if err != nil {
		return nil, err
	}
	run := parquetio.NewRunID()
	e := &exportRun{out: out, opts: opts, x: &Exported{Tables: len(parquetio.Tables) + len(parquetio.NodeTables), Schema: parquetio.Schema}}
	x := e.x
	if opts.SummaryOnly {
		x.Tables = len(parquetio.NodeTables)
	}
	defer e.cleanup()
	// a signal waits for the ranks being written to the staging folder
	// (they would make it again) and stops the others
	defer onSignal(func() {
		e.writing.Lock()
		e.cleanup()
	})()
	gopts := gather.Options{Workers: opts.Workers, Progress: opts.Progress, AbsExpertPaths: true, Begin: e.begin}
	parquetio.Version, parquetio.Revision = opts.Version, opts.Revision
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	set, err := gather.Ranks(ctx, abs, gopts, func(r *model.Rank) (*stagedRank, error) {
		return e.stage(r, abs, path)
	}, func(s *stagedRank, rank int) { s.rank = rank })
	if err != nil {
		return nil, err
	}
	for _, msg := range set.Internal {
		// a reader bug, never blamed on the input: exit 3
		x.InputErrors = append(x.InputErrors, analysis.PassError{Pass: "parse", Rank: -1, Message: msg})
	}
	nodes, err := placeRanks(out, run, set.Ranks, opts.SummaryOnly, x)
	if err != nil {
		return nil, err
	}
	if err := finishExport(out, run, path, nodes, set, svc, svcNote, opts, x); err != nil {
		return nil, err
	}
	sort.Ints(x.Ranks)
	return x, nil
}

// exportRun is one export's state while its ranks are read: the staging
// folder and the lock on out (removed and released by cleanup, also on
// SIGINT and SIGTERM), the next staging number and what it reports.
type exportRun struct {
	out     string
	opts    ExportOptions
	x       *Exported
	mu      sync.Mutex // guards staging, release, n and x
	staging string
	release func()
	n       int
	// writing is held (read) by each rank being written to the staging
	// folder; a signal takes it whole before cleaning up
	writing sync.RWMutex
}

// cleanup removes what this run left half-written (its staging folder)
// and releases its lock on out.
func (e *exportRun) cleanup() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.staging != "" {
		os.RemoveAll(e.staging)
	}
	if e.release != nil {
		e.release()
	}
	e.staging, e.release = "", nil
}

// begin locks out, removes the staging folders a killed export left and
// makes this run's (gather.Options.Begin: once the input is known good).
func (e *exportRun) begin() error {
	out := e.out
	if err := os.MkdirAll(filepath.Join(out, parquetio.ManifestDir), 0o755); err != nil {
		return errkind.Errorf(errkind.Usage, "cannot write %s: %v", out, err)
	}
	rel, err := parquetio.Lock(out)
	if err != nil {
		return errkind.Wrap(errkind.Usage, err)
	}
	// what a killed export left (its staging folders) goes
	old, _ := filepath.Glob(filepath.Join(out, parquetio.ManifestDir, "staging-*"))
	for _, o := range old {
		os.RemoveAll(o)
	}
	dir, err := os.MkdirTemp(filepath.Join(out, parquetio.ManifestDir), "staging-")
	if err != nil {
		rel()
		return errkind.Errorf(errkind.Usage, "cannot write %s: %v", out, err)
	}
	e.mu.Lock()
	e.staging, e.release = dir, rel
	e.mu.Unlock()
	return nil
}

// stage analyzes rank r (read from under abs, the absolute form of path)
// and writes it to its own staging folder as rank 0.
func (e *exportRun) stage(r *model.Rank, abs, path string) (*stagedRank, error) {
	// the capture is read at its absolute path, as analyze of the
	// export gives it (reasons quote the folder made absolute); the
	// origin keeps the folder as given
	origin := parquetio.ExportedFrom(r)
	if r.Origin.Export == "" {
		if rel, err := filepath.Rel(abs, r.Path); err == nil && !filepath.IsAbs(path) {
			origin.Path = filepath.Join(path, rel)
		}
	}
	rr := analysis.AnalyzeRank(r)
	xtra := exportExtra(rr)
	xtra.Origin = &origin
	// the state says where the rank was exported from (analyze of
	// the export adds the export's folder)
	rr.Origin = origin
	node, err := nodeRank(r, rr, xtra.Metrics)
	if err != nil {
		return nil, errkind.Wrap(errkind.Internal, err)
	}
	e.mu.Lock()
	dir := filepath.Join(e.staging, strconv.Itoa(e.n))
	e.n++
	e.x.PassErrors = append(e.x.PassErrors, rr.Errors...)
	e.mu.Unlock()
	r.Rank = 0 // the staged partition is moved once the rank is final
	if !e.opts.SummaryOnly {
		e.writing.RLock()
		defer e.writing.RUnlock()
		if err := parquetio.WriteRank(dir, r, xtra); err != nil {
			return nil, fmt.Errorf("writing the Parquet tables: %w", err)
		}
	}
	return &stagedRank{dir: dir, node: node}, nil
}

// placeHook, when set (by tests), runs after each rank's partitions move
// (before its stamp): an error stops the export there, as a kill would.
var placeHook func(rank int) error

// onSignal runs cleanup when SIGINT or SIGTERM arrives, then ends the
// process as the signal would have; the returned function stops watching.
func onSignal(cleanup func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cleanup()
			signal.Reset(sig)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Signal(sig)
			}
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// place moves a staged rank's partitions under out, replacing that rank's
// old partitions.
func place(s *stagedRank, out string) error {
	for _, table := range parquetio.Tables {
		to := parquetio.PartDir(out, table, s.rank)
		if err := os.RemoveAll(to); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(parquetio.PartDir(s.dir, table, 0), to); err != nil {
			return fmt.Errorf("moving rank %d's %s into %s: %w", s.rank, table, out, err)
		}
	}
	return nil
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
			b.Free = &s.Free
			if s.OverlappedUnavailable == "" {
				b.Overlapped = &s.Overlapped
			}
		}
		x.Steps[s.Step] = b
	}
	return x
}

// nodeRank is a rank as the node tables hold it: its identity, its
// groups, its metrics and its analysis state (encoded once its model is
// released). What analyze leaves unread of a capture (communication.json's
// warnings, unless the rank's analysis needs its comm ops) is left out,
// as reading the export back leaves it out.
func nodeRank(r *model.Rank, rr *analysis.RankResult, metrics []parquetio.Metric) (parquetio.NodeRank, error) {
	rr.ReleaseModel()
	if !r.NeedsCommOps() {
		rr.Warnings = slices.DeleteFunc(slices.Clone(rr.Warnings), func(w model.Warning) bool {
			return filepath.Base(w.File) == "communication.json"
		})
	}
	st, err := analysis.EncodeState(rr)
	if err != nil {
		return parquetio.NodeRank{}, err
	}
	nr := parquetio.NodeRank{ID: gather.IdentityOf(r), Groups: r.Groups, Metrics: metrics}
	nr.State = append(nr.State, parquetio.StateRow{Kind: parquetio.StateRecord, Data: st.Record})
	for _, p := range st.Passes {
		nr.State = append(nr.State, parquetio.StateRow{Kind: parquetio.StatePass + p.Pass, Data: p.Data})
	}
	return nr, nil
}

// placeRanks moves each staged rank's partitions into out under its final
// rank, stamped with run (only numbered with summaryOnly), and returns the
// ranks as the node tables hold them.
func placeRanks(out, run string, staged []*stagedRank, summaryOnly bool, x *Exported) ([]parquetio.NodeRank, error) {
	nodes := make([]parquetio.NodeRank, 0, len(staged))
	for _, s := range staged {
		s.node.ID.Rank = s.rank
		nodes = append(nodes, s.node)
		if summaryOnly {
			x.Ranks = append(x.Ranks, s.rank)
			continue
		}
		// the stamp goes before the partitions move and comes back after:
		// a rank cut short in between is refused on reading
		if err := parquetio.ClearStamp(out, s.rank); err != nil {
			return nil, err
		}
		if err := place(s, out); err != nil {
			return nil, err
		}
		if placeHook != nil {
			if err := placeHook(s.rank); err != nil {
				return nil, err
			}
		}
		if err := parquetio.Stamp(out, s.rank, run); err != nil {
			return nil, err
		}
		x.Ranks = append(x.Ranks, s.rank)
	}
	return nodes, nil
}

// finishExport writes the node tables, the service tables and the
// manifest of run, then prunes the node files it replaces.
func finishExport(out, run, path string, nodes []parquetio.NodeRank, set *gather.Set[*stagedRank], svc *model.ServiceProfile, svcNote string, opts ExportOptions, x *Exported) error {
	// the node tables go before the manifest: a run without one is not
	// read
	if err := parquetio.WriteNode(out, run, nodes); err != nil {
		return fmt.Errorf("writing the node tables: %w", err)
	}

	// the expert loads analyze would find in the profile folder travel
	// with the export, named by absolute paths, as the ranks' origins are
	m := parquetio.Manifest{Npuprof: opts.Version, Revision: opts.Revision, Run: run, Source: path, Ranks: x.Ranks, Notes: set.Notes, Experts: set.Experts, ExpertsNote: set.ExpertsNote}
	if svcNote != "" {
		m.Notes = append(m.Notes, svcNote)
	}
	if svc != nil {
		if err := parquetio.WriteService(out, svc); err != nil {
			return fmt.Errorf("writing the service tables: %w", err)
		}
		m.Service, m.ServiceProfile, x.Service = svc.Source, svc, svc.Source
	}
	if err := parquetio.WriteManifest(out, m); err != nil {
		return err
	}
	// once this run is readable, the node files of earlier runs whose
	// ranks it wrote again go (and those of runs that were stopped)
	if err := parquetio.PruneNodes(out, run, x.Ranks); err != nil {
		return fmt.Errorf("removing the node tables this export replaces: %w", err)
	}
	return nil
}
