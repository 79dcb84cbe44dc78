package analysis

// HostFreeResult splits the device's idle time (ns) into the part within
// steps and the part between them.
type HostFreeResult struct {
	InSteps, BetweenSteps int64
	// By says how steps were told apart: "ProfilerStep#N" or "decode-step
	// boundaries".
	By string
}

// Metrics of the hostfree pass.
const (
	MetricFreeInStepsUs      = "overlap.free.in_steps.time_us"      // µs: device idle within steps (ProfilerStep#N, else between decode-step boundaries): what a faster host can remove
	MetricFreeBetweenStepsUs = "overlap.free.between_steps.time_us" // µs: device idle between steps: overlap.free.time_us minus overlap.free.in_steps.time_us
)

// HostFreePass tells the idle time a faster host removes (within steps)
// from the idle between steps.
var HostFreePass = &Pass{
	Name: "hostfree",
	Doc: `device idle time within steps and between them

overlap.free.in_steps.time_us is the device idle time within steps, what a
faster host (graph mode, launch queues, CPU binding) can remove;
overlap.free.between_steps.time_us is the idle between steps (the
scheduler's turn, a data-parallel sync, the capture's own stops), which
no launch change removes. With ProfilerStep#N the steps are their device
windows (the between part is overlap.free.time_us minus the steps' free
time); without them, the decode-step boundaries of the layers pass: the
stretches between two MoE layer openers whose kernels are not the layer
period's are between steps.
Unavailable without steps or MoE layers to find them by.`,
	Requires: []*Pass{TimelinePass, OverlapPass, StepsPass, LayersPass},
	Metrics:  hostfreeMetrics,
	Run: func(ctx *Context) (any, error) {
		b := OverlapOf(ctx)
		tl := TimelineOf(ctx)
		if b == nil || !tl.HaveCompute || !tl.HaveComm {
			ctx.UnavailableAll("needs overlap.free.time_us (compute kernels and collectives on the device timeline)")
			return (*HostFreeResult)(nil), nil
		}
		res := &HostFreeResult{}
		steps := StepsOf(ctx)
		layers := LayersOf(ctx)
		switch {
		case len(steps) > 0 && allHaveComm(steps):
			res.By = "ProfilerStep#N"
			for _, s := range steps {
				res.InSteps += s.Free
			}
			res.InSteps = min(res.InSteps, b.Free)
			res.BetweenSteps = b.Free - res.InSteps
			if steps[0].Source != "" && res.BetweenSteps < int64(len(steps))*1000 {
				// steps from a summary file (step_trace_time.csv) and the
				// window from another (kernel_details.csv): under 1 µs a
				// step apart is the files' disagreement, not idle
				res.InSteps, res.BetweenSteps = b.Free, 0
			}
		case layers != nil && layers.StepsSource == StepsFromPeriod && layers.Steps > 1:
			res.By = "decode-step boundaries"
			for _, g := range layers.Gaps {
				if g.Boundary {
					res.BetweenSteps += tl.breakdownIn(ctx.Rank, g.Start, g.End).Free
				}
			}
			res.BetweenSteps = min(res.BetweenSteps, b.Free)
			res.InSteps = b.Free - res.BetweenSteps
		default:
			ctx.UnavailableAll("no ProfilerStep#N and no decode-step boundaries (needs MoE layers with collectives and at least two decode steps) to tell the idle within steps from the idle between them")
			return (*HostFreeResult)(nil), nil
		}
		ctx.SetUs(MetricFreeInStepsUs, res.InSteps)
		ctx.SetUs(MetricFreeBetweenStepsUs, res.BetweenSteps)
		return res, nil
	},
}

// HostFreeOf is the host-free pass's result on a rank.
var HostFreeOf = RankResultOf[*HostFreeResult](HostFreePass)

// allHaveComm reports whether every step's free time was measured.
func allHaveComm(steps []StepBreakdown) bool {
	for i := range steps {
		if !steps[i].HaveComm() {
			return false
		}
	}
	return true
}
