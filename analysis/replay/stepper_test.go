package replay

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// twoRanks is a step of two TP ranks: each runs a kernel, issues one
// all-reduce and waits on it, rank 0 then runs another kernel.
func twoRanks() *Timeline {
	g := []Group{{Name: "tp", Members: []int{0, 1}}}
	r0 := &RankLine{Rank: 0, Ops: []string{"k", "allreduce"}, Groups: g, Steps: []Step{{Anchor: 100,
		Items: []Item{{Dur: 10, Coll: -1}, {Kind: Wait, Coll: 0}, {Dur: 5, Coll: -1}},
		Colls: []Coll{{Pos: 1, Type: 1, Arrive: 2, Dur: 15, Tail: 1}}}}}
	r1 := &RankLine{Rank: 1, Ops: []string{"k", "allreduce"}, Groups: g, Steps: []Step{{Anchor: 100, Tail: 3,
		Items: []Item{{Dur: 20, Coll: -1}, {Kind: Wait, Coll: 0}},
		Colls: []Coll{{Pos: 1, Type: 1, Dur: 7}}}}}
	return NewTimeline([]*RankLine{r1, r0})
}

// The collective starts when its last member arrives and lasts the
// shortest duration a member measured; each rank's wait ends after it.
func TestReplayWaitsForLastArriver(t *testing.T) {
	tl := twoRanks()
	require.Equal(t, int64(7), tl.Ranks[0].Steps[0].Colls[0].Transfer)
	res, err := tl.Replay()
	require.NoError(t, err)
	// rank 0 arrives at 12, rank 1 at 20: the op runs 20..27; rank 0
	// resumes at 28 and ends at 33, rank 1 at 27 with a 3 ns tail: 30.
	require.Equal(t, []float64{33, 30}, res.RankStepNs)
	require.Equal(t, 31.5, res.StepNs)
}

// A wait on a collective the stream issues after it never ends.
func TestReplayReportsAStepThatCannotFinish(t *testing.T) {
	tl := twoRanks()
	st := &tl.Ranks[0].Steps[0]
	st.Items[1], st.Items[0] = st.Items[0], st.Items[1]
	st.Colls[0].Pos = 2
	_, err := tl.Replay()
	require.ErrorContains(t, err, "step 0 cannot finish")
}
