package replay

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bytes put in a spill file read back as they were put, from several
// writers at once; nothing is put for a nil spill or empty bytes.
func TestSpillReadsBack(t *testing.T) {
	s := NewSpill()
	require.NotNil(t, s)
	_, ok := (*Spill)(nil).Put([]byte{1})
	require.False(t, ok)
	_, ok = s.Put(nil)
	require.False(t, ok)
	var wg sync.WaitGroup
	refs := make([]Ref, 64)
	want := make([][]byte, len(refs))
	for i := range refs {
		want[i] = make([]byte, 1+i*37)
		for j := range want[i] {
			want[i][j] = byte(i*7 + j)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok := s.Put(want[i])
			require.True(t, ok)
			refs[i] = r
		}()
	}
	wg.Wait()
	var buf []byte
	for i, r := range refs {
		require.True(t, r.Spilled())
		buf = r.Read(buf)
		require.Equal(t, want[i], buf)
	}
	require.False(t, Ref{}.Spilled())
}

// A spilled timeline's steps read back as they were (a gap of 5 s, the -1
// and 0 of Ready and End, a negative arrival), it replays as the timeline
// on the heap does, an edit of a copy's spilled step leaves the
// original's, and a copy moved to the spill file (Timeline.Spill) reads
// and replays as before.
func TestSpilledTimelineSameAsOnHeap(t *testing.T) {
	defer func(n int) { decodedMaxBytes = n }(decodedMaxBytes)
	decodedMaxBytes = 0 // kept encoded, so that the steps are spilled
	const far = int64(5_000_000_000)
	lines := func() []*RankLine {
		tl := twoRanks()
		l := tl.Ranks[0]
		var o open
		l.open(&l.Steps[0], &o)
		o.Items[2].Gap = far
		o.Colls[0].Ready, o.Colls[0].End, o.Colls[0].Arrive = -1, 0, -3
		l.store(&l.Steps[0], &o)
		for _, l := range tl.Ranks {
			// a second step, as the first
			st := l.Steps[0]
			st.Anchor += 2 * far
			l.setItems(&st, l.StepItems(0))
			setColls(&st, l.StepColls(0))
			l.Steps = append(l.Steps, st)
		}
		return tl.Ranks
	}
	heap, spilled := lines(), lines()
	s := NewSpill()
	for _, l := range spilled {
		l.Spill(s)
		for k := range l.Steps {
			require.True(t, l.Steps[k].itemsAt.Spilled() && l.Steps[k].collsAt.Spilled())
			require.Nil(t, l.Steps[k].ItemBytes)
		}
	}
	for i := range heap {
		for k := range heap[i].Steps {
			require.Equal(t, heap[i].StepItems(k), spilled[i].StepItems(k))
			require.Equal(t, heap[i].StepColls(k), spilled[i].StepColls(k))
		}
	}
	htl, stl := NewTimeline(heap), NewTimeline(spilled)
	require.Same(t, s, stl.spill)
	require.Nil(t, htl.spill)
	for i, l := range stl.Ranks {
		for k := range l.Steps {
			require.True(t, l.Steps[k].collsAt.Spilled(), "moved back after NewTimeline set Transfer")
			require.Equal(t, htl.Ranks[i].StepColls(k), l.StepColls(k))
		}
	}
	hr, err := htl.Replay()
	require.NoError(t, err)
	sr, err := stl.Replay()
	require.NoError(t, err)
	require.Equal(t, hr, sr)
	require.Equal(t, float64(33+far), sr.RankStepNs[0])

	fix := []Transform{RemoveKernels{Op: "k"}}
	hp, hc, herr := Predict(htl, fix)
	sp, sc, serr := Predict(stl, fix)
	require.NoError(t, serr)
	require.NoError(t, herr)
	require.Equal(t, hp, sp)
	hs, herr := PredictStep(htl, fix)
	ss, serr := PredictStep(stl, fix)
	require.Equal(t, herr, serr)
	require.Equal(t, hs, ss)
	require.Less(t, sp.AfterNs, sp.BeforeNs)
	{
		sc.Spill()
		for i, l := range sc.Ranks {
			for k := range l.Steps {
				require.Nil(t, l.Steps[k].ItemBytes, "the copy's edited step is spilled")
				require.Equal(t, hc.Ranks[i].StepItems(k), l.StepItems(k))
				require.Equal(t, hc.Ranks[i].StepColls(k), l.StepColls(k))
			}
		}
		hr2, err := hc.Replay()
		require.NoError(t, err)
		sr2, err := sc.Replay()
		require.NoError(t, err)
		require.Equal(t, hr2, sr2)
	}

	c := stl.Clone()
	cl := c.Ranks[0]
	var co open
	cl.open(&cl.Steps[0], &co)
	co.Items[2].Gap = 7
	cl.store(&cl.Steps[0], &co)
	require.Equal(t, int64(7), cl.StepItems(0)[2].Gap)
	require.Equal(t, far, stl.Ranks[0].StepItems(0)[2].Gap, "the original keeps its gap")
	require.True(t, stl.Ranks[0].Steps[0].itemsAt.Spilled())
	again, err := stl.Replay()
	require.NoError(t, err)
	require.Equal(t, sr, again)
}

// A spilled step longer than a cursor's window (windowBytes,
// collWindowBytes) is read through the window as it is on the heap: items
// and collectives cut at the window's edge, every varint long; the replay and a stepped prediction, whose
// edited steps go to a file of their own, equal the heap's.
func TestWindowedCursorSameAsOnHeap(t *testing.T) {
	defer func(n int) { decodedMaxBytes = n }(decodedMaxBytes)
	decodedMaxBytes = 0
	const n = 3 * windowBytes / 8
	lines := func() []*RankLine {
		g := []Group{{Name: "tp", Members: []int{0, 1}}}
		var out []*RankLine
		for r := range 2 {
			items := make([]Item, n)
			for i := range items {
				items[i] = Item{Dur: int64(1_000_003 * (i + r)), Gap: int64(7_777_777_777 * (i % 5)), Tokens: int32(i % 300), Coll: -1}
				if i%4 == 0 {
					items[i].Op = 2 // an expert op: rebalanced below
				}
			}
			// collectives longer than their window too, each after the
			// previous one of its group ends
			colls := make([]Coll, 3*collWindowBytes/8)
			for ci := range colls {
				colls[ci] = Coll{Pos: int32(ci * n / len(colls)), Type: 1, Arrive: int64(3_333_333_333 * ((ci + r) % 3)), Dur: int64(15_000_000_000 - r), Tail: int64(ci)}
			}
			items[n/2] = Item{Kind: Wait, Coll: int16(len(colls) / 3)}
			out = append(out, stepLine(r, []string{"k", "allreduce", "GroupedMatmul"}, g, Step{Anchor: 100, Tail: 3}, items, colls))
		}
		return out
	}
	heap, spilled := lines(), lines()
	s := NewSpill()
	for _, l := range spilled {
		require.Greater(t, len(l.Steps[0].ItemBytes), 2*windowBytes)
		require.Greater(t, len(l.Steps[0].CollBytes), 2*collWindowBytes)
		l.Spill(s)
	}
	htl, stl := NewTimeline(heap), NewTimeline(spilled)
	for i, l := range stl.Ranks {
		var buf []byte
		c := l.cursorIn(&l.Steps[0], &buf)
		want := htl.Ranks[i].StepItems(0)
		var it Item
		for j := range want {
			c.next(&it)
			require.Equal(t, want[j], it, "item %d", j)
		}
		require.Equal(t, windowBytes, cap(buf))
		cc := collCursorIn(&l.Steps[0], &buf)
		wantc := htl.Ranks[i].StepColls(0)
		var co Coll
		for j := range wantc {
			cc.next(&co)
			co.Seq = wantc[j].Seq
			require.Equal(t, wantc[j], co, "collective %d", j)
		}
	}
	hr, err := htl.Replay()
	require.NoError(t, err)
	sr, err := stl.Replay()
	require.NoError(t, err)
	require.Equal(t, hr, sr)
	for i, fix := range [][]Transform{{RemoveKernels{Op: "k"}}, {RebalanceExperts{}}} {
		hp, herr := PredictStep(htl, fix)
		sp, serr := PredictStep(stl, fix)
		require.NoError(t, herr)
		require.NoError(t, serr)
		require.Equal(t, hp, sp)
		if i == 0 {
			require.Less(t, sp.AfterNs, sp.BeforeNs)
		}
	}
}

// Lines built alike share their op names and dictionary (shareTables),
// and an edit of one (an op interned, an entry added) leaves the other's.
func TestBuiltLinesShareTables(t *testing.T) {
	mk := func() *RankLine {
		l := &RankLine{Ops: []string{"k", "allreduce", "GroupedMatmul"}, Dict: []Entry{{Op: 0}, {Op: 2, Tokens: 8}}}
		l.classify()
		shareTables(l)
		return l
	}
	a, b := mk(), mk()
	require.Same(t, &a.Ops[0], &b.Ops[0])
	require.Same(t, &a.Dict[0], &b.Dict[0])
	require.Equal(t, len(a.Ops), cap(a.Ops))
	require.Equal(t, len(a.Dict), cap(a.Dict))
	a.intern("SwiGlu")
	a.entry(&Item{Op: 3})
	require.Len(t, b.Ops, 3)
	require.Len(t, b.Dict, 2)
	require.Equal(t, []string{"k", "allreduce", "GroupedMatmul"}, b.Ops)
	require.Equal(t, opExpert, b.classes[2]&opExpert)
}
