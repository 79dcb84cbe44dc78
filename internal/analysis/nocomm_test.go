package analysis

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// TestStepsWithoutCollectivesAreUnavailable: a rank without collective data
// reports no per-step communication, overlap or free (never 0), says why,
// and still reports each step's computing exactly; the other ranks' steps
// match the truth, and the per-step skew does not compare the missing
// rank's communication or free as 0.
func TestStepsWithoutCollectivesAreUnavailable(t *testing.T) {
	dir, truth, cut := testutil.NoCommCapture(t, 3)
	p, err := gather.Models(t.Context(), dir, gather.Options{})
	require.NoError(t, err)
	res, err := analyzeProfile(p)
	require.NoError(t, err)
	require.Len(t, res.Ranks, 3)

	rr := res.Ranks[2]
	rt := truth.Ranks[2]
	trace := filepath.Join(dir, rt.Dir, tracegen.OutputDir, "trace_view.json")
	why := "no collective data: " + trace + " is truncated at byte " + strconv.Itoa(cut) + ", before the HCCL process and thread metadata, so collectives cannot be identified"
	require.Equal(t, why, rr.Unavailable["overlap.communication.time_us"], "the whole-rank reason")
	require.Equal(t, why, rr.Unavailable["steps.communication_us"])
	for _, k := range []string{"steps.communication_not_overlapped_us", "steps.overlapped_us", "steps.free_us"} {
		require.Equal(t, "needs both compute kernels and collectives; "+why, rr.Unavailable[k], k)
	}
	for _, k := range []string{"overlap.communication.time_us", "overlap.communication_not_overlapped.time_us", "overlap.overlapped.time_us", "overlap.free.time_us"} {
		_, measured := rr.Metrics[k]
		require.False(t, measured, k)
	}
	// the last step ends after the last kernel read: the cut may have taken
	// some of its device work, so it is left out, with the reason
	require.Len(t, StepsOf(rr), len(rt.Steps)-1)
	last := rt.Steps[len(rt.Steps)-1].Step
	require.Contains(t, rr.Unavailable["steps.cut"], fmt.Sprintf("ProfilerStep#%d left out: the truncated trace ends before their device work does (the last kernel read starts at ", last))
	require.Contains(t, rr.Unavailable["steps.cut"], trace+" is truncated")
	for j, st := range rt.Steps[:len(rt.Steps)-1] {
		s := StepsOf(rr)[j]
		require.Equal(t, st.Step, s.Step)
		require.False(t, s.HaveComm(), "step %d", s.Step)
		require.Equal(t, why, s.CommUnavailable)
		require.Zero(t, s.Communication)
		require.Zero(t, s.Free, "free is not window minus computing: that is only an upper bound")
		require.Truef(t, closeEnough(st.ComputingUs, us(s.Computing)), "step %d computing: truth %v, npuprof %v", st.Step, st.ComputingUs, us(s.Computing))
		require.Greater(t, s.Window, s.Computing, "step %d: the window spans the compute kernels", s.Step)
		require.Greater(t, s.Tasks, 0)
	}

	for i := range 2 {
		rr, rt := res.Ranks[i], truth.Ranks[i]
		for _, k := range StepCommKeys {
			require.NotContains(t, rr.Unavailable, k)
		}
		require.Len(t, StepsOf(rr), len(rt.Steps))
		for j, st := range rt.Steps {
			s := StepsOf(rr)[j]
			require.True(t, s.HaveComm())
			require.Greater(t, st.CommunicationUs, 0.0)
			require.Truef(t, closeEnough(st.CommunicationUs, us(s.Communication)), "rank %d step %d: truth %v, npuprof %v", i, st.Step, st.CommunicationUs, us(s.Communication))
			require.Truef(t, closeEnough(st.FreeUs, us(s.Free)), "rank %d step %d free: truth %v, npuprof %v", i, st.Step, st.FreeUs, us(s.Free))
		}
	}

	// per-step skew: computing over 3 ranks; communication and free are
	// measured on 2 ranks only, fewer than skew needs, so they are absent
	require.NotNil(t, SkewOf(res.Cluster))
	// (the last step is on 2 ranks only, rank 2 left it out: no skew)
	require.Len(t, SkewOf(res.Cluster).Steps, len(rt.Steps)-1)
	for step, stats := range SkewOf(res.Cluster).Steps {
		var names []string
		for _, st := range stats {
			names = append(names, st.Quantity)
		}
		require.Equal(t, []string{"computing"}, names, "step %d", step)
	}
}
