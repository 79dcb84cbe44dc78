package analysis

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
)

func load(t *testing.T, rel string) *Result {
	res, _ := loadProfile(t, rel)
	return res
}

// loadProfile is load that also returns the models (results hold none).
func loadProfile(t *testing.T, rel string) (*Result, *gather.Set[*model.Rank]) {
	t.Helper()
	p, err := gather.Models(context.Background(), testutil.Sample(t, rel), gather.Options{})
	require.NoError(t, err)
	res, err := analyzeProfile(p)
	require.NoError(t, err)
	return res, p
}

func within(t *testing.T, want, got, rel float64, msg string) {
	t.Helper()
	d := got - want
	if d < 0 {
		d = -d
	}
	require.LessOrEqualf(t, d, rel*abs(want), "%s: want %v got %v", msg, want, got)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// The profiler's own step_trace_time.csv is the reference; npuprof's
// numbers are computed from the timeline.
func TestStepBreakdownMatchesProfiler(t *testing.T) {
	for _, rel := range []string{
		"Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
		"Ascend-msinsight/test/data/pytorch/text/level1/rank1_ascend_pt",
		"Ascend-msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
	} {
		t.Run(rel, func(t *testing.T) {
			res, p := loadProfile(t, rel)
			require.Len(t, res.Ranks, 1)
			rr := res.Ranks[0]
			require.Empty(t, rr.Errors)
			ref := p.Ranks[0].StepTrace
			require.Len(t, ref, 1)
			require.Len(t, StepsOf(rr), 1)
			s := StepsOf(rr)[0]
			require.Equal(t, ref[0].Step, "50")
			require.Equal(t, 50, s.Step)
			within(t, ref[0].Computing, float64(s.Computing)/1000, 0.001, "computing")
			within(t, ref[0].Communication, float64(s.Communication)/1000, 0.001, "communication")
			within(t, ref[0].CommunicationNotOverlapped, float64(s.CommunicationNotOverlapped)/1000, 0.001, "not overlapped")
			within(t, ref[0].Free, float64(s.Free)/1000, 0.001, "free")
		})
	}
}

func TestLevel1Rank0Metrics(t *testing.T) {
	res := load(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	m := res.Ranks[0].Metrics
	within(t, 105991.878, m["hccl.total.time_us"], 0.0001, "hccl.total.time_us")
	require.Equal(t, 4.0, m["hccl.total.count"])
	require.Equal(t, 4.0, m["hccl.allreduce.count"])
	require.Equal(t, 10.0, m["event_wait.count"])
	within(t, 8873.756, m["overlap.computing.time_us"], 0.0001, "computing")
	require.Equal(t, 0, res.Ranks[0].Rank)
	require.Equal(t, "Level1", res.Ranks[0].ProfilerLevel)
	t.Logf("%v", m)
}
