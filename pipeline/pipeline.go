// Package pipeline owns loading: it detects the ranks under a path, walks
// them in a bounded worker pool (parse a rank, run the rank passes, release
// the model), reconciles the ranks and runs the cluster passes. It is the
// only package that joins the readers (package parser and its
// subpackages) to the passes (package analysis), which read only the model.
package pipeline

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser"
	"github.com/npuprof/npuprof/parser/expertload"
	"github.com/npuprof/npuprof/parser/model"
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
	// (parser.Options.BytesRead).
	BytesRead *atomic.Int64
	// Experts names an expert-load input (file or folder, see
	// parser/expertload); empty: look for one inside the profile folder.
	// ExpertStage picks decode or prefill dumps ("" prefers decode).
	Experts, ExpertStage string
	// TimelineSample runs the timelinesample pass (see
	// analysis.RankPasses): only the HTML report draws it.
	TimelineSample bool
}

// modelHook, when set (by tests), sees each rank's model as Analyze
// receives it, before its passes run.
var modelHook func(*model.Rank)

// walked is what the walk over the ranks leaves: per source, the rank's
// results and identity, or the error that kept it from being read.
type walked struct {
	results []*analysis.RankResult
	errs    []error
	ids     []parser.RankID
}

// Analyze detects the ranks under path, parses and analyzes each in a
// bounded worker pool (parse and per-rank passes in the same slot), then
// reconciles ranks (unknown, duplicate, missing, different step sets: notes,
// never fatal) and runs the cluster passes over the per-rank results.
func Analyze(ctx context.Context, path string, opts Options) (*analysis.Result, error) {
	passes := analysis.RankPasses(opts.TimelineSample)
	if err := validate(passes); err != nil {
		return nil, err
	}
	srcs, err := parser.Detect(path)
	if err != nil {
		return nil, err
	}
	loads, expertNote, err := expertload.ForProfile(path, opts.Experts, expertload.Options{Stage: opts.ExpertStage})
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	w, err := walk(ctx, srcs, opts, passes)
	if err != nil {
		return nil, err
	}
	// Every model is released now, but the heap goal is still the one the
	// last rank's model set (1.5x model plus results at GOGC=50): without
	// a collection here the cluster passes, the rules and the renderer
	// fill that headroom with fresh pages before the models' memory is
	// reused (+3.5 MiB peak RSS on a 200 MB rank). What is left to mark is
	// the results, so this costs about a millisecond.
	runtime.GC()
	notes, err := parser.SourceNotes(srcs)
	if err != nil {
		return nil, err
	}
	res := &analysis.Result{Path: path, Notes: notes}
	if err := reconcile(res, srcs, w); err != nil {
		return nil, err
	}
	if loads == nil && expertNote == "" && opts.Experts == "" {
		if loads, expertNote, err = exportExperts(srcs, opts.ExpertStage); err != nil {
			return nil, err
		}
	}
	if expertNote != "" {
		res.Notes = append(res.Notes, expertNote)
	}
	res.Cluster = analysis.RunCluster(res.Ranks, loads)
	return res, nil
}

// validate checks the rank passes to run and the cluster passes.
func validate(passes []*analysis.Pass) error {
	if err := analysis.Validate(passes); err != nil {
		return err
	}
	return analysis.Validate(analysis.ClusterPasses)
}

// walk parses and analyzes every source, at most opts.Workers at once,
// and releases each rank's model once its passes have run.
func walk(ctx context.Context, srcs []parser.Source, opts Options, passes []*analysis.Pass) (*walked, error) {
	w := &walked{
		results: make([]*analysis.RankResult, len(srcs)),
		errs:    make([]error, len(srcs)),
		ids:     make([]parser.RankID, len(srcs)),
	}
	// communication.json is left unread (no pass reads it; only `npuprof
	// export` keeps it; TestSkipCommunicationSameResult keeps that true).
	// A Parquet export's framework_ops are read: the workload pass reads
	// framework op names (links are read with them).
	popts := parser.Options{Workers: opts.Workers, Progress: opts.Progress, BytesRead: opts.BytesRead, SkipCommunication: true}
	err := parser.Walk(ctx, srcs, popts, func(i int, r *model.Rank, err error) {
		if err != nil {
			w.errs[i] = err
			return
		}
		w.ids[i] = parser.IDOf(r)
		if modelHook != nil {
			modelHook(r)
		}
		rr := analysis.RunRank(r, passes)
		rr.ReleaseModel()
		w.results[i] = rr
	})
	return w, err
}

// reconcile keeps the ranks that were read, numbered and deduplicated by
// parser.Keep, in rank order: a rank that could not be read is a note, a
// reader bug an input error (exit 3), and no rank read at all an error.
func reconcile(res *analysis.Result, srcs []parser.Source, w *walked) error {
	read, failed, internal, err := parser.Sift(srcs, w.errs)
	if err != nil {
		return err
	}
	res.Notes = append(res.Notes, failed...)
	for _, msg := range internal {
		// a reader bug, never blamed on the input: exit 3
		res.InputErrors = append(res.InputErrors, analysis.PassError{Pass: "parse", Rank: -1, Message: msg})
	}
	ids := make([]parser.RankID, len(read))
	results := make([]*analysis.RankResult, len(read))
	for k, i := range read {
		ids[k], results[k] = w.ids[i], w.results[i]
	}
	var notes []string
	res.Ranks, notes = parser.Keep(results, ids, func(rr *analysis.RankResult, rank int) {
		if rr.Rank != rank {
			rr.Rank = rank
			for j := range rr.Errors {
				rr.Errors[j].Rank = rank
			}
		}
	})
	res.Notes = parser.UniqueNotes(append(res.Notes, notes...))
	return nil
}

// FromProfile runs every pass on every rank of a profile parser.Load read
// whole (ranks in parallel), then the cluster passes: what Analyze
// computes, for callers that hold the models (tests, benchmarks).
func FromProfile(p *parser.Profile) (*analysis.Result, error) {
	if err := validate(analysis.Passes); err != nil {
		return nil, err
	}
	res := &analysis.Result{Path: p.Path, Notes: p.Notes, Ranks: analysis.RunRanks(p.Ranks, analysis.Passes)}
	for _, msg := range p.Internal {
		res.InputErrors = append(res.InputErrors, analysis.PassError{Pass: "parse", Rank: -1, Message: msg})
	}
	res.Cluster = analysis.RunCluster(res.Ranks, p.Experts)
	return res, nil
}
