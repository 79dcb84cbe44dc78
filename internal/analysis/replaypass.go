package analysis

import (
	"sort"

	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Metrics of the replay pass.
const (
	MetricDecodeStepUs = "decode.step.time_us" // µs: mean time from one decode step's start to the next: ProfilerStep#N starts, else npuprof's decode steps
)

// ReplayPass keeps the rank's compact decode-step timeline for the what-if
// replay (package replay) and measures the decode step time.
var ReplayPass = &Pass{
	Name: "replay",
	Doc: `decode step time and the compact step timeline the fix replay reads

decode.step.time_us is the mean time from one decode step's start to the
next over the capture: ProfilerStep#N's starts when the capture has them,
else npuprof's decode steps (each starts at the first device task after the
longest idle stretch of the compute stream between the last MoE layer of a
step and the first of the next, the stretches the layers pass finds to
break the layer period). The pass also keeps, for at most replay.MaxSteps
steps, the compute stream's tasks with their gaps, the waits and what each
waited on, and the collectives with their group, arrival and duration.`,
	// kept: every pass states its inputs in this one shape (Requires, Metrics, the opening of Run)
	Requires: []*Pass{TimelinePass, LayersPass},
	Metrics:  replayMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := TimelineOf(ctx)
		layers := LayersOf(ctx)
		if !r.Have.Timeline || !tl.HaveCompute {
			ctx.Unavailable("decode step times are read from the device timeline (trace_view.json), which "+r.Path+" lacks", MetricDecodeStepUs)
			return (*replay.RankLine)(nil), nil
		}
		starts, source := stepStarts(r, layers)
		l := replay.Build(r, starts, source)
		if l == nil {
			ctx.Unavailable("fewer than two decode steps: no ProfilerStep#N pair and no step boundary between MoE layers", MetricDecodeStepUs)
			return (*replay.RankLine)(nil), nil
		}
		ctx.Set(MetricDecodeStepUs, l.StepNs/1000)
		return l, nil
	},
}

// ReplayOf is the rank's compact decode-step timeline (package
// replay), nil when the rank has no timeline or fewer than two decode steps.
var ReplayOf = RankResultOf[*replay.RankLine](ReplayPass)

// stepStarts returns the decode-step starts: ProfilerStep#N's, else the
// first compute-stream task after the longest idle gap in each stretch
// between MoE layers that crosses a step boundary (the layer period's
// breaks).
func stepStarts(r *model.Rank, layers *LayersResult) ([]int64, string) {
	if len(r.Steps) >= 2 {
		out := make([]int64, len(r.Steps))
		for i, s := range r.Steps {
			out[i] = s.Start
		}
		return out, "ProfilerStep#N"
	}
	if layers == nil || layers.StepsSource != StepsFromPeriod {
		return nil, ""
	}
	stream := replay.ComputeStream(r)
	var out []int64
	for _, g := range layers.Gaps {
		if !g.Boundary {
			continue
		}
		if s, ok := longestIdleEnd(r, stream, g.Start, g.End); ok {
			out = append(out, s)
		}
	}
	return out, "decode steps"
}

// longestIdleEnd returns the start of the task of the compute stream that
// follows the stream's longest idle gap (no task at all, waits included)
// in [lo, hi).
func longestIdleEnd(r *model.Rank, stream int32, lo, hi int64) (int64, bool) {
	i := sort.Search(len(r.Tasks), func(i int) bool { return r.Tasks[i].Start >= lo })
	var prevEnd, best, at int64
	seen, ok := false, false
	for ; i < len(r.Tasks) && r.Tasks[i].Start < hi; i++ {
		t := &r.Tasks[i]
		if r.Stream(t) != stream {
			continue
		}
		if seen && t.Start-prevEnd > best {
			best, at, ok = t.Start-prevEnd, t.Start, true
		}
		prevEnd = max(prevEnd, r.End(t))
		seen = true
	}
	return at, ok
}
