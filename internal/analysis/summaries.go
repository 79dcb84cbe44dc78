package analysis

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// This file holds what the passes measure from the profiler's own
// summaries when the device timeline (trace_view.json, msprof json,
// task_time, DB TASK) and kernel_details.csv cannot give it:
// step_trace_time.csv / analysis.db StepTraceTime (the step breakdown and
// overlap.*), communication.json / analysis.db CommAnalyzerTime (hccl.*)
// and op_statistic.csv (kernel.compute.*).

// usToNs turns a summary's float µs into int64 ns.
func usToNs(us float64) int64 { return int64(math.Round(us * 1000)) }

// stepRowBreakdown is one step_trace_time row as a Breakdown: the step's
// window is Computing + Communication(Not Overlapped) + Free (the three
// parts of the step's device span that do not overlap).
func stepRowBreakdown(row *model.StepTraceRow) Breakdown {
	b := Breakdown{Computing: usToNs(row.Computing), Communication: usToNs(row.Communication),
		CommunicationNotOverlapped: usToNs(row.CommunicationNotOverlapped), Overlapped: usToNs(row.Overlapped), Free: usToNs(row.Free)}
	b.Window = b.Computing + b.CommunicationNotOverlapped + b.Free
	return b
}

// stepTraceTotals sums the step rows: the breakdown over every step the
// profiler wrote.
func stepTraceTotals(rows []model.StepTraceRow) Breakdown {
	var t Breakdown
	for i := range rows {
		b := stepRowBreakdown(&rows[i])
		t.Window += b.Window
		t.Computing += b.Computing
		t.Communication += b.Communication
		t.CommunicationNotOverlapped += b.CommunicationNotOverlapped
		t.Overlapped += b.Overlapped
		t.Free += b.Free
	}
	return t
}

// overlapFromStepTrace sets the overlap metrics from the step rows, for a
// rank without a device timeline or kernels.
func overlapFromStepTrace(ctx *Context) *Breakdown {
	r := ctx.Rank
	b := stepTraceTotals(r.StepTrace)
	ctx.From(r.Have.StepTraceFile)
	ctx.SetUs("device.window.time_us", b.Window)
	ctx.SetUs("overlap.computing.time_us", b.Computing)
	ctx.SetUs("overlap.communication.time_us", b.Communication)
	ctx.SetUs("overlap.communication_not_overlapped.time_us", b.CommunicationNotOverlapped)
	if why := noOverlapped(r); why != "" {
		ctx.Unavailable(why, MetricOverlappedUs)
	} else {
		ctx.SetUs(MetricOverlappedUs, b.Overlapped)
	}
	ctx.SetUs("overlap.free.time_us", b.Free)
	var bubble, stage float64
	for i := range r.StepTrace {
		bubble += r.StepTrace[i].Bubble
		stage += r.StepTrace[i].Stage
	}
	if bubble > 0 {
		// torch_npu's Stage column leaves the pipeline bubble out
		ctx.Warn(r.Have.StepTraceFile, fmt.Sprintf("device.window.time_us (%.3f µs) is the steps' E2E time, Computing + Communication(Not Overlapped) + Free; the file's Stage column, E2E minus Bubble (%.3f µs of pipeline bubble), sums to %.3f µs", float64(b.Window)/1000, bubble, stage))
	}
	return &b
}

// noOverlapped says why the step rows give no overlapped time ("" when
// every row has it): a step_trace_time.csv without an Overlapped column
// (or with empty cells in it) did not measure it, which is not 0.
func noOverlapped(r *model.Rank) string {
	n := 0
	for i := range r.StepTrace {
		if r.StepTrace[i].NoOverlapped {
			n++
		}
	}
	switch {
	case n == 0:
		return ""
	case n == len(r.StepTrace):
		return fmt.Sprintf("%s has no Overlapped value (no Overlapped column, or every value empty or NULL): the overlapped time was not measured", r.Have.StepTraceFile)
	}
	return fmt.Sprintf("%s has no Overlapped value in %d of its %d rows: the overlapped time was not measured", r.Have.StepTraceFile, n, len(r.StepTrace))
}

// stepID is a step_trace_time Step cell as a step id: -1 when empty (no
// schedule, so no ProfilerStep#N), else its number ("50", "step50").
func stepID(s string) (int, bool) {
	if s == "" {
		return -1, true
	}
	for len(s) > 0 && (s[0] < '0' || s[0] > '9') {
		s = s[1:]
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// stepsFromStepTrace is the per-step breakdown of the step rows, for a
// rank without a timeline. HostStart/End and the device bounds are not
// known (0); Tasks is -1 (not counted).
func stepsFromStepTrace(ctx *Context) []StepBreakdown {
	r := ctx.Rank
	out := make([]StepBreakdown, 0, len(r.StepTrace))
	noOver := noOverlapped(r)
	if noOver != "" {
		ctx.Unavailable(noOver, StepCommKeys[2])
	}
	for i := range r.StepTrace {
		row := &r.StepTrace[i]
		id, ok := stepID(row.Step)
		if !ok {
			continue
		}
		sb := StepBreakdown{Step: id, Breakdown: stepRowBreakdown(row), Tasks: -1, Source: r.Have.StepTraceFile}
		if row.NoOverlapped {
			sb.OverlappedUnavailable = noOver
		}
		if row.HasPreparing {
			sb.Preparing = usToNs(row.Preparing)
		} else {
			sb.Preparing = -1
		}
		out = append(out, sb)
	}
	return out
}

// disagree reports whether a and b differ by more than 0.1% of the larger.
func disagree(a, b int64) bool {
	d := math.Abs(float64(a - b))
	return d > 0.001*math.Max(math.Abs(float64(a)), math.Abs(float64(b)))
}

// checkAgainstStepTrace warns when a breakdown npuprof measured differs
// from the profiler's own step_trace_time row by more than 0.1% in
// computing, communication or free time. what names the span ("step 50",
// "the profiled window").
func checkAgainstStepTrace(ctx *Context, what, from string, got Breakdown, row *model.StepTraceRow, comm bool) {
	want := stepRowBreakdown(row)
	type q struct {
		name      string
		got, want int64
	}
	qs := []q{{"computing", got.Computing, want.Computing}}
	if comm {
		qs = append(qs, q{"communication", got.Communication, want.Communication}, q{"free", got.Free, want.Free})
	}
	for _, x := range qs {
		if disagree(x.got, x.want) {
			st := filepath.Base(ctx.Rank.Have.StepTraceFile)
			ctx.Warn(ctx.Rank.Have.StepTraceFile, fmt.Sprintf("%s: %s is %s in %s but %s in %s (more than 0.1%% apart); npuprof reports the %s value",
				what, x.name, nsText(x.got), filepath.Base(from), nsText(x.want), st, filepath.Base(from)))
		}
	}
}

// checkAgainstCommunication warns when the collectives npuprof measured
// (from kernel_details.csv: the readers load communication.json beside it,
// not beside a timeline) differ from communication.json's (or
// CommAnalyzerTime's) in count or by more than 0.1% in total time.
func checkAgainstCommunication(ctx *Context, res *HCCLResult) {
	r := ctx.Rank
	if len(r.Communication) == 0 || r.Have.CommFile == "" {
		return
	}
	var total int64
	for _, c := range r.Communication {
		total += int64(math.Round(c.ElapseMs * 1e6))
	}
	from, comm := filepath.Base(r.Have.HCCLFile), filepath.Base(r.Have.CommFile)
	if n := len(r.Communication); n != res.Total.Count {
		ctx.Warn(r.Have.CommFile, fmt.Sprintf("the collectives: %d in %s but %d in %s; npuprof reports the %s ones", res.Total.Count, from, n, comm, from))
	} else if disagree(res.Total.Total, total) {
		ctx.Warn(r.Have.CommFile, fmt.Sprintf("the collectives' time is %s in %s but %s in %s (more than 0.1%% apart); npuprof reports the %s value",
			nsText(res.Total.Total), from, nsText(total), comm, from))
	}
}

// hcclFromCommunication sums the collectives of communication.json (or
// analysis.db CommAnalyzerTime) by type and group, for a rank whose
// timeline and kernel_details give none. A collective's time is its
// Elapse Time; its group is the parallel_group_info communicator whose
// hash is the op's @hash key, else the one whose hash ends with the
// op name's hash token.
func hcclFromCommunication(ctx *Context) *HCCLResult {
	r := ctx.Rank
	res := newHCCLResult()
	byHash := map[string]string{}
	for _, g := range r.Groups {
		byHash[g.Hash] = g.Name
	}
	for _, c := range r.Communication {
		dur := int64(math.Round(c.ElapseMs * 1e6))
		group := byHash[c.GroupHash]
		if group == "" {
			if g := r.GroupByHashSuffix(model.HCCLHashSuffix(c.Op)); g != nil {
				group = g.Name
			}
		}
		res.add(model.HCCLTypeFromName(c.Op), group, model.HCCLVariant(c.Op), dur)
	}
	return res
}

// kernelsFromOpStats sums op_statistic.csv (compute ops only: it lists
// no collectives), for a rank without a timeline or kernel_details.csv.
func kernelsFromOpStats(ctx *Context) *KernelsResult {
	r := ctx.Rank
	res := &KernelsResult{}
	for _, s := range r.OpStats {
		res.Total.Count += s.Count
		res.Total.Total += s.Total
	}
	ctx.From(r.Have.OpStatFile)
	ctx.SetUs("kernel.compute.time_us", res.Total.Total)
	ctx.SetCount("kernel.compute.count", res.Total.Count)
	// op_statistic's Core Type says AI_CPU (the same test as a timeline's
	// kernels: OnAICPU)
	var split aicpuSplit
	for _, s := range r.OpStats {
		if s.Count > 0 {
			split.add(s.Name, s.Name, s.Level, s.Count, s.Total)
		}
	}
	if split.undecided > 0 {
		ctx.Unavailable(fmt.Sprintf("the Core Type of %d of %d op_statistic kernels is unknown (%s)", split.undecided, res.Total.Count, r.Have.OpStatFile), MetricKernelAICPUUs, MetricKernelAICPUCount)
	} else {
		aicpuKernels(ctx, res, split.aic)
	}
	return res
}

// checkStepsAgainstStepTrace compares each measured step with the
// step_trace_time row of the same step (see checkAgainstStepTrace).
func checkStepsAgainstStepTrace(ctx *Context, steps []StepBreakdown, from string) {
	rows := ctx.Rank.StepTrace
	if len(rows) == 0 || ctx.Rank.Have.TimelinePartial {
		return
	}
	byID := make(map[int]*model.StepTraceRow, len(rows))
	for i := range rows {
		if id, ok := stepID(rows[i].Step); ok {
			byID[id] = &rows[i]
		}
	}
	for i := range steps {
		s := &steps[i]
		if row := byID[s.Step]; row != nil && s.Tasks > 0 {
			checkAgainstStepTrace(ctx, fmt.Sprintf("step %d", s.Step), from, s.Breakdown, row, s.HaveComm())
		}
	}
}
