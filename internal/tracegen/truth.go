package tracegen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Truth is the exact ground truth of one generated capture
// (written as dir/npuprof_truth.json).
type Truth struct {
	Scenario Scenario
	Ranks    []RankTruth
	// Experts is the profile-level expert-load and EP-skew truth.
	Experts *ExpertsTruth `json:",omitempty"`
}

// RankTruth is the ground truth of one rank.
type RankTruth struct {
	Rank    int
	Dir     string             // the rank's *_ascend_pt folder name
	Metrics map[string]float64 // exact ground truth, see the Metric* names
	Steps   []StepTruth        // only when Scenario.ProfilerSteps
	// Waits are what each compute-stream EVENT_WAIT after a collective
	// waited for: the collective, as "<type>@<group>" (allreduce@tp).
	Waits []WaitTruth `json:",omitempty"`
}

// WaitTruth is one EVENT_WAIT and the task it waited for.
type WaitTruth struct {
	Stream  int
	StartNs int64 // as written (the trace's µs with 3 decimals, in ns)
	Awaited string
}

// StepTruth is the overlap breakdown of one ProfilerStep#N: over the compute
// kernels and HCCL big ops whose start lies in [step start, step end), with
// the window running from the first such start to the last such end.
type StepTruth struct {
	Step                         int // N of ProfilerStep#N
	ComputingUs                  float64
	CommunicationUs              float64
	CommunicationNotOverlappedUs float64
	FreeUs                       float64
}

// Metric names of RankTruth.Metrics (a public contract). Counts are
// integral floats. Per-type, per-group and per-stream families are built
// with the helpers below.
const (
	MetricWindowUs            = "device.window.time_us"
	MetricKernelSpanUs        = "device.kernel_span.time_us"
	MetricHeadIdleUs          = "device.head_idle.time_us"
	MetricTailIdleUs          = "device.tail_idle.time_us"
	MetricComputingUs         = "overlap.computing.time_us"
	MetricCommunicationUs     = "overlap.communication.time_us"
	MetricCommNotOverlappedUs = "overlap.communication_not_overlapped.time_us"
	MetricFreeUs              = "overlap.free.time_us"
	MetricHCCLTotalUs         = "hccl.total.time_us"
	MetricHCCLTotalCount      = "hccl.total.count"
	// HCCL plane tasks whose transport type is SDMA and RDMA (the text
	// layouts write every subtask's plane twin; a single node: no RDMA)
	MetricHCCLPlaneSDMACount  = "hccl.plane.sdma.count"
	MetricHCCLPlaneRDMACount  = "hccl.plane.rdma.count"
	MetricMoERoutingUs        = "moe.routing.time_us"
	MetricMoERoutingCount     = "moe.routing.count"
	MetricMoECumsumUs         = "moe.cumsum.time_us"
	MetricMoECumsumCount      = "moe.cumsum.count"
	MetricMoECumsumAicpuUs    = "moe.cumsum.aicpu.time_us"
	MetricMoECumsumAicpuCount = "moe.cumsum.aicpu.count"
	MetricMoEGmmUs            = "moe.gmm.time_us"
	MetricMoEGmmCount         = "moe.gmm.count"
	MetricEventWaitUs         = "event_wait.time_us"
	MetricEventWaitCount      = "event_wait.count"
	// the compute stream's waits for the side stream's kernel (SideStream)
	MetricEventWaitMainStreamKernelUs = "event_wait.main_stream.kernel.time_us"
	MetricKernelComputeUs             = "kernel.compute.time_us"
	MetricKernelComputeCount          = "kernel.compute.count"
	// Structure of the decode step (exact from the scenario's program).
	MetricDecodeSteps         = "decode.steps.count"
	MetricMoELayers           = "moe.layers.count"
	MetricDecodeBatchObserved = "decode.batch.observed"
	MetricGraphKernelsShare   = "graph.kernels.share"
	MetricHCCLPerLayerCount   = "hccl.per_layer.count"
)

// MetricHCCLPerLayerType is "hccl.per_layer.<type>.count".
func MetricHCCLPerLayerType(typ string) string { return "hccl.per_layer." + typ + ".count" }

// structureTruth returns the metrics that follow from the scenario's
// program alone: decode steps, MoE layers per step, the collectives of one
// MoE layer (the per-step logits all-gather is not one of them), the
// decode batch the attention kernels see, and whether kernels are graph
// replays. The per-layer pattern is only defined with at least 2 layers.
func structureTruth(s Scenario) map[string]float64 {
	m := map[string]float64{}
	m[MetricDecodeSteps] = float64(s.Steps)
	m[MetricMoELayers] = float64(s.Layers)
	tok, graph := s.decodeTokens()
	m[MetricDecodeBatchObserved] = float64(tok)
	m[MetricGraphKernelsShare] = 0
	if graph {
		m[MetricGraphKernelsShare] = 1
	}
	if s.Layers >= 2 {
		n := 0
		for _, it := range buildProgram(s).layer {
			if it.kind == itColl {
				n++
				m[MetricHCCLPerLayerType(it.c.metric)]++
			}
		}
		m[MetricHCCLPerLayerCount] = float64(n)
	}
	return m
}

// MetricHCCLType is "hccl.<type>.time_us" or ".count" (type lower-case:
// allreduce, allgather, reducescatter, ...); suffix is "time_us" or "count".
func MetricHCCLType(typ, suffix string) string { return "hccl." + typ + "." + suffix }

// MetricHCCLGroup is "hccl.group.<group>.time_us" or ".count".
func MetricHCCLGroup(group, suffix string) string { return "hccl.group." + group + "." + suffix }

// MetricEventWaitStream is "event_wait.stream.<id>.time_us" or ".count".
func MetricEventWaitStream(stream int, suffix string) string {
	return "event_wait.stream." + strconv.Itoa(stream) + "." + suffix
}

// interval is a half-open [Start, End) range in nanoseconds.
type interval struct{ Start, End int64 }

// unionSegments merges intervals (any order, any overlap) into sorted,
// disjoint, non-touching segments. Empty intervals are dropped. The input
// slice is sorted in place.
func unionSegments(iv []interval) []interval {
	sort.Slice(iv, func(i, j int) bool {
		if iv[i].Start != iv[j].Start {
			return iv[i].Start < iv[j].Start
		}
		return iv[i].End < iv[j].End
	})
	var out []interval
	for _, x := range iv {
		if x.End <= x.Start {
			continue
		}
		if n := len(out); n > 0 && x.Start <= out[n-1].End {
			if x.End > out[n-1].End {
				out[n-1].End = x.End
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// segLen is the total length of disjoint segments.
func segLen(seg []interval) int64 {
	var n int64
	for _, s := range seg {
		n += s.End - s.Start
	}
	return n
}

// subtractSegments returns a minus b, both sorted and disjoint.
func subtractSegments(a, b []interval) []interval {
	var out []interval
	j := 0
	for _, x := range a {
		cur := x.Start
		for j < len(b) && b[j].End <= cur {
			j++
		}
		k := j
		for k < len(b) && b[k].Start < x.End {
			if b[k].Start > cur {
				out = append(out, interval{cur, b[k].Start})
			}
			if b[k].End > cur {
				cur = b[k].End
			}
			k++
		}
		if cur < x.End {
			out = append(out, interval{cur, x.End})
		}
	}
	return out
}

// gapsWithin returns the parts of window not covered by the sorted disjoint
// segments seg.
func gapsWithin(window interval, seg []interval) []interval {
	return subtractSegments([]interval{window}, seg)
}

// overlapBreakdown is the Overlap Analysis quadruple of one set of tasks.
type overlapBreakdown struct {
	window                         interval
	compute, comm, notOverlapped   []interval // sorted disjoint segments
	computeNs, commNs, notOvNs, ns int64      // ns = |compute ∪ comm|
}

// freeNs is window minus |compute ∪ comm|.
func (o overlapBreakdown) freeNs() int64 { return o.window.End - o.window.Start - o.ns }

// breakdown computes the overlap quadruple for compute and comm intervals
// inside window (the slices are sorted in place).
func breakdown(window interval, compute, comm []interval) overlapBreakdown {
	o := overlapBreakdown{window: window}
	o.compute = unionSegments(compute)
	o.comm = unionSegments(comm)
	o.notOverlapped = subtractSegments(o.comm, o.compute)
	o.computeNs, o.commNs, o.notOvNs = segLen(o.compute), segLen(o.comm), segLen(o.notOverlapped)
	o.ns = o.computeNs + o.notOvNs // |A ∪ B| = |A| + |B \ A|
	return o
}

// us converts integer nanoseconds to float microseconds.
func us(ns int64) float64 { return float64(ns) / 1000 }

// truthAcc accumulates the ground truth of one rank while its steps are
// written. All sums are integer nanoseconds.
type truthAcc struct {
	rank  int
	waits []WaitTruth

	win span // device window by the writer's rule (Scenario.extremesWindow)
	// kern spans the compute kernels and HCCL big ops
	kern span

	computeNs, commNs, notOvNs, unionNs int64
	lastEnd                             int64 // end of the previous step's compute/comm tasks

	sums   map[string]int64 // metric name -> ns (time_us metrics)
	counts map[string]int64 // metric name -> count
	steps  []StepTruth
	rows   []stepRow // step_trace_time.csv rows
	// structure holds the scenario-level metrics (structureTruth).
	structure map[string]float64
}

// stepRow is one step_trace_time.csv row in nanoseconds.
type stepRow struct {
	step                                         string
	compute, notOv, comm, free, stage, preparing int64
}

func newTruthAcc(rank int, s Scenario) *truthAcc {
	return &truthAcc{rank: rank, sums: map[string]int64{}, counts: map[string]int64{}, structure: structureTruth(s)}
}

// add adds one occurrence of duration ns to the time_us/count metric pair
// named prefix+".time_us" / prefix+".count".
func (a *truthAcc) add(prefix string, ns int64) {
	a.sums[prefix+".time_us"] += ns
	a.counts[prefix+".count"]++
}

// span is the first start to the last end of the intervals added (seen:
// one was).
// kept: the generator's ground truth, worked out apart from analysis's hull on purpose (an oracle shares no code with what it checks)
type span struct {
	start, end int64
	seen       bool
}

// add extends s by one interval.
// kept: the window analysis's hull computes, computed apart from the code the tests check
func (s *span) add(start, end int64) {
	if !s.seen || start < s.start {
		s.start = start
	}
	if !s.seen || end > s.end {
		s.end = end
	}
	s.seen = true
}

// window extends the device window by one task.
func (a *truthAcc) window(start, end int64) { a.win.add(start, end) }

// kernel extends the kernel span (and the window) by one compute kernel or
// HCCL big op.
func (a *truthAcc) kernel(start, end int64) {
	a.kern.add(start, end)
	a.win.add(start, end)
}

// addStep folds one step's overlap breakdown into the totals. Steps must be
// disjoint in time and come in order, which the generator guarantees; a
// violation is reported because the totals would then be wrong.
func (a *truthAcc) addStep(o overlapBreakdown) error {
	if len(o.compute)+len(o.comm) == 0 {
		return nil
	}
	first := o.window.Start
	if a.lastEnd > 0 && first < a.lastEnd {
		return fmt.Errorf("tracegen: internal error: rank %d steps overlap (%d < %d)", a.rank, first, a.lastEnd)
	}
	a.lastEnd = o.window.End
	a.computeNs += o.computeNs
	a.commNs += o.commNs
	a.notOvNs += o.notOvNs
	a.unionNs += o.ns
	return nil
}

// metrics returns the final metric map.
func (a *truthAcc) metrics() map[string]float64 {
	m := map[string]float64{}
	for k, v := range a.sums {
		m[k] = us(v)
	}
	for k, v := range a.counts {
		m[k] = float64(v)
	}
	win := a.win.end - a.win.start
	m[MetricWindowUs] = us(win)
	if a.kern.seen {
		m[MetricKernelSpanUs] = us(a.kern.end - a.kern.start)
		m[MetricHeadIdleUs] = us(a.kern.start - a.win.start)
		m[MetricTailIdleUs] = us(a.win.end - a.kern.end)
	}
	m[MetricComputingUs] = us(a.computeNs)
	m[MetricCommunicationUs] = us(a.commNs)
	m[MetricCommNotOverlappedUs] = us(a.notOvNs)
	m[MetricFreeUs] = us(win - a.unionNs)
	for k, v := range a.structure {
		m[k] = v
	}
	// Families that must exist even when empty.
	for _, k := range []string{"hccl.total", "moe.routing", "moe.cumsum", "moe.cumsum.aicpu", "moe.gmm", "event_wait", "kernel.compute"} {
		if _, ok := m[k+".time_us"]; !ok {
			m[k+".time_us"] = 0
			m[k+".count"] = 0
		}
	}
	return m
}

// SortedMetricNames returns the metric names of a RankTruth, sorted.
func (r RankTruth) SortedMetricNames() []string {
	var k []string
	for n := range r.Metrics {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// String renders a RankTruth as sorted "name = value" lines.
func (r RankTruth) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rank %d (%s)\n", r.Rank, r.Dir)
	for _, k := range r.SortedMetricNames() {
		fmt.Fprintf(&b, "  %-50s %s\n", k, strconv.FormatFloat(r.Metrics[k], 'f', -1, 64))
	}
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "  step %d: computing %g communication %g not-overlapped %g free %g\n",
			s.Step, s.ComputingUs, s.CommunicationUs, s.CommunicationNotOverlappedUs, s.FreeUs)
	}
	return b.String()
}
