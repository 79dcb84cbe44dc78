package analysis

// StepSharesResult sums the steps' breakdowns (ns): what rules compare
// with one step rather than with the whole window.
type StepSharesResult struct {
	// Window, Free: summed over the steps with device work; Free only over
	// steps whose collectives were measured.
	Window, Free int64
	// MaxExposedShare is the largest share of a step's window spent in
	// communication not overlapped with compute (0 when not measured).
	MaxExposedShare float64
	MaxExposedStep  int
}

// Metrics of the stepshares pass.
const (
	MetricStepsExposedMaxShare = "steps.communication_not_overlapped.max_share" // ratio: largest share of one ProfilerStep's device window spent in communication not overlapped with compute
	MetricStepsWindowUs        = "steps.window.time_us"                         // µs: ProfilerSteps' device windows, summed (the time between steps is not in it)
	MetricStepsFreeUs          = "steps.free.time_us"                           // µs: idle device time within ProfilerSteps, summed
)

// StepSharesPass measures the steps' exposed communication and free time.
var StepSharesPass = &Pass{
	Name: "stepshares",
	Doc: `exposed communication and idle time within steps

steps.communication_not_overlapped.max_share is the largest share of one
ProfilerStep's device window spent in communication not overlapped with
compute; steps.window.time_us and steps.free.time_us sum the steps' device
windows and idle time (the time between steps is in neither).`,
	Requires: []*Pass{StepsPass},
	Metrics:  stepsharesMetrics,
	Run: func(ctx *Context) (any, error) {
		steps := StepsOf(ctx)
		names := []string{MetricStepsExposedMaxShare, MetricStepsWindowUs, MetricStepsFreeUs}
		res := &StepSharesResult{}
		if len(steps) > 0 && steps[0].Source != "" {
			ctx.From(steps[0].Source) // steps read from step_trace_time.csv
		}
		comm := false
		for _, s := range steps {
			if s.Window <= 0 {
				continue
			}
			res.Window += s.Window
			if !s.HaveComm() {
				continue
			}
			comm = true
			res.Free += s.Free
			if sh := float64(s.CommunicationNotOverlapped) / float64(s.Window); sh > res.MaxExposedShare {
				res.MaxExposedShare, res.MaxExposedStep = sh, s.Step
			}
		}
		switch {
		case res.Window == 0:
			ctx.Unavailable("no ProfilerStep#N with device work (the capture has no torch_npu steps)", "steps.*")
		case !comm:
			ctx.SetUs(names[1], res.Window)
			ctx.Unavailable(noCollectives(ctx), names[0], names[2])
		default:
			ctx.Set(names[0], res.MaxExposedShare)
			ctx.SetUs(names[1], res.Window)
			ctx.SetUs(names[2], res.Free)
		}
		return res, nil
	},
}

// StepSharesOf is the stepshares pass's result on a rank.
var StepSharesOf = RankResultOf[*StepSharesResult](StepSharesPass)
