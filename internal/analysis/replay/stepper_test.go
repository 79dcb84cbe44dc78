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

// A gap that does not fit an item's 32 bits (4.3 s and longer) is held
// by its step: the replay runs it, a drop of an item before it moves it
// with its item, and a copy's edit of it leaves the original's.
func TestFarGap(t *testing.T) {
	tl := twoRanks()
	st := &tl.Ranks[0].Steps[0]
	const far = int64(5_000_000_000)
	st.setGap(2, far)
	require.Equal(t, far, st.gapOf(2))
	require.Equal(t, int64(0), st.gapOf(1))
	res, err := tl.Replay()
	require.NoError(t, err)
	require.Equal(t, []float64{float64(33 + far), 30}, res.RankStepNs)

	c := tl.Clone()
	cst := &c.Ranks[0].Steps[0]
	cst.editItems()
	cst.setGap(2, 7)
	require.Equal(t, int64(7), cst.gapOf(2))
	require.Equal(t, far, st.gapOf(2), "the original keeps its gap")
	cst.setGap(2, far+1)
	require.Equal(t, far+1, cst.gapOf(2))
	require.Equal(t, far, st.gapOf(2))

	var e editor
	e.marks(cst)
	e.dropItem[0] = true
	e.drop(cst)
	require.Len(t, cst.Items, 2)
	require.Equal(t, far+1, cst.gapOf(1), "the gap moved with its item")
	require.Equal(t, far, st.gapOf(2))
}
