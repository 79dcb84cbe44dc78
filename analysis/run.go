package analysis

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser"
	"github.com/npuprof/npuprof/parser/experts"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/vllmlog"
)

// Passes is the registry of per-rank passes, in a stable order.
var Passes = []*Pass{TimelinePass, OverlapPass, StepsPass, HCCLPass, MoEPass, EventWaitPass, KernelsPass, CollectivesPass, EPLoadPass, DecodePass, LayersPass, TimelineSamplePass}

// RankResult is everything measured on one rank.
type RankResult struct {
	Rank   int
	Device int
	// Path is the rank's folder (for a rank read back from a Parquet
	// export: the capture's folder, absolute when the export recorded it;
	// Origin says which export it was read from).
	Path          string
	Origin        model.Origin
	Format        model.Format
	ProfilerLevel string
	TorchNPU      string
	CANN          string
	Metrics       map[string]float64
	Unavailable   map[string]string
	// Steps: see StepBreakdown.CommUnavailable for a rank without
	// collective data.
	Steps []StepBreakdown
	// Breakdown is the overlap pass's raw split. Its parts are measured
	// only where Metrics holds the overlap.* metric of the same name;
	// without collective data Communication, CommunicationNotOverlapped,
	// Overlapped and Free are 0 and not measured (Unavailable says why):
	// report the metrics, not these fields.
	Breakdown   *Breakdown
	Timeline    *Timeline
	HCCL        *HCCLResult
	MoE         *MoEResult
	EventWait   *EventWaitResult
	Kernels     *KernelsResult
	Collectives *CollectivesResult
	// EPLoad is the rank's GroupedMatmul work and ep group, for the
	// cluster experts pass (which never reads models).
	EPLoad *EPLoadResult
	// Groups (parallel_group_info) and Env (profiler_metadata.json
	// ENV_VARIABLES) outlive the released model: rules read them as facts.
	Groups        []model.Group
	Env           map[string]string
	Decode        *DecodeResult
	Layers        *LayersResult
	Errors        []PassError
	Timings       []PassTiming
	Warnings      []model.Warning
	Partial       bool
	PartialReason string
	// PartialMetrics names the metrics computed from a file that was cut
	// short (a truncated trace_view.json): each covers only the file's
	// complete part. Sorted; empty when the rank is complete.
	PartialMetrics []string
	// TimelineSample is what the HTML mini timeline draws, sampled while
	// the model was alive: results never hold the model itself, so memory
	// grows with the ranks parsed at once, not with the rank count.
	TimelineSample *TimelineSample
}

// Result is the analysis of a whole profile.
type Result struct {
	Path  string
	Ranks []*RankResult
	Notes []string
	// Cluster is the cross-rank analysis (arrival skew, slow ranks).
	Cluster *ClusterResult
	// Serving is the serving context read from vLLM's own logs and bench
	// results (--vllm-log, --vllm-bench); nil when none was read. The
	// command sets it next to the analysis; renderers show it.
	Serving *vllmlog.Context
	// InputErrors are bugs met while reading ranks (recovered reader
	// panics, parser.Profile.Internal), as errors of the pseudo-pass
	// "parse" on rank -1.
	InputErrors []PassError
}

// Errors returns every error: input errors, then pass errors over all ranks.
func (r *Result) Errors() []PassError {
	out := append([]PassError(nil), r.InputErrors...)
	for _, rr := range r.Ranks {
		out = append(out, rr.Errors...)
	}
	if r.Cluster != nil {
		out = append(out, r.Cluster.Errors...)
	}
	return out
}

// Analyze runs every pass on every rank of p, ranks in parallel.
func Analyze(p *parser.Profile) (*Result, error) {
	if err := Validate(Passes); err != nil {
		return nil, err
	}
	res := &Result{Path: p.Path, Notes: p.Notes, Ranks: make([]*RankResult, len(p.Ranks))}
	for _, msg := range p.Internal {
		res.InputErrors = append(res.InputErrors, PassError{Pass: "parse", Rank: -1, Message: msg})
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range p.Ranks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res.Ranks[i] = AnalyzeRank(r)
		}()
	}
	wg.Wait()
	res.Cluster = runCluster(res.Ranks, p.Experts)
	return res, nil
}

// Options tune AnalyzePath.
type Options struct {
	// Workers bounds how many ranks are parsed and analyzed at once (0 =
	// GOMAXPROCS). Peak memory grows with Workers, not with the number of
	// ranks: each worker holds one rank's model, which is released once the
	// rank's passes have run.
	Workers int
	// Progress, when set, is called after each rank.
	Progress func(done, total int, path string)
	// Experts names an expert-load input (file or folder, see
	// parser/experts); empty: look for one inside the profile folder.
	// ExpertStage picks decode or prefill dumps ("" prefers decode).
	Experts, ExpertStage string
	// TimelineSample runs the timelinesample pass (RankResult.
	// TimelineSample, the HTML report's mini timeline). Off, each rank's
	// results are up to ~0.1 MiB smaller: the sample is kept for every
	// rank of a cluster, and nothing but the HTML report draws it.
	TimelineSample bool
}

// passesFor are the per-rank passes AnalyzePath runs with opts.
func passesFor(opts Options) []*Pass {
	if opts.TimelineSample {
		return Passes
	}
	out := make([]*Pass, 0, len(Passes))
	for _, p := range Passes {
		if p != TimelineSamplePass {
			out = append(out, p)
		}
	}
	return out
}

// modelHook, when set (by tests), sees each rank's model as AnalyzePath
// receives it, before its passes run.
var modelHook func(*model.Rank)

// AnalyzePath detects the ranks under path, parses and analyzes each in a
// bounded worker pool (parse and per-rank passes in the same slot), then
// reconciles ranks (unknown, duplicate, missing, different step sets: notes,
// never fatal) and runs the cluster passes over the per-rank results.
func AnalyzePath(ctx context.Context, path string, opts Options) (*Result, error) {
	passes := passesFor(opts)
	if err := Validate(passes); err != nil {
		return nil, err
	}
	srcs, err := parser.Detect(path)
	if err != nil {
		return nil, err
	}
	loads, expertNote, err := experts.ForProfile(path, opts.Experts, experts.Options{Stage: opts.ExpertStage})
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	results := make([]*RankResult, len(srcs))
	errs := make([]error, len(srcs))
	ids := make([]parser.RankID, len(srcs))
	// communication.json is left unread, and so are a Parquet export's
	// framework_ops and links: no pass reads them (only `npuprof export`
	// keeps them); TestSkipCommunicationSameResult and
	// TestSkipFrameworkSameResult keep that true
	err = parser.Walk(ctx, srcs, parser.Options{Workers: opts.Workers, Progress: opts.Progress, SkipCommunication: true, SkipFramework: true}, func(i int, r *model.Rank, err error) {
		if err != nil {
			errs[i] = err
			return
		}
		ids[i] = parser.RankID{Rank: r.Rank, Path: r.Path, DirTimestamp: r.DirTimestamp, Steps: parser.StepIDs(r)}
		if modelHook != nil {
			modelHook(r)
		}
		rr := analyzeRank(r, passes)
		// what indexes into the model's tasks means nothing once it is
		// released (and grows with the trace); the interval sets (one
		// interval per compute kernel, a third of the model's size) only
		// served the passes
		if rr.Timeline != nil {
			rr.Timeline.ComputeTasks = nil
			rr.Timeline.Compute, rr.Timeline.Comm = nil, nil
		}
		if rr.MoE != nil {
			rr.MoE.Layers = nil
		}
		results[i] = rr
	})
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
	res := &Result{Path: path, Notes: notes}
	var okIDs []parser.RankID
	var okRes []*RankResult
	var failed []string
	var internal error
	for i := range srcs {
		if errs[i] != nil {
			failed = append(failed, errs[i].Error())
			if errkind.Is(errs[i], errkind.Internal) {
				// a reader bug, never blamed on the input: exit 3
				res.InputErrors = append(res.InputErrors, PassError{Pass: "parse", Rank: -1, Message: errs[i].Error()})
				if internal == nil {
					internal = errs[i]
				}
				continue
			}
			res.Notes = append(res.Notes, fmt.Sprintf("rank folder %s could not be read: %v", srcs[i].Root, errs[i]))
			continue
		}
		okIDs = append(okIDs, ids[i])
		okRes = append(okRes, results[i])
	}
	if len(okRes) == 0 {
		if internal != nil {
			return nil, internal
		}
		return nil, errkind.New(errkind.Usage, strings.Join(failed, "; "))
	}
	ranks, keep, notes := parser.Reconcile(okIDs)
	res.Notes = parser.UniqueNotes(append(res.Notes, notes...))
	for i, rr := range okRes {
		if !keep[i] {
			continue
		}
		if rr.Rank != ranks[i] {
			rr.Rank = ranks[i]
			for j := range rr.Errors {
				rr.Errors[j].Rank = ranks[i]
			}
		}
		res.Ranks = append(res.Ranks, rr)
	}
	sort.SliceStable(res.Ranks, func(i, j int) bool { return res.Ranks[i].Rank < res.Ranks[j].Rank })
	if expertNote != "" {
		res.Notes = append(res.Notes, expertNote)
	}
	res.Cluster = runCluster(res.Ranks, loads)
	return res, nil
}

// AnalyzeRank runs every pass on one rank.
func AnalyzeRank(r *model.Rank) *RankResult { return analyzeRank(r, Passes) }

func analyzeRank(r *model.Rank, passes []*Pass) *RankResult {
	results, m, errs, timings := runRank(r, passes)
	rr := &RankResult{
		Rank: r.Rank, Device: r.Device, Path: r.Path, Origin: r.Origin, Format: r.Format, ProfilerLevel: r.ProfilerLevel,
		TorchNPU: r.TorchNPUVersion, CANN: r.CANNVersion,
		Metrics: m.Values, Unavailable: m.Unavailable, Errors: errs, Timings: timings,
		Warnings: r.Warnings, Partial: r.Partial, PartialReason: r.PartialReason,
		Groups: r.Groups, Env: r.Env,
	}
	if v, ok := results[StepsPass].([]StepBreakdown); ok {
		rr.Steps = v
	}
	rr.Breakdown, _ = results[OverlapPass].(*Breakdown)
	rr.Timeline, _ = results[TimelinePass].(*Timeline)
	rr.HCCL, _ = results[HCCLPass].(*HCCLResult)
	rr.MoE, _ = results[MoEPass].(*MoEResult)
	rr.EventWait, _ = results[EventWaitPass].(*EventWaitResult)
	rr.Kernels, _ = results[KernelsPass].(*KernelsResult)
	rr.Collectives, _ = results[CollectivesPass].(*CollectivesResult)
	rr.EPLoad, _ = results[EPLoadPass].(*EPLoadResult)
	rr.Decode, _ = results[DecodePass].(*DecodeResult)
	rr.Layers, _ = results[LayersPass].(*LayersResult)
	rr.TimelineSample, _ = results[TimelineSamplePass].(*TimelineSample)
	for _, e := range errs {
		// a failed pass leaves its metrics unmeasured, never 0
		rr.Unavailable["pass."+e.Pass] = e.Message
	}
	if h := r.Have; (h.Timeline && h.TimelinePartial) || (!h.Timeline && h.KernelDetails && h.KernelPartial) {
		// every metric is computed from the file that was cut short
		rr.PartialMetrics = sortedKeys(rr.Metrics)
	}
	return rr
}
