package analysis

import (
	"runtime"
	"sync"

	"github.com/npuprof/npuprof/analysis/replay"
	"github.com/npuprof/npuprof/parser/model"
)

// Passes is the registry of per-rank passes, in a stable order.
var Passes = []*Pass{TimelinePass, OverlapPass, StepsPass, HCCLPass, MoEPass, EventWaitPass, KernelsPass, CollectivesPass, EPLoadPass, DecodePass, LayersPass, ReplayPass, WorkloadPass, StepSharesPass, TimelineSamplePass}

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
	Groups []model.Group
	Env    map[string]string
	Decode *DecodeResult
	Layers *LayersResult
	// Workload holds the rank's signs of a workload kind and its steps'
	// phases (see Workload for the whole profile).
	Workload      *WorkloadResult
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
	// Replay is the rank's compact decode-step timeline (package replay),
	// nil when the rank has no timeline or fewer than two decode steps.
	Replay *replay.RankLine
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
	Serving *model.Serving
	// InputErrors are bugs met while reading ranks (recovered reader
	// panics), as errors of the pseudo-pass "parse" on rank -1.
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

// RunRanks runs passes on every rank, ranks in parallel (at most
// GOMAXPROCS at once), and returns their results in the ranks' order.
func RunRanks(ranks []*model.Rank, passes []*Pass) []*RankResult {
	out := make([]*RankResult, len(ranks))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range ranks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = RunRank(r, passes)
		}()
	}
	wg.Wait()
	return out
}

// RankPasses are the per-rank passes to run: every pass of Passes, but the
// timelinesample pass (RankResult.TimelineSample, the HTML report's mini
// timeline) only when timelineSample is set. Without it each rank's
// results are up to ~0.1 MiB smaller: the sample is kept for every rank of
// a cluster, and nothing but the HTML report draws it.
func RankPasses(timelineSample bool) []*Pass {
	if timelineSample {
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

// ReleaseModel drops what rr holds that indexes into its rank's model
// (which means nothing once the model is released, and grows with the
// trace) and the interval sets (one interval per compute kernel, a third of
// the model's size) that only served the passes.
func (rr *RankResult) ReleaseModel() {
	if rr.Timeline != nil {
		rr.Timeline.ComputeTasks = nil
		rr.Timeline.Compute, rr.Timeline.Comm = nil, nil
	}
	if rr.MoE != nil {
		rr.MoE.Layers = nil
	}
}

// AnalyzeRank runs every pass on one rank.
func AnalyzeRank(r *model.Rank) *RankResult { return RunRank(r, Passes) }

// RunRank runs passes (and what they require) on one rank's model and
// collects the results; the model is not kept.
func RunRank(r *model.Rank, passes []*Pass) *RankResult {
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
	rr.Workload, _ = results[WorkloadPass].(*WorkloadResult)
	rr.TimelineSample, _ = results[TimelineSamplePass].(*TimelineSample)
	rr.Replay, _ = results[ReplayPass].(*replay.RankLine)
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
