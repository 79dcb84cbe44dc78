package analysis

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Passes is the registry of per-rank passes, in a stable order.
var Passes = []*Pass{TimelinePass, OverlapPass, StepsPass, HCCLPass, MoEPass, EventWaitPass, KernelsPass, CollectivesPass, EPLoadPass, DecodePass, LayersPass, ReplayPass, WorkloadPass, StepSharesPass, HostFreePass, WaitPairPass, LedgerPass, TimelineSamplePass}

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
	// Groups (parallel_group_info) and Env (profiler_metadata.json
	// ENV_VARIABLES) outlive the released model: rules read them as facts.
	Groups []model.Group
	Env    map[string]string
	// MetaVersions are stack versions the job wrote into
	// profiler_metadata.json (add_metadata), by fact name
	// (VersionFacts); empty when it wrote none.
	MetaVersions  map[string]string
	Errors        []PassError
	Timings       []PassTiming
	Warnings      []model.Warning
	Partial       bool
	PartialReason string
	// PartialMetrics names the metrics computed from a file that was cut
	// short (a truncated trace_view.json): each covers only the file's
	// complete part. Sorted; empty when the rank is complete.
	PartialMetrics []string
	// results are the passes' results, keyed by pass: read them with the
	// pass's typed accessor (HCCLOf, StepsOf, ...; see RankResultOf).
	results resultList[*Pass]
	// Sources maps each metric (and "steps") to the file it was computed
	// from, relative to Path when inside it (compact: one name list
	// shared by the ranks that measure the same metrics).
	Sources model.Sources
}

// Result is the analysis of a whole profile.
type Result struct {
	Path  string
	Ranks []*RankResult
	Notes []string
	// WorldSize is the job's world size the ranks state (parallel_group_info,
	// profiler_info, a Kineto header), 0 when none does; WorldSizeFrom
	// says where. MissingRanks are the ranks of that world not in Ranks.
	WorldSize     int
	WorldSizeFrom string
	MissingRanks  []int
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
	if tl := TimelineOf(rr); tl != nil {
		tl.ComputeTasks, tl.computeOwn, tl.computeSorted, tl.commOwn = nil, false, false, false
		tl.Compute, tl.Comm = nil, nil
	}
	if m := MoEOf(rr); m != nil {
		m.Layers, m.cumsum, m.gmm, m.combine = nil, layerKernels{}, layerKernels{}, layerKernels{}
	}
	if w := WaitPairsOf(rr); w != nil {
		w.main = nil
	}
	if l := LayersOf(rr); l != nil {
		// the stretches between MoE layers (their collectives index the
		// model's HCCL ops, a signature string each: ~100 KiB a rank at 94
		// layers × 4 steps) served the replay, ledger and hostfree passes
		l.Gaps = nil
	}
}

// NewSpill makes the temporary file finished ranks' encoded bytes are
// moved to (replay.NewSpill; nil when none can be made).
func NewSpill() *replay.Spill { return replay.NewSpill() }

// Spill moves the encoded bytes rr keeps until the end of the run to s (a
// temporary file; nil: they stay on the heap): its replay timeline's
// steps, which the plan reads back at each use, and the cluster passes'
// inputs (the collectives the arrival pass matches, the ledger's
// exchanges, the experts and moe_wait passes' series), read back once.
func (rr *RankResult) Spill(s *replay.Spill) {
	if s == nil {
		return
	}
	if l := ReplayOf(rr); l != nil {
		l.Spill(s)
	}
	if c := CollectivesOf(rr); c != nil {
		if r, ok := s.Put(c.Ops); ok {
			c.opsAt, c.Ops = r, nil
		}
	}
	if l := LedgerOf(rr); l != nil {
		for i := range l.Steps {
			st := &l.Steps[i]
			if r, ok := s.Put(st.Sync); ok {
				st.syncAt, st.Sync = r, nil
			}
		}
	}
	if ep := EPLoadOf(rr); ep != nil {
		ep.spillSeries(s)
	}
}

// ReleaseClusterInputs drops what each rank kept only for the cluster
// passes, once they have run: the collectives the arrival pass matches
// (CollectivesResult.Ops, ~4 bytes a collective), the exchanges the
// ledger cluster pass matches (LedgerStep.Sync, ~9 bytes each, and the
// ledger cluster result's copies of them) and the series the experts and
// moe_wait passes compare (EPLoadResult.Layers, ...). Nothing
// after the cluster passes (the rules, the plan, the document) reads them;
// at 94 layers × 4 steps they are ~25 KiB a rank.
func (r *Result) ReleaseClusterInputs() {
	for _, rr := range r.Ranks {
		if c := CollectivesOf(rr); c != nil {
			c.Ops, c.N, c.opsAt = nil, 0, replay.Ref{}
		}
		if l := LedgerOf(rr); l != nil {
			for i := range l.Steps {
				l.Steps[i].Sync, l.Steps[i].syncAt = nil, replay.Ref{}
			}
		}
		if ep := EPLoadOf(rr); ep != nil {
			ep.Layers, ep.Kernels, ep.Dispatch, ep.Combine, ep.seriesAt = nil, nil, nil, nil, replay.Ref{}
		}
	}
	if l := LedgerClusterOf(r.Cluster); r.Cluster != nil && l != nil {
		// its copies of the ranks' steps share their Sync arrays
		for i := range l.Ranks {
			for j := range l.Ranks[i].Steps {
				l.Ranks[i].Steps[j].Sync, l.Ranks[i].Steps[j].syncAt = nil, replay.Ref{}
			}
		}
		for i := range l.Steps {
			l.Steps[i].Sync, l.Steps[i].syncAt = nil, replay.Ref{}
		}
	}
}

// RankResults holds rank-pass results: a rank's (*RankResult), or the
// results of the passes a running pass requires (*Context).
type RankResults interface{ resultOf(p *Pass) any }

func (rr *RankResult) resultOf(p *Pass) any { return rr.results.of(p) }
func (c *Context) resultOf(p *Pass) any     { return c.ResultOf[p] }

// ReleasePassResults drops the rank's pass results (what HCCLOf, StepsOf,
// KernelsOf, ... read), for a caller that has copied what it needs of them
// (assemble.AddDetailReleasing). The accessors return nil afterwards; the
// metrics, sources, groups, environment, errors and timings stay.
func (rr *RankResult) ReleasePassResults() { rr.results = nil }

// RankResultOf returns the typed accessor of rank pass p's result: the
// result on a rank (or, in a pass that requires p, p's result on that
// rank), or T's zero value where p did not run or failed. It declares T as
// p's ResultType (an accessor of another type than a ResultType already
// set panics when it is made). Each pass declares its accessor next to it,
// so adding a pass touches only its own file and the registry.
func RankResultOf[T any](p *Pass) func(RankResults) T {
	p.ResultType = mustResultType[T](p.Name, p.ResultType)
	return func(rr RankResults) T {
		v, _ := rr.resultOf(p).(T)
		return v
	}
}

// ClusterResults holds cluster-pass results: the cluster's
// (*ClusterResult, nil holding none), or the results of the passes a
// running cluster pass requires (*ClusterContext).
type ClusterResults interface{ resultOf(p *ClusterPass) any }

func (cr *ClusterResult) resultOf(p *ClusterPass) any {
	if cr == nil {
		return nil
	}
	return cr.results.of(p)
}
func (c *ClusterContext) resultOf(p *ClusterPass) any { return c.ResultOf[p] }

// ClusterResultOf is RankResultOf for a cluster pass.
func ClusterResultOf[T any](p *ClusterPass) func(ClusterResults) T {
	p.ResultType = mustResultType[T](p.Name, p.ResultType)
	return func(cr ClusterResults) T {
		var v T
		if cr != nil {
			v, _ = cr.resultOf(p).(T)
		}
		return v
	}
}

// mustResultType is T, the result type of an accessor of pass; it panics
// (at package initialization, so in every test) when the pass's ResultType
// rt is already set to another type.
func mustResultType[T any](pass string, rt reflect.Type) reflect.Type {
	want := reflect.TypeFor[T]()
	if rt != nil && rt != want {
		panic(fmt.Sprintf("analysis: accessor of pass %s reads %v, but the pass returns %v", pass, want, rt))
	}
	return want
}

// relSources makes the source files relative to the rank folder root.
func relSources(root string, src map[string]string) map[string]string {
	if len(src) == 0 {
		return nil
	}
	// rewritten in place: a second map per rank was 5 KiB of the ~28 KiB a
	// finished rank keeps
	rel := src
	memo := map[string]string{}
	for k, f := range src {
		if f == "" {
			delete(rel, k)
			continue
		}
		v, ok := memo[f]
		if !ok {
			v = f
			if f == root {
				v = filepath.Base(f)
			} else if x, err := filepath.Rel(root, f); err == nil && x != "." && !strings.HasPrefix(x, "..") {
				v = filepath.ToSlash(x)
			}
			memo[f] = v
		}
		rel[k] = v
	}
	return rel
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
		Warnings: append(r.Warnings[:len(r.Warnings):len(r.Warnings)], m.Warnings...), Partial: r.Partial, PartialReason: r.PartialReason,
		Groups: r.Groups, Env: r.Env, MetaVersions: metadataVersions(r.Metadata),
	}
	rr.results = results
	if v, ok := results.of(StepsPass).([]StepBreakdown); ok && len(v) > 0 {
		m.Sources["steps"] = v[0].Source
		if v[0].Source == "" {
			m.Sources["steps"] = taskSource(r)
		}
	}
	deviceSource(r, m)
	root := r.Path
	if r.Origin.Export != "" && r.Origin.Path != "" {
		// read back from an export: the files were recorded as the
		// export was given the rank folder
		root = r.Origin.Path
	}
	partialFrom := fromPartialFiles(r, m.Sources, rr.Metrics)
	rr.Sources = model.NewSources(relSources(root, m.Sources))
	for _, e := range errs {
		// a failed pass leaves its metrics unmeasured, never 0
		rr.Unavailable["pass."+e.Pass] = e.Message
	}
	if h := r.Have; (h.Timeline && h.TimelinePartial) || (!h.Timeline && h.KernelDetails && h.KernelPartial) {
		// every metric is computed from the file that was cut short
		rr.PartialMetrics = slices.Sorted(maps.Keys(rr.Metrics))
	} else if !h.Timeline && h.TimelinePartial && h.KernelDetails {
		// a trace cut before its device metadata: the window and free
		// time come from kernel_details.csv, without the EVENT_WAIT tasks
		// the trace held
		for _, n := range []string{MetricDeviceWindowUs, MetricFreeUs} {
			if _, ok := rr.Metrics[n]; ok {
				rr.PartialMetrics = append(rr.PartialMetrics, n)
			}
		}
	}
	if len(partialFrom) > 0 {
		// computed from a summary file read only in part
		rr.PartialMetrics = slices.Compact(slices.Sorted(slices.Values(append(rr.PartialMetrics, partialFrom...))))
	}
	return rr
}

// fromPartialFiles are the metrics whose source is a file the parser read
// only in part (Have.PartialFiles: cut, or rows skipped).
func fromPartialFiles(r *model.Rank, sources map[string]string, metrics map[string]float64) []string {
	var out []string
	for name, src := range sources {
		if _, metric := metrics[name]; metric && slices.Contains(r.Have.PartialFiles, src) {
			out = append(out, name)
		}
	}
	return out
}
