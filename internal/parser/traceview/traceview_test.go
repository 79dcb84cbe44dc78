package traceview

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// smallTrace has one event of every kind the reader handles.
const smallTrace = `[{"ph":"X","name":"aten::mm","pid":10,"tid":10,"ts":"1736408883700000.000","dur":5.5,"cat":"cpu_op","args":{"Call stack":"a\"b;\r\n"}},
{"ph":"s","bp":"e","name":"torch_to_npu","id":1736408883700010000,"pid":10,"tid":10,"ts":"1736408883700000.000","cat":"async_npu"},
{"ph":"X","name":"aclnnMm_MatMulCommon_MatMulV2","pid":20,"tid":2,"ts":"1736408883700010.000","dur":3.25,"args":{"Model Id":4294967295,"Task Type":"AI_CORE","Physic Stream Id":2}},
{"ph":"f","bp":"e","name":"torch_to_npu","id":1736408883700010000,"pid":20,"tid":2,"ts":"1736408883700010.000","cat":"async_npu"},
{"ph":"X","name":"EVENT_WAIT","pid":20,"tid":3,"ts":"1736408883700011.000","dur":0.45077999999999996,"args":{"Task Type":"EVENT_WAIT_SQE","Physic Stream Id":3}},
{"ph":"X","name":"hcom_allReduce__586_0_1","pid":30,"tid":0,"ts":"1736408883700020.500","dur":10,"args":{}},
{"ph":"X","name":"Notify_Wait","pid":30,"tid":1,"ts":"1736408883700020.500","dur":1,"args":{}},
{"ph":"C","name":"HBM","pid":40,"tid":0,"ts":"1736408883700020.500","args":{"x":1}},
{"ph":"M","name":"process_name","pid":10,"tid":0,"args":{"name":"Python"}},
{"ph":"M","name":"process_name","pid":20,"tid":0,"args":{"name":"Ascend Hardware"}},
{"ph":"M","name":"process_labels","pid":20,"tid":0,"args":{"labels":"NPU 3"}},
{"ph":"M","name":"process_name","pid":30,"tid":0,"args":{"name":"HCCL"}},
{"ph":"M","name":"thread_name","pid":30,"tid":0,"args":{"name":"Group 0 Communication"}},
{"ph":"M","name":"thread_name","pid":30,"tid":1,"args":{"name":"Plane 0"}}
]`

func TestReadSmall(t *testing.T) {
	trace := smallTrace
	r := model.NewRank("x")
	st, err := Read(strings.NewReader(trace), "trace_view.json", r)
	require.NoError(t, err)
	require.False(t, st.Truncated)
	require.Len(t, r.Tasks, 2)
	require.Equal(t, int64(1736408883700010000), r.Tasks[0].Start)
	require.Equal(t, int64(3250), r.Dur(&r.Tasks[0]))
	require.Equal(t, "MatMulV2", r.Str(r.OpType(&r.Tasks[0])))
	require.Equal(t, model.ClassCompute, r.Class(&r.Tasks[0]))
	require.Equal(t, model.ClassEventWait, r.Class(&r.Tasks[1]))
	require.Equal(t, int64(451), r.Dur(&r.Tasks[1]))
	require.Len(t, r.HCCL, 1)
	require.Equal(t, "allreduce", r.Str(r.HCCL[0].Type))
	require.Equal(t, "586", r.Str(r.HCCL[0].HashSuffix))
	require.Len(t, r.FrameworkOps, 1)
	require.Equal(t, []model.Link{{Op: 0, Task: 0, HCCL: -1}}, r.Links)
	require.Equal(t, 3, r.Device)

	// truncated anywhere: never panics, keeps complete events
	for cut := 0; cut < len(trace); cut += 7 {
		r := model.NewRank("x")
		st, err := Read(strings.NewReader(trace[:cut]), "t.json", r)
		if err != nil {
			continue
		}
		require.True(t, st.Truncated, "cut %d", cut)
		require.True(t, r.Partial)
	}
}

func samplesDir(t testing.TB) string { return testutil.SamplesDir(t) }

func TestReadSampleLevel1(t *testing.T) {
	d := samplesDir(t)
	p := filepath.Join(d, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	r := model.NewRank(p)
	st, err := Read(f, p, r)
	require.NoError(t, err)
	require.False(t, st.Truncated)
	require.Len(t, r.Tasks, 535)
	require.Len(t, r.HCCL, 4)
	require.Len(t, r.Steps, 1)
	require.Equal(t, 50, r.Steps[0].ID)
	n := 0
	for _, x := range r.Tasks {
		if r.Class(&x) == model.ClassEventWait {
			n++
		}
	}
	require.Equal(t, 10, n)
	t.Logf("links=%d ops=%d", len(r.Links), len(r.FrameworkOps))
}

// readBoth reads data with a block reader and one byte at a time and
// checks both give the same model.
func readBoth(t *testing.T, data string) (*model.Rank, Stats) {
	t.Helper()
	r := model.NewRank("x")
	st, err := Read(strings.NewReader(data), "t.json", r)
	require.NoError(t, err)
	r2 := model.NewRank("x")
	st2, err := Read(iotest.OneByteReader(strings.NewReader(data)), "t.json", r2)
	require.NoError(t, err)
	require.Equal(t, st, st2)
	require.True(t, equalRanks(r, r2))
	return r, st
}

const hwMeta = `{"ph":"M","name":"process_name","pid":20,"tid":0,"args":{"name":"Ascend Hardware"}}`

func task(name string, tid int, ts, dur string) string {
	return fmt.Sprintf(`{"ph":"X","name":%q,"pid":20,"tid":%d,"ts":%s,"dur":%s,"args":{"Task Type":"AI_CORE"}}`, name, tid, ts, dur)
}

// An event bigger than MaxEventBytes is skipped with a warning naming its
// offset; the events around it are read and memory stays bounded.
func TestReadSkipsOversizedEvent(t *testing.T) {
	defer func(v int) { MaxEventBytes = v }(MaxEventBytes)
	MaxEventBytes = 300
	big := `{"ph":"X","name":"big","pid":20,"tid":2,"ts":"5","dur":1,"args":{"x":"` + strings.Repeat("a\\\"[{", 200) + `"}}`
	first := task("a", 2, `"1"`, "1")
	data := "[" + first + ",\n" + big + ",\n" + task("b", 2, `"10"`, "2") + "," + hwMeta + "]"
	r, st := readBoth(t, data)
	require.False(t, st.Truncated)
	require.Equal(t, int64(1), st.Skipped)
	require.Equal(t, int64(3), st.Events)
	require.Len(t, r.Tasks, 2)
	require.Equal(t, "b", r.Str(r.Name(&r.Tasks[1])))
	require.Len(t, r.Warnings, 1)
	off := strings.Index(data, `{"ph":"X","name":"big"`)
	require.Contains(t, r.Warnings[0].Message, fmt.Sprintf("skipped 1 event(s) larger than the 300 bytes event limit (first at byte %d)", off))

	// a file that ends inside the oversized event is truncated there
	cut := data[:off+len(big)-10]
	r, st = readBoth(t, cut)
	require.True(t, st.Truncated)
	require.Equal(t, int64(off), st.TruncatedAt)
	require.True(t, r.Partial)
}

// Events the reader cannot use are counted per kind, with the byte offset
// of the first, never silently dropped; the rest are read.
func TestReadCountsUnusableEvents(t *testing.T) {
	evs := []string{
		task("ok", 2, `"1.5"`, "1"),
		task("no-ts", 2, `"N/A"`, "1"),
		task("huge-ts", 2, `"99999999999999999999"`, "1"),
		task("overflow", 2, `"9223372036854775.000"`, "1000"),
		task("neg-dur", 2, `"3"`, "-2"),
		task("huge-dur", 2, `"4"`, "1e300"),
		`{"ph":"X" "name":}`,
		task("big-stream", 2, `"6"`, "1"),
		strings.Replace(task("no-name", 2, `"7"`, "1"), `"name"`, `"namcbe.94e8e"`, 1),
		hwMeta,
	}
	evs[7] = strings.Replace(evs[7], `"Task Type":"AI_CORE"`, `"Task Type":"AI_CORE","Physic Stream Id":99999999999,"Model Id":-1`, 1)
	data := "[" + strings.Join(evs, ",\n") + "]"
	r, st := readBoth(t, data)
	require.False(t, st.Truncated)
	var names []string
	for _, x := range r.Tasks {
		names = append(names, r.Str(r.Name(&x)))
	}
	require.Equal(t, []string{"ok", "neg-dur", "big-stream"}, names)
	require.Equal(t, int64(0), r.Dur(&r.Tasks[1]))
	require.Equal(t, int32(2), r.Stream(&r.Tasks[2]), "an out-of-range stream id falls back to the tid")
	require.Equal(t, uint32(4294967295), r.ModelID(&r.Tasks[2]))
	off := func(i int) int { return strings.Index(data, evs[i]) }
	msgs := map[string]model.Warning{}
	for _, w := range r.Warnings {
		msgs[w.Message] = w
	}
	require.Len(t, msgs, 5, "%v", r.Warnings)
	want := []struct {
		msg   string
		count int
	}{
		{fmt.Sprintf(`t.json is malformed at byte %d (the event at byte %d is not a JSON object of "key": value pairs): skipped %d byte(s) holding 1 event(s) in 1 place(s), going on each time at the next event boundary; analyzed the other 9 events`, off(6), off(6), len(evs[6])+2), 0},
		{fmt.Sprintf("skipped 1 complete (ph X) event(s) without a numeric ts (first at byte %d)", off(1)), 1},
		{fmt.Sprintf("skipped 3 complete (ph X) event(s) whose ts or ts+dur is outside the int64 nanosecond range (first at byte %d)", off(2)), 3},
		{fmt.Sprintf("1 complete (ph X) event(s) have a missing, non-numeric or negative dur, taken as 0 (first at byte %d)", off(4)), 1},
		{fmt.Sprintf(`skipped 1 complete (ph X) event(s) without a "name" (a damaged key?) (first at byte %d)`, off(8)), 1},
	}
	for _, w := range want {
		got, ok := msgs[w.msg]
		require.Truef(t, ok, "missing warning %q in %v", w.msg, r.Warnings)
		require.Equal(t, w.count, got.Count)
		require.Equal(t, "t.json", got.File)
	}
}

// Deep nesting costs no stack: the scanner and the field iterator are
// iterative.
func TestReadDeeplyNested(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 200000) + "1" + strings.Repeat(`]}`, 200000)
	data := "[" + strings.Replace(task("deep", 2, `"1"`, "1"), `"args":{`, `"args":{"deep":`+deep+`,`, 1) + "," + hwMeta + "]"
	r, st := readBoth(t, data)
	require.False(t, st.Truncated)
	require.Len(t, r.Tasks, 1)
	require.Equal(t, "AI_CORE", r.Str(r.TaskType(&r.Tasks[0])))
}

// A file cut before the metadata that names the Ascend Hardware or HCCL
// process must not report "0 collectives" or "no device tasks" as measured:
// the availability flags say the data could not be identified, and why.
func TestReadTruncatedBeforeProcessMetadata(t *testing.T) {
	// metadata comes after the slices, as torch_npu writes it
	i := strings.Index(smallTrace, `{"ph":"M","name":"process_name","pid":20`)
	r, st := readBoth(t, smallTrace[:i+10])
	require.True(t, st.Truncated)
	require.True(t, r.Partial)
	require.True(t, r.Have.TimelinePartial)
	require.False(t, r.Have.Timeline)
	require.False(t, r.Have.HCCL)
	require.Empty(t, r.Tasks)
	require.Empty(t, r.HCCL)
	require.Contains(t, r.Have.TimelineNote, fmt.Sprintf("t.json is truncated at byte %d, before the Ascend Hardware process metadata", i))
	require.Contains(t, fmt.Sprint(r.Warnings), fmt.Sprintf("4 slice(s) belong to processes whose process_name metadata lies after byte %d, where the file is truncated; they could not be attributed", i))

	// hardware named, HCCL not yet: tasks are measured, collectives are not
	j := strings.Index(smallTrace, `{"ph":"M","name":"process_name","pid":30`)
	r, st = readBoth(t, smallTrace[:j+10])
	require.True(t, st.Truncated)
	require.True(t, r.Have.Timeline)
	require.False(t, r.Have.HCCL)
	require.Len(t, r.Tasks, 2)
	require.Contains(t, r.Have.HCCLNote, "before the HCCL process and thread metadata")

	// HCCL named but its thread names cut off: still not identifiable
	k := strings.Index(smallTrace, `{"ph":"M","name":"thread_name","pid":30,"tid":0`)
	r, _ = readBoth(t, smallTrace[:k+10])
	require.False(t, r.Have.HCCL)
	require.NotEmpty(t, r.Have.HCCLNote)

	// a complete file without an HCCL process is a single-card run:
	// collectives are measured (none)
	r, _ = readBoth(t, "["+task("a", 2, `"1"`, "1")+","+hwMeta+"]")
	require.True(t, r.Have.HCCL)
	require.Empty(t, r.Have.HCCLNote)
}

// Bytes between events that are not an event are skipped: the read goes
// on at the next event, and the rank is partial with the byte offset. With
// no event after them, the read stops there like a truncation.
func TestReadMalformedBetweenEvents(t *testing.T) {
	data := "[" + hwMeta + ",\n" + task("a", 2, `"1"`, "1") + ", 12345, " + task("b", 2, `"2"`, "1") + "]"
	r, st := readBoth(t, data)
	require.False(t, st.Truncated)
	at := strings.Index(data, "12345")
	require.Equal(t, int64(at), st.BadAt)
	require.Equal(t, int64(1), st.Resyncs)
	require.Len(t, r.Tasks, 2)
	require.True(t, r.Partial)
	require.Equal(t, fmt.Sprintf("t.json is malformed at byte %d (expected '{' or ']' at byte %d, found '1'): skipped 7 byte(s) holding 0 event(s) in 1 place(s), going on each time at the next event boundary; analyzed the other 3 events", at, at), r.PartialReason)

	data = "[" + hwMeta + ",\n" + task("a", 2, `"1"`, "1") + ", 12345]"
	r, st = readBoth(t, data)
	require.True(t, st.Truncated)
	require.True(t, st.Malformed)
	require.Equal(t, int64(at), st.TruncatedAt)
	require.Len(t, r.Tasks, 1)
	require.Equal(t, fmt.Sprintf("t.json is malformed: expected '{' or ']' at byte %d, found '1'; analyzed the 2 complete events before it", at), r.PartialReason)
}

// The reader refills its block in the middle of events; any split of the
// input must give the same rank as reading it whole.
func TestReadAnySplit(t *testing.T) {
	s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
	s.Steps = 2
	var b bytes.Buffer
	_, err := tracegen.WriteTrace(&b, s, 1)
	require.NoError(t, err)
	data := b.Bytes()
	want := model.NewRank("x")
	_, err = Read(bytes.NewReader(data), "x", want)
	require.NoError(t, err)
	require.NotEmpty(t, want.Tasks)
	require.NotEmpty(t, want.HCCL)
	require.NotEmpty(t, want.FrameworkOps)
	require.NotEmpty(t, want.Links)
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(data)),
		"half":     iotest.HalfReader(bytes.NewReader(data)),
	} {
		got := model.NewRank("x")
		_, err := Read(r, "x", got)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
}

// Escapes, string pids and tids, a 3 MB call stack (bigger than a block),
// the {"traceEvents": [...]} wrapper and metadata that names processes
// only after their slices.
func TestReadShapes(t *testing.T) {
	stack := strings.Repeat(`frame.py(12): f\\n\"x\"; `, 120000)
	trace := `{"traceEvents": [
{"ph":"X","name":"aten::a\"b","pid":"10","tid":"7","ts":"1000.5","dur":2,"cat":"cpu_op","args":{"Call stack":"` + stack + `","nested":{"x":[1,{"y":"}"}]}}},
{"ph":"X","name":"python","pid":"10","tid":"7","ts":"1001","dur":1,"cat":"python_function","args":{}},
{"ph":"X","name":"aclnnCumsum_CumsumAiCpu_Cumsum","pid":20,"tid":2,"ts":1002.25,"dur":0.001,"args":{"Task Type":"AI_CPU","Stream Id":"2","Model Id":7}},
{"ph":"X","name":"hcom_allGather__115_0_1","pid":30,"tid":0,"ts":"1003","dur":5,"args":{}},
{"ph":"X","name":"Notify_Wait","pid":30,"tid":1,"ts":"1003","dur":1,"args":{}},
{"ph":"X","name":"Computing","pid":40,"tid":0,"ts":"1003","dur":1},
{"ph":"M","name":"process_name","pid":40,"args":{"name":"Overlap Analysis"}},
{"ph":"X","name":"Free","pid":40,"tid":3,"ts":"1004","dur":1},
{"ph":"M","name":"process_name","pid":"10","tid":0,"args":{"name":"Python"}},
{"ph":"M","name":"process_name","pid":20,"tid":0,"args":{"name":"Ascend Hardware"}},
{"ph":"M","name":"process_name","pid":30,"tid":0,"args":{"name":"Communication"}},
{"ph":"M","name":"thread_name","pid":30,"tid":0,"args":{"name":"Group tp Communication"}},
{"ph":"M","name":"process_labels","pid":20,"tid":0,"args":{"labels":"NPU 5"}}
], "displayTimeUnit": "ns"}`
	r := model.NewRank("x")
	st, err := Read(strings.NewReader(trace), "t.json", r)
	require.NoError(t, err)
	require.False(t, st.Truncated)
	require.Equal(t, int64(13), st.Events)
	require.Equal(t, []model.FrameworkOp{{Start: 1000500, Dur: 2000, Name: r.Intern(`aten::a"b`), Thread: r.Threads.ID(7)}}, r.FrameworkOps)
	require.Len(t, r.Tasks, 1)
	require.Equal(t, r.NewTask(1002250, 1, model.TaskExtra{Name: r.Intern("aclnnCumsum_CumsumAiCpu_Cumsum"),
		Stream: 2, Class: model.ClassCompute, OpType: r.Intern("Cumsum"), TaskType: r.Intern("AI_CPU"), ModelID: 7}), r.Tasks[0])
	require.Len(t, r.HCCL, 1)
	require.Equal(t, "allgather", r.Str(r.HCCL[0].Type))
	require.Equal(t, 5, r.Device)
}

func TestDevFromPid(t *testing.T) {
	// S25 level1 rank0: Ascend Hardware pid 3170820512 = (3096504<<10)|(13<<5)|0
	require.Equal(t, 0, devFromPid(3170820512))
	require.Equal(t, 5, devFromPid(3096504<<10|13<<5|5))
	require.Equal(t, -1, devFromPid(3096504<<10|13<<5|31))
	require.Equal(t, -1, devFromPid(800))
	require.Equal(t, -1, devFromPid(0))
}

// TestInternerNames: names of every length up to 20 (so both the short
// table and the maphash table), many alike (a two-letter alphabet, so
// they share first and last bytes), some escaped: the same raw spelling
// always gets the same id, different unescaped names different ids, and
// an id's string is the unescaped name.
func TestInternerNames(t *testing.T) {
	var syms model.Syms
	in := newInterner(&syms)
	ids := map[string]uint32{}    // raw -> id
	names := map[uint32]string{}  // id -> unescaped
	byName := map[string]uint32{} // unescaped -> id
	for round := range 3 {
		for n := 0; n <= 20; n++ {
			for k := range 300 {
				b := make([]byte, n)
				for j := range b {
					b[j] = "ab"[(k>>(j%9)+j*round)&1]
				}
				if n >= 2 && k%50 == 0 {
					b[n/2-1], b[n/2] = '\\', 'n'
				}
				id := in.id(b)
				want := unquote(b)
				if old, ok := ids[string(b)]; ok && old != id {
					t.Fatalf("%q: id %d, before %d", b, id, old)
				}
				if other, ok := byName[want]; ok && other != id {
					t.Fatalf("%q (%q): id %d, but the name has id %d", b, want, id, other)
				}
				ids[string(b)], names[id], byName[want] = id, want, id
				if got := in.str(id); got != want {
					t.Fatalf("%q: id %d is %q, want %q", b, id, got, want)
				}
			}
		}
	}
	if len(names) < 1000 {
		t.Fatalf("only %d distinct names", len(names))
	}
}

// An Overlap Analysis slice of no kind npuprof knows (a damaged name) is
// in none of the four sums: a warning says so, never a silent change.
func TestOverlapAnalysisUnknownKindWarned(t *testing.T) {
	trace := `[
{"ph":"M","name":"process_name","pid":40,"args":{"name":"Overlap Analysis"}},
{"ph":"X","name":"Computing","pid":40,"tid":0,"ts":"1003","dur":1},
{"ph":"X","name":"Comp9b4e6e94 1uting","pid":40,"tid":0,"ts":"1005","dur":2},
{"ph":"X","name":"Free","pid":40,"tid":3,"ts":"1004","dur":1}]`
	r := model.NewRank("x")
	_, err := ReadWithOverlap(strings.NewReader(trace), "msprof_0.json", r)
	require.NoError(t, err)
	require.Len(t, r.Warnings, 1)
	require.Equal(t, "msprof_0.json", r.Warnings[0].File)
	require.Contains(t, r.Warnings[0].Message, `1 Overlap Analysis slice(s) of no kind npuprof knows (first: "Comp9b4e6e94 1uting"`)
}
