package traceview

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/parser/model"
	"github.com/stretchr/testify/require"
)

func TestReadSmall(t *testing.T) {
	const trace = `[{"ph":"X","name":"aten::mm","pid":10,"tid":10,"ts":"1736408883700000.000","dur":5.5,"cat":"cpu_op","args":{"Call stack":"a\"b;\r\n"}},
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
	r := model.NewRank("x")
	st, err := Read(strings.NewReader(trace), "trace_view.json", r)
	require.NoError(t, err)
	require.False(t, st.Truncated)
	require.Len(t, r.Tasks, 2)
	require.Equal(t, int64(1736408883700010000), r.Tasks[0].Start)
	require.Equal(t, int64(3250), r.Tasks[0].Dur)
	require.Equal(t, "MatMulV2", r.Tasks[0].OpType)
	require.Equal(t, model.ClassCompute, r.Tasks[0].Class)
	require.Equal(t, model.ClassEventWait, r.Tasks[1].Class)
	require.Equal(t, int64(451), r.Tasks[1].Dur)
	require.Len(t, r.HCCL, 1)
	require.Equal(t, "allreduce", r.HCCL[0].Type)
	require.Equal(t, "586", r.HCCL[0].HashSuffix)
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

func samplesDir(t testing.TB) string {
	d := os.Getenv("NPUPROF_SAMPLES")
	if d == "" {
		d = filepath.Join("..", "..", "..", "shared", "formats", "samples")
	}
	if _, err := os.Stat(d); err != nil {
		t.Skipf("real samples not found at %s (set NPUPROF_SAMPLES): %v", d, err)
	}
	return d
}

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
		if x.Class == model.ClassEventWait {
			n++
		}
	}
	require.Equal(t, 10, n)
	t.Logf("links=%d ops=%d", len(r.Links), len(r.FrameworkOps))
}
