package traceview

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

type testFlow struct {
	k   flowKey
	id  int64
	end bool
}

// naiveJoin is the flow join's contract written as plainly as possible:
// a later op at a place wins; of the starts with one id, the one at the
// greatest place wins; an end is kept when that start is at an op; a
// slice gets one link per kept end at its place, in file order.
func naiveJoin(flows []testFlow, ops, slicesAt []flowKey) [][2]int32 {
	opAt := map[flowKey]int32{}
	for i, k := range ops {
		opAt[k] = int32(i)
	}
	best := map[int64]flowKey{}
	for _, f := range flows {
		if f.end {
			continue
		}
		if b, ok := best[f.id]; !ok || f.k.cmp(b) > 0 {
			best[f.id] = f.k
		}
	}
	type kept struct {
		k  flowKey
		op int32
	}
	var ends []kept
	for _, f := range flows {
		if !f.end {
			continue
		}
		b, ok := best[f.id]
		if !ok {
			continue
		}
		if op, ok := opAt[b]; ok {
			ends = append(ends, kept{f.k, op})
		}
	}
	var links [][2]int32
	for i, k := range slicesAt {
		for _, e := range ends {
			if e.k == k {
				links = append(links, [2]int32{e.op, int32(i)})
			}
		}
	}
	return links
}

// TestFlowJoinMatchesNaive checks the hash-table join against naiveJoin on
// random flows crowded onto few places and ids (duplicate places, ids with
// several starts, ends without starts, starts without ops), with part of
// the flows in a later part's segment, numbered differently.
func TestFlowJoinMatchesNaive(t *testing.T) {
	t.Run("dense", testFlowJoin)
	// threads numbered through a map, as when a trace has many tids
	defer func(n int) { maxDenseTids = n }(maxDenseTids)
	maxDenseTids = 0
	t.Run("map", testFlowJoin)
}

func testFlowJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() flowKey {
		return flowKey{uint16(rng.IntN(3)), uint32(rng.IntN(3)), int64(rng.IntN(6)) - 2}
	}
	for iter := 0; iter < 500; iter++ {
		n := rng.IntN(60)
		flows := make([]testFlow, n)
		for i := range flows {
			flows[i] = testFlow{key(), int64(rng.IntN(10)) - 3, rng.IntN(2) == 0}
		}
		ops := make([]flowKey, rng.IntN(30))
		for i := range ops {
			ops[i] = key()
		}
		at := make([]flowKey, rng.IntN(30))
		for i := range at {
			at[i] = key()
		}
		want := naiveJoin(flows, ops, at)

		rd := newReader(nil, &model.Syms{})
		rd.pids, rd.tids = make([]int64, 3), make([]int64, 3)
		// a later part numbers pids and tids in reverse
		cut := 0
		if n > 0 {
			cut = rng.IntN(n + 1)
		}
		o := newReader(nil, &model.Syms{})
		for i, f := range flows {
			e := uint64(0)
			if f.end {
				e = 1
			}
			if i < cut {
				rd.addFlow(f.k.pid, f.k.tid, f.k.ts, f.id, e)
			} else {
				o.addFlow(2-f.k.pid, 2-f.k.tid, f.k.ts, f.id, e)
			}
		}
		rd.mergeFlows(o, []uint16{2, 1, 0}, []uint32{2, 1, 0})
		var got [][2]int32
		if rd.nFlows > rd.nFlowEnds {
			j := rd.decodeFlows()
			for i, k := range ops {
				j.op(k, int32(i))
			}
			j.resolve()
			for i, k := range at {
				j.each(k, func(op int32) { got = append(got, [2]int32{op, int32(i)}) })
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: links %v, want %v", iter, got, want)
		}
	}
}

// TestFindTS: ranges of equal ts in a sorted list, looked up forward,
// backward and far ahead of the cursor.
func TestFindTS(t *testing.T) {
	var l []int64
	for ts := int64(0); ts < 100; ts++ {
		for k := int64(0); k < ts%3; k++ {
			l = append(l, ts)
		}
	}
	pos := 0
	for _, ts := range []int64{0, 1, 1, 2, 5, 4, 99, 50, 51, 3, 98, 100, -1, 60} {
		i, j := findTS(l, &pos, ts)
		wi, _ := slices.BinarySearch(l, ts)
		wj := wi
		for wj < len(l) && l[wj] == ts {
			wj++
		}
		if i != wi || j != wj {
			t.Fatalf("ts %d: [%d, %d), want [%d, %d)", ts, i, j, wi, wj)
		}
	}
}

// TestSortIDs: nearly sorted (insertion) and far from sorted (handed
// over) ids come out sorted with their ops, equal ids in their order.
func TestSortIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, far := range []bool{false, true} {
		id, op := make([]int64, 5000), make([]int32, 5000)
		want := make([]idRef, 5000)
		for i := range id {
			id[i], op[i] = int64(i), int32(i)
			if far || i%50 == 0 {
				id[i] = rng.Int64N(5000)
			}
			want[i] = idRef{id[i], op[i]}
		}
		slices.SortStableFunc(want, cmpIDRef)
		sortIDs(id, op)
		for i := range want {
			if id[i] != want[i].id || op[i] != want[i].v {
				t.Fatalf("far=%v: at %d: %d %d, want %d %d", far, i, id[i], op[i], want[i].id, want[i].v)
			}
		}
	}
}

// TestHCCLTypeFromNameDigitFree: build classifies an HCCL name by its part
// before the first digit (cached), which is right only while no collective
// type has a digit.
func TestHCCLTypeFromNameDigitFree(t *testing.T) {
	for _, typ := range model.HCCLTypes() {
		if strings.ContainsAny(typ, "0123456789") {
			t.Fatalf("HCCL type %q has a digit", typ)
		}
	}
	for _, name := range []string{"hcom_allReduce__586_0_1", "hcom_broadcast__483_0", "hcom_allReduce_AicpuKernel_503_X_1", "hcom_all2all_1", "hc0m_send", "HCOM_ALLTOALLV__1", "7", "", "hcom_reduceScatter_AivKernel__12_3"} {
		cut := name
		if i := strings.IndexAny(name, "0123456789"); i >= 0 {
			cut = name[:i]
		}
		if a, b := model.HCCLTypeFromName(name), model.HCCLTypeFromName(cut); a != b {
			t.Errorf("%q: %q, but %q before its first digit", name, a, b)
		}
	}
}

// keptDecoder reads a log, its later parts' segments included, as a
// decoder does, and leaves every chunk in place for the decoder that
// follows it (which drops them).
func TestKeptDecoderLeavesTheLog(t *testing.T) {
	var lg, seg plog
	for i := range 3000 { // more than one chunk
		lg.add(0, 0, int64(i), 1, uint32(i), 0, -1, 0)
	}
	for i := range 5 {
		seg.add(0, 1, int64(i), 2, uint32(i), 0, -1, 0)
	}
	lg.segs = []logSeg{{chunks: seg.chunks, tmap: []uint32{7, 8}, names: []uint32{10, 11, 12, 13, 14}}}
	require.Greater(t, len(lg.chunks), 1)
	read := func(d decoder) (n int, last slice) {
		var s slice
		for d.next(&s) {
			n, last = n+1, s
		}
		return n, last
	}
	for range 2 {
		n, last := read(keptDecoder(&lg))
		require.Equal(t, 3005, n)
		require.Equal(t, slice{tid: 8, ts: 4, dur: 2, name: 14, stream: -1, modelID: 4294967295}, last)
	}
	for _, c := range append(slices.Clone(lg.chunks), lg.segs[0].chunks...) {
		require.NotNil(t, c, "a chunk was dropped")
	}
	n, _ := read(newDecoder(&lg))
	require.Equal(t, 3005, n)
	require.Nil(t, lg.chunks[0], "the decoder drops what it decoded")
}

// release drops the interner's tables; the names it interned still read
// back, from the rank's table.
func TestInternerRelease(t *testing.T) {
	var syms model.Syms
	in := newInterner(&syms)
	a, b := in.id([]byte("aclnnAdd_AddAiCore_Add")), in.id([]byte("short"))
	in.release()
	require.Nil(t, in.tab)
	require.Equal(t, "aclnnAdd_AddAiCore_Add", in.str(a))
	require.Equal(t, "short", in.str(b))
}
