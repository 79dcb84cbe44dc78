package analysis

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// sampleRank builds a rank of len(stepTasks) profiler steps, step i with
// stepTasks[i] compute kernels spread over four streams (each kernel 1 µs,
// then a gap of 0.5 to 12.5 µs: merging neighbours must leave gaps) and an
// HCCL op in one of two groups every 16 kernels. Names come from a pool of 40, one of them 1000 runes long.
func sampleRank(stepTasks ...int) *model.Rank {
	r := model.NewRank("sample_rank0_ascend_pt")
	r.Format = model.FormatTorchNPUText
	r.Have = model.Availability{Timeline: true, KernelDetails: true, HCCL: true, Framework: true,
		TimelineFile: "trace_view.json", KernelFile: "kernel_details.csv"}
	long := strings.Repeat("é", 1000)
	var t int64 = 1_700_000_000_000_000_000
	for st, n := range stepTasks {
		start := t
		t += 10_000
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("aclnnKernel%d_Kernel", i%40)
			if i%40 == 39 {
				name = long
			}
			r.Tasks = append(r.Tasks, r.NewTask(t, 1_000, model.TaskExtra{Name: r.Intern(name),
				OpType: r.Intern("Kernel"), TaskType: r.Intern("AI_CORE"),
				Stream: int32(2 + i%4), Class: model.ClassCompute}))
			if i%16 == 0 {
				r.HCCL = append(r.HCCL, model.HCCLOp{Start: t, Dur: 700, Name: r.Intern("hcom_allReduce__586_0_1"),
					Type: r.Intern("allreduce"), Group: r.Intern([]string{"tp", "ep"}[i/16%2])})
			}
			t += 1_500 + int64(i*7919%13)*1_000
		}
		t += 10_000
		r.Steps = append(r.Steps, model.Step{ID: 10 + st, Start: start, End: t})
		t += 5_000
	}
	r.SortTasks()
	return r
}

// sampleBytes is what a sample holds, counting each string's bytes.
func sampleBytes(s *TimelineSample) int {
	n := int(unsafe.Sizeof(*s))
	for _, w := range []*SampleWindow{s.Median, s.Middle, s.Capture} {
		if w == nil {
			continue
		}
		n += int(unsafe.Sizeof(*w)) + len(w.Boxes)*int(unsafe.Sizeof(SampleBox{})) + len(w.Lanes)*int(unsafe.Sizeof(SampleLane{}))
		for _, l := range w.Lanes {
			n += len(l.Group)
		}
		for _, name := range w.Names {
			n += len(name) + int(unsafe.Sizeof(name))
		}
	}
	return n
}

// The sample holds at most SampleMaxBoxes boxes per window, names of at
// most SampleNameRunes runes, and every task of the window is accounted
// for: its size stays the same from 3k to 300k tasks a step.
func TestTimelineSampleBounded(t *testing.T) {
	// what the bounds allow, whatever the trace's size: per window at
	// most SampleMaxBoxes boxes and, here, the pool's 40 distinct names (of
	// at most SampleNameRunes runes of 2 bytes) and 6 lanes (4 streams, 2
	// groups)
	window := SampleMaxBoxes*int(unsafe.Sizeof(SampleBox{})) + 40*int(unsafe.Sizeof("")+SampleNameRunes*2) +
		6*int(unsafe.Sizeof(SampleLane{})+2) + int(unsafe.Sizeof(SampleWindow{}))
	bound := 2*window + int(unsafe.Sizeof(TimelineSample{}))
	for _, n := range []int{1_000, 5_000, 50_000} {
		// step 10 has n kernels, 11 has 3n, 12 has 2n: the median-length
		// step (12) is not the middle one by id (11)
		r := sampleRank(n, 3*n, 2*n)
		perStep := map[int]int{10: n, 11: 3 * n, 12: 2 * n}
		rr := AnalyzeRank(r)
		require.Empty(t, rr.Errors)
		s := TimelineSampleOf(rr)
		require.NotNil(t, s)
		require.Nil(t, s.Capture)
		require.NotNil(t, s.Median)
		require.NotNil(t, s.Middle)
		require.Equal(t, 12, s.Median.Step)
		require.Equal(t, 11, s.Middle.Step)
		for _, w := range []*SampleWindow{s.Median, s.Middle} {
			step := StepsOf(rr)[w.Step-10]
			require.Equal(t, step.DeviceStart, w.Start)
			require.Equal(t, step.DeviceEnd, w.End)
			tasks := perStep[w.Step]
			hccl := (tasks + 15) / 16
			require.Equal(t, tasks+hccl, w.Tasks)
			require.LessOrEqual(t, len(w.Boxes), SampleMaxBoxes)
			require.LessOrEqual(t, len(w.Names), len(w.Boxes))
			require.Len(t, w.Lanes, 6)
			require.Equal(t, SampleLane{Stream: 2}, w.Lanes[0])
			require.Equal(t, SampleLane{HCCL: true, Group: "ep"}, w.Lanes[4])
			var count int
			for _, b := range w.Boxes {
				count += int(b.Count)
				require.GreaterOrEqual(t, b.Start, int64(0))
				require.LessOrEqual(t, b.End, w.End-w.Start)
				require.Less(t, int(b.Lane), len(w.Lanes))
				require.Less(t, int(b.Name), len(w.Names))
			}
			require.Equal(t, w.Tasks, count, "merged boxes account for every task")
			for _, name := range w.Names {
				require.LessOrEqual(t, utf8.RuneCountInString(name), SampleNameRunes)
			}
		}
		size := sampleBytes(s)
		require.LessOrEqual(t, size, bound, "%d tasks a step", n)
		t.Logf("%d tasks a step: model %d tasks (%d KiB of them), sample %d bytes (bound %d)", n, len(r.Tasks),
			len(r.Tasks)*int(unsafe.Sizeof(model.DeviceTask{}))>>10, size, bound)
	}
}

// A window without merging holds exactly the window's tasks, clipped, with
// their own names; a capture without steps is sampled whole or sliced.
func TestTimelineSampleExact(t *testing.T) {
	r := sampleRank(40, 40, 40)
	rr := AnalyzeRank(r)
	s := TimelineSampleOf(rr)
	require.NotNil(t, s.Median)
	require.Nil(t, s.Middle, "equal steps: the median-length one is the middle one")
	w := s.Median
	require.Equal(t, 11, w.Step)
	require.Equal(t, 40+3, w.Tasks)
	require.Len(t, w.Boxes, 43)
	var seen int
	for _, b := range w.Boxes {
		require.Equal(t, int32(1), b.Count)
		name := w.Names[b.Name]
		if b.Kind == BoxHCCLOp {
			require.Equal(t, "hcom_allReduce__586_0_1", name)
			require.Equal(t, int64(700), b.End-b.Start)
			continue
		}
		require.Equal(t, BoxCompute, b.Kind)
		require.Equal(t, int64(1_000), b.End-b.Start)
		if strings.HasPrefix(name, "é") {
			require.Equal(t, strings.Repeat("é", SampleNameRunes), name)
			seen++
		}
	}
	require.Equal(t, 1, seen, "the 40th kernel's name, cut")

	// no steps: the capture, whole (short) or its middle 20 ms
	r = sampleRank(50)
	r.Steps = nil
	s = TimelineSampleOf(AnalyzeRank(r))
	require.Nil(t, s.Median)
	require.NotNil(t, s.Capture)
	require.Equal(t, -1, s.Capture.Step)
	require.False(t, s.Capture.Sliced)
	require.Equal(t, 50+4, s.Capture.Tasks)
	r = sampleRank(20_000) // 30 ms of kernels
	r.Steps = nil
	rr = AnalyzeRank(r)
	s = TimelineSampleOf(rr)
	require.True(t, s.Capture.Sliced)
	require.Equal(t, int64(SampleSliceNs), s.Capture.End-s.Capture.Start)
	require.Equal(t, TimelineOf(rr).WindowStart+(TimelineOf(rr).WindowEnd-TimelineOf(rr).WindowStart)/2, s.Capture.Start+SampleSliceNs/2)

	// no device timeline: no sample
	r = model.NewRank("empty_ascend_pt")
	require.Nil(t, TimelineSampleOf(AnalyzeRank(r)))
}

func TestMedianAndMiddleStep(t *testing.T) {
	steps := []StepBreakdown{
		{Step: 1, DeviceStart: 0, DeviceEnd: 50},
		{Step: 2, DeviceStart: 100, DeviceEnd: 110},
		{Step: 3, DeviceStart: 200, DeviceEnd: 200}, // no device work
		{Step: 4, DeviceStart: 300, DeviceEnd: 330},
		{Step: 5, DeviceStart: 400, DeviceEnd: 430},
	}
	m, ok := MedianStep(steps)
	require.True(t, ok)
	require.Equal(t, 4, m.Step, "lengths 10, 30, 30, 50: the lower median, ties by id")
	m, ok = MiddleStep(steps)
	require.True(t, ok)
	require.Equal(t, 2, m.Step, "ids 1, 2, 4, 5: the lower middle")
	_, ok = MedianStep(steps[2:3])
	require.False(t, ok)
}

func TestDownsampleCapsBoxes(t *testing.T) {
	var boxes []SampleBox
	for i := 0; i < 10000; i++ {
		boxes = append(boxes, SampleBox{Lane: int32(i % 3), Start: int64(i) * 100, End: int64(i)*100 + 60, Count: 1, Longest: int64(i % 7)})
	}
	out, _ := downsample(boxes, 1_000_000, 500)
	require.LessOrEqual(t, len(out), 500)
	total := 0
	for _, b := range out {
		total += int(b.Count)
	}
	require.Equal(t, 10000, total, "merged boxes account for every task")
}

// A merged box takes the kind that holds most of its time, not its
// longest member's: a 3.2 ms compute step of many 40 µs kernels with one
// 89 µs wait is compute, and its kind times say what it is made of.
func TestDownsampleKindByTime(t *testing.T) {
	var boxes []SampleBox
	for i := int64(0); i < 80; i++ {
		boxes = append(boxes, SampleBox{Start: i * 40_000, End: i*40_000 + 40_000, Count: 1, Longest: 40_000, Kind: BoxCompute})
	}
	boxes = append(boxes, SampleBox{Start: 3_200_000, End: 3_289_000, Count: 1, Longest: 89_000, Kind: BoxEventWait})
	out, kt := downsample(boxes, 4_000_000, 1)
	require.Len(t, out, 1)
	require.Equal(t, BoxCompute, out[0].Kind)
	require.Equal(t, int32(81), out[0].Count)
	require.Equal(t, int64(3_200_000), kt[0][BoxCompute])
	require.Equal(t, int64(89_000), kt[0][BoxEventWait])
	require.Equal(t, int64(89_000), out[0].Longest, "the name is still the longest member's")
}
