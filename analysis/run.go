package analysis

import (
	"runtime"
	"sync"

	"github.com/npuprof/npuprof/parser"
	"github.com/npuprof/npuprof/parser/model"
)

// Passes is the registry of per-rank passes, in a stable order.
var Passes = []*Pass{TimelinePass, OverlapPass, StepsPass, HCCLPass, MoEPass, EventWaitPass, KernelsPass}

// RankResult is everything measured on one rank.
type RankResult struct {
	Rank          int
	Device        int
	Path          string
	Format        model.Format
	ProfilerLevel string
	TorchNPU      string
	CANN          string
	Metrics       map[string]float64
	Unavailable   map[string]string
	Steps         []StepBreakdown
	Breakdown     *Breakdown
	Timeline      *Timeline
	HCCL          *HCCLResult
	MoE           *MoEResult
	EventWait     *EventWaitResult
	Kernels       *KernelsResult
	Errors        []PassError
	Timings       []PassTiming
	Warnings      []model.Warning
	Partial       bool
	PartialReason string
	// Model is the rank's model, for renderers that draw timelines.
	Model *model.Rank
}

// Result is the analysis of a whole profile.
type Result struct {
	Path  string
	Ranks []*RankResult
	Notes []string
}

// Errors returns every pass error over all ranks.
func (r *Result) Errors() []PassError {
	var out []PassError
	for _, rr := range r.Ranks {
		out = append(out, rr.Errors...)
	}
	return out
}

// Analyze runs every pass on every rank of p, ranks in parallel.
func Analyze(p *parser.Profile) (*Result, error) {
	if err := Validate(Passes); err != nil {
		return nil, err
	}
	res := &Result{Path: p.Path, Notes: p.Notes, Ranks: make([]*RankResult, len(p.Ranks))}
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
	return res, nil
}

// AnalyzeRank runs every pass on one rank.
func AnalyzeRank(r *model.Rank) *RankResult {
	results, m, errs, timings := runRank(r, Passes)
	rr := &RankResult{
		Rank: r.Rank, Device: r.Device, Path: r.Path, Format: r.Format, ProfilerLevel: r.ProfilerLevel,
		TorchNPU: r.TorchNPUVersion, CANN: r.CANNVersion,
		Metrics: m.Values, Unavailable: m.Unavailable, Errors: errs, Timings: timings,
		Warnings: r.Warnings, Partial: r.Partial, PartialReason: r.PartialReason, Model: r,
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
	for _, e := range errs {
		// a failed pass leaves its metrics unmeasured, never 0
		rr.Unavailable["pass."+e.Pass] = e.Message
	}
	return rr
}
