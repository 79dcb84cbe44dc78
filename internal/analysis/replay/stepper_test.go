package replay

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// stepLine is a rank's line of one step of items and collectives.
func stepLine(rank int, ops []string, g []Group, st Step, items []Item, colls []Coll) *RankLine {
	l := &RankLine{Rank: rank, Ops: ops, Groups: g}
	l.setItems(&st, items)
	setColls(&st, colls)
	l.Steps = []Step{st}
	return l
}

// twoRanks is a step of two TP ranks: each runs a kernel, issues one
// all-reduce and waits on it, rank 0 then runs another kernel.
func twoRanks() *Timeline {
	g := []Group{{Name: "tp", Members: []int{0, 1}}}
	r0 := stepLine(0, []string{"k", "allreduce"}, g, Step{Anchor: 100},
		[]Item{{Dur: 10, Coll: -1}, {Kind: Wait, Coll: 0}, {Dur: 5, Coll: -1}},
		[]Coll{{Pos: 1, Type: 1, Arrive: 2, Dur: 15, Tail: 1}})
	r1 := stepLine(1, []string{"k", "allreduce"}, g, Step{Anchor: 100, Tail: 3},
		[]Item{{Dur: 20, Coll: -1}, {Kind: Wait, Coll: 0}},
		[]Coll{{Pos: 1, Type: 1, Dur: 7}})
	return NewTimeline([]*RankLine{r1, r0})
}

// The collective starts when its last member arrives and lasts the
// shortest duration a member measured; each rank's wait ends after it.
func TestReplayWaitsForLastArriver(t *testing.T) {
	tl := twoRanks()
	require.Equal(t, int64(7), tl.Ranks[0].StepColls(0)[0].Transfer)
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
	l := tl.Ranks[0]
	var o open
	l.open(&l.Steps[0], &o)
	o.Items[1], o.Items[0] = o.Items[0], o.Items[1]
	o.Colls[0].Pos = 2
	l.store(&l.Steps[0], &o)
	_, err := tl.Replay()
	require.ErrorContains(t, err, "step 0 cannot finish")
}

// A step's items and collectives read back as they were stored, whatever
// their values (a gap of 4.3 s and longer, the -1 and 0 of Ready and
// End, a negative arrival); an edit of a copy's step writes new bytes and
// leaves the original's; a drop of an item before a gap moves the gap
// with its item.
func TestFarGap(t *testing.T) {
	tl := twoRanks()
	l := tl.Ranks[0]
	const far = int64(5_000_000_000)
	var o open
	l.open(&l.Steps[0], &o)
	o.Items[2].Gap = far
	o.Colls[0].Ready, o.Colls[0].End, o.Colls[0].Arrive = -1, l.Steps[0].Anchor+far, -3
	l.store(&l.Steps[0], &o)
	require.Equal(t, o.Items, l.StepItems(0))
	require.Equal(t, o.Colls, l.StepColls(0))
	require.Equal(t, int64(0), l.StepItems(0)[1].Gap)
	res, err := tl.Replay()
	require.NoError(t, err)
	require.Equal(t, []float64{float64(33 + far), 30}, res.RankStepNs)

	c := tl.Clone()
	cl := c.Ranks[0]
	var co open
	cl.open(&cl.Steps[0], &co)
	co.Items[2].Gap = 7
	cl.store(&cl.Steps[0], &co)
	require.Equal(t, int64(7), cl.StepItems(0)[2].Gap)
	require.Equal(t, far, l.StepItems(0)[2].Gap, "the original keeps its gap")
	co.Items[2].Gap = far + 1
	cl.store(&cl.Steps[0], &co)
	require.Equal(t, far+1, cl.StepItems(0)[2].Gap)
	require.Equal(t, far, l.StepItems(0)[2].Gap)

	var e editor
	e.marks(&co)
	e.dropItem[0] = true
	e.drop(&co)
	cl.store(&cl.Steps[0], &co)
	require.Len(t, cl.StepItems(0), 2)
	require.Equal(t, far+1, cl.StepItems(0)[1].Gap, "the gap moved with its item")
	require.Equal(t, far, l.StepItems(0)[2].Gap)
}
