// Package pipeline joins the readers to the passes: Analyze gathers the
// ranks under a path (internal/pipeline/gather: each rank read, its rank passes
// run and its model released, at most --workers at once; the ranks
// reconciled) and runs the cluster passes; Export gathers them the same
// way into Parquet tables. It is the only package that joins the readers
// (package parser and its subpackages) to the passes (package analysis),
// which read only the model.
package pipeline

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/inputs/service"
	"github.com/npuprof/npuprof/internal/parser"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
)

// Options tune Analyze.
type Options struct {
	// Workers bounds how many ranks are parsed and analyzed at once (0 =
	// GOMAXPROCS). Peak memory grows with Workers, not with the number of
	// ranks: each worker holds one rank's model, which is released once the
	// rank's passes have run.
	Workers int
	// Progress, when set, is called after each rank.
	Progress func(done, total int, path string)
	// BytesRead, when set, counts the bytes read from the ranks' files
	// (gather.Options.BytesRead).
	BytesRead *atomic.Int64
	// BytesTotal, when set, is given the size of what BytesRead counts
	// before the ranks are read (gather.Options.BytesTotal).
	BytesTotal *atomic.Int64
	// Experts names an expert-load input (file or folder, see
	// internal/inputs/expertload); empty: look for one inside the profile folder.
	// ExpertStage picks decode or prefill dumps ("" prefers decode).
	Experts, ExpertStage string
	// TimelineSample runs the timelinesample pass (see
	// analysis.RankPasses): only the HTML report draws it.
	TimelineSample bool
	// Service names MS Service Profiler's parse output folder (--service,
	// internal/inputs/service); empty: a service folder at or beside the rank
	// folders of path (service.Find), when there is one.
	Service string
	// More are further paths analyzed with path: export folders (or globs
	// of them, or folders of them) merged with those path names
	// (gather.Exports).
	More []string
}

// modelHook, when set (by tests), sees each rank's model as Analyze
// receives it, before its passes run.
var modelHook func(*model.Rank)

// readCommunication, when set (by TestSkipCommunicationSameResult), has
// Analyze read communication.json as export does.
var readCommunication bool

// keepFramework, when set (by the tests that compare), has Analyze
// reduce the framework ops and links only once each rank is read.
var keepFramework bool

// Analyze detects the ranks under path, reads and analyzes each in a
// bounded worker pool (read and per-rank passes in the same slot, the
// model released after), reconciles the ranks (gather.Ranks: unknown,
// duplicate, missing, different step sets: notes, never fatal) and runs
// the cluster passes over the per-rank results, with the service profile
// (Options.Service, else one found at or beside the rank folders). A
// service folder alone is a run of no ranks.
func Analyze(ctx context.Context, path string, opts Options) (*analysis.Result, error) {
	passes := analysis.RankPasses(opts.TimelineSample)
	if err := validate(passes); err != nil {
		return nil, err
	}
	svc, svcNote, err := readService(path, opts.Service)
	if err != nil {
		return nil, err
	}
	if dirs, ok := gather.Exports(append([]string{path}, opts.More...)); ok && (gather.Mergeable(dirs) || len(opts.More) > 0 || len(dirs) > 1) {
		return merge(ctx, path, dirs, svc, svcNote, opts)
	} else if len(opts.More) > 0 {
		return nil, errkind.Errorf(errkind.Usage, "%s: several paths are analyzed together only when each is an npuprof export folder (or a glob or a folder of them)", strings.Join(append([]string{path}, opts.More...), " "))
	}
	// communication.json is left unread (no pass reads it; only `npuprof
	// export` keeps it; TestSkipCommunicationSameResult keeps that true).
	// A Parquet export's framework_ops are read: the workload pass reads
	// framework op names (links are read with them).
	gopts := gather.Options{Workers: opts.Workers, Progress: opts.Progress, BytesRead: opts.BytesRead, BytesTotal: opts.BytesTotal, SkipCommunication: !readCommunication,
		ReduceFramework: !keepFramework, Experts: opts.Experts, ExpertStage: opts.ExpertStage}
	// what a finished rank keeps encoded for the plan is moved to a
	// temporary file (none: it stays on the heap)
	spill := analysis.NewSpill()
	set, err := gather.Ranks(ctx, path, gopts, func(r *model.Rank) (*analysis.RankResult, error) {
		if modelHook != nil {
			modelHook(r)
		}
		// the ops and links reduced to what the passes read of them
		// (their launches and name counts): analyze exports nothing (a
		// trace's were as soon as it was read)
		r.ReduceFramework()
		// the names in one array through the passes (model.Syms.Pack)
		r.Syms.Pack()
		rr := analysis.RunRank(r, passes)
		rr.ReleaseModel()
		rr.Spill(spill)
		return rr, nil
	}, renumber)
	if err != nil {
		if svc == nil || hasRanks(path) {
			return nil, err
		}
		// a service profile alone: no rank to read
		set = &gather.Set[*analysis.RankResult]{Path: path}
	}
	// Every model is released now, but the heap goal is still the one the
	// last rank's model set (1.5x model plus results at GOGC=50): without
	// a collection here the cluster passes, the rules and the renderer
	// fill that headroom with fresh pages before the models' memory is
	// reused (+3.5 MiB peak RSS on a 200 MB rank). What is left to mark is
	// the results, so this costs about a millisecond.
	runtime.GC()
	return finish(path, set, svc, svcNote), nil
}

// merge analyzes the ranks of export folders from their node tables
// (gather.Merge): each rank's state decoded (the timeline sample only when
// asked), no device task read; the cluster passes run as for a capture.
func merge(ctx context.Context, path string, dirs []string, svc *model.ServiceProfile, svcNote string, opts Options) (*analysis.Result, error) {
	if !gather.Mergeable(dirs) {
		var old []string
		for _, d := range dirs {
			if !parquetio.HasNodeTables(d) {
				old = append(old, d)
			}
		}
		return nil, errkind.Errorf(errkind.Usage, "%s: exports without node tables (written by an npuprof before %s) are analyzed one at a time; export them again to merge them", strings.Join(old, ", "), parquetio.Schema)
	}
	keep := func(p *analysis.Pass) bool { return opts.TimelineSample || p != analysis.TimelineSamplePass }
	gopts := gather.Options{Workers: opts.Workers, Progress: opts.Progress, Experts: opts.Experts, ExpertStage: opts.ExpertStage}
	set, err := gather.Merge(ctx, dirs, gopts, func(ns parquetio.NodeState) (*analysis.RankResult, error) {
		st := &analysis.RankState{}
		for _, row := range ns.State {
			switch {
			case row.Kind == parquetio.StateRecord:
				st.Record = row.Data
			case strings.HasPrefix(row.Kind, parquetio.StatePass):
				st.Passes = append(st.Passes, analysis.PassState{Pass: strings.TrimPrefix(row.Kind, parquetio.StatePass), Data: row.Data})
			}
		}
		if st.Record == nil {
			return nil, fmt.Errorf("no %s row in %s", parquetio.StateRecord, parquetio.TableRankState)
		}
		rr, err := analysis.DecodeState(st, ns.Groups, keep)
		if err != nil {
			return nil, err
		}
		// read from the export, as a rank read back is
		rr.Origin.Export = ns.Export
		return rr, nil
	}, renumber)
	if err != nil {
		return nil, err
	}
	if len(dirs) > 1 || len(opts.More) > 0 {
		path = strings.Join(append([]string{path}, opts.More...), " ")
	}
	return finish(path, set, svc, svcNote), nil
}

// finish runs the cluster passes over the ranks gathered.
func finish(path string, set *gather.Set[*analysis.RankResult], svc *model.ServiceProfile, svcNote string) *analysis.Result {
	res := &analysis.Result{Path: path, Ranks: set.Ranks, Notes: set.AllNotes(),
		WorldSize: set.World, WorldSizeFrom: set.WorldFrom, MissingRanks: set.Missing}
	for _, msg := range set.Internal {
		// a reader bug, never blamed on the input: exit 3
		res.InputErrors = append(res.InputErrors, analysis.PassError{Pass: "parse", Rank: -1, Message: msg})
	}
	if set.ExpertsNote != "" {
		res.Notes = append(res.Notes, set.ExpertsNote)
	}
	if svcNote != "" {
		res.Notes = append(res.Notes, svcNote)
	}
	res.Cluster = analysis.RunClusterWith(res.Ranks, analysis.ClusterInputs{Experts: set.Experts, Service: svc})
	res.ReleaseClusterInputs()
	return res
}

// readService reads the service profile of a run: dir (--service), whose
// failure is a usage error, else the one a Parquet export at path carries
// or the one found at or beside the rank folders of path, whose failure
// is a note (the ranks are still read).
// Nil, "" when there is none.
func readService(path, dir string) (*model.ServiceProfile, string, error) {
	if dir != "" {
		p, err := service.Read(dir)
		if err != nil {
			return nil, "", errkind.Errorf(errkind.Usage, "--service %s: %v", dir, err)
		}
		return p, "", nil
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return nil, "", nil
	}
	if parquetio.IsExport(path) {
		// the service tables npuprof export wrote
		p, note, err := parquetio.ReadService(path)
		if err != nil {
			return nil, fmt.Sprintf("the export's service profile could not be read: %v", err), nil
		}
		return p, note, nil
	}
	found, ok := service.Find(path)
	if !ok {
		return nil, "", nil
	}
	p, err := service.Read(found)
	if err != nil && errkind.Of(err) == errkind.Usage {
		// a FIFO or device where a service file is expected: refused
		// with its path (exit 2), as a rank's own files are
		return nil, "", err
	}
	if err != nil {
		return nil, fmt.Sprintf("service profile %s could not be read: %v", found, err), nil
	}
	return p, "", nil
}

// hasRanks reports whether path holds a rank to read (parser.Detect
// finds one): with none, a service profile is analyzed alone.
func hasRanks(path string) bool {
	_, err := parser.Detect(path)
	return err == nil
}

// renumber gives a rank's results their final rank number.
func renumber(rr *analysis.RankResult, rank int) {
	if rr.Rank != rank {
		rr.Rank = rank
		for j := range rr.Errors {
			rr.Errors[j].Rank = rank
		}
	}
}

// validate checks the rank passes to run and the cluster passes.
func validate(passes []*analysis.Pass) error {
	if err := analysis.Validate(passes); err != nil {
		return err
	}
	return analysis.Validate(analysis.ClusterPasses)
}
