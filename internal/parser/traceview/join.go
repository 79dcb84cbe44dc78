package traceview

import (
	"cmp"
	"slices"
	"sort"
)

// Decoding the logs, and the torch_to_npu flow join.

// logSeg is a process log that a later part of a split file read: its
// records are in that reader's numbering, translated by tmap (tid index)
// and names (name id) when decoded; its ts deltas start from 0.
type logSeg struct {
	chunks [][]byte
	tmap   []uint32
	names  []uint32
}

// flowSeg is the flow log of a later part of a split file, in that
// reader's pid and tid numbering.
type flowSeg struct {
	chunks [][]byte
	pmap   []uint16
	tmap   []uint32
}

// slice is one decoded log record.
type slice struct {
	flags    byte
	tid      uint32
	ts, dur  int64
	name, tt uint32
	stream   int64
	modelID  uint32
}

// decoder walks one process log: its own chunks, then its segments.
type decoder struct {
	chunks [][]byte
	b      []byte // the chunk being decoded, from index at
	at     int
	ts     int64
	segs   []logSeg
	tmap   []uint32
	names  []uint32
}

func newDecoder(l *plog) decoder { return decoder{chunks: l.chunks, segs: l.segs} }

// keptDecoder is a decoder of l that leaves its chunks in place (a
// decoder drops each chunk it has decoded), for a pass that counts
// before the one that builds.
func keptDecoder(l *plog) decoder {
	segs := make([]logSeg, len(l.segs))
	for i, g := range l.segs {
		g.chunks = slices.Clone(g.chunks)
		segs[i] = g
	}
	return decoder{chunks: slices.Clone(l.chunks), segs: segs}
}

// getUvarint decodes the unsigned varint at b[i:] (written by this
// package, so well formed) and returns it and the index after it. Small
// enough to be inlined.
func getUvarint(b []byte, i int) (uint64, int) {
	var x uint64
	var sh uint
	for {
		c := b[i]
		i++
		if c < 0x80 {
			return x | uint64(c)<<(sh&63), i
		}
		x |= uint64(c&0x7f) << (sh & 63)
		sh += 7
	}
}

// getVarint is getUvarint for a zig-zag signed varint.
func getVarint(b []byte, i int) (int64, int) {
	u, i := getUvarint(b, i)
	return int64(u>>1) ^ -int64(u&1), i
}

func (d *decoder) next(s *slice) bool {
	for d.at >= len(d.b) {
		if len(d.chunks) == 0 {
			if len(d.segs) == 0 {
				return false
			}
			g := d.segs[0]
			d.segs[0] = logSeg{}
			d.segs = d.segs[1:]
			d.chunks, d.tmap, d.names, d.ts = g.chunks, g.tmap, g.names, 0
			continue
		}
		// the log's chunk list is shared: dropping the reference frees a
		// chunk as soon as it is decoded
		d.b, d.at, d.chunks[0], d.chunks = d.chunks[0], 0, nil, d.chunks[1:]
	}
	b, i := d.b, d.at
	flags := b[i]
	s.flags = flags
	v, i := getUvarint(b, i+1)
	s.tid = uint32(v)
	x, i := getVarint(b, i)
	d.ts += x
	s.ts = d.ts
	v, i = getUvarint(b, i)
	s.dur = int64(v)
	v, i = getUvarint(b, i)
	s.name = uint32(v)
	s.tt, s.stream, s.modelID = 0, -1, 4294967295
	if flags&(fTaskType|fStream|fModel) != 0 {
		if flags&fTaskType != 0 {
			v, i = getUvarint(b, i)
			s.tt = uint32(v)
		}
		if flags&fStream != 0 {
			s.stream, i = getVarint(b, i)
		}
		if flags&fModel != 0 {
			v, i = getUvarint(b, i)
			s.modelID = uint32(v)
		}
	}
	d.at = i
	if d.tmap != nil {
		s.tid = d.tmap[s.tid]
		s.name = d.names[s.name]
		if flags&fTaskType != 0 {
			s.tt = d.names[s.tt]
		}
	}
	return true
}

// flowKey locates a slice: process, thread and start.
type flowKey struct {
	pid uint16
	tid uint32
	ts  int64
}

func (a flowKey) cmp(b flowKey) int {
	if a.pid != b.pid {
		return int(a.pid) - int(b.pid)
	}
	if a.tid != b.tid {
		if a.tid < b.tid {
			return -1
		}
		return 1
	}
	if a.ts != b.ts {
		if a.ts < b.ts {
			return -1
		}
		return 1
	}
	return 0
}

// findTS returns the range [i, j) of the entries equal to ts in a
// thread's sorted ts list. Lookups mostly come in time order, so it walks
// forward from *pos (where the last lookup's range began) and
// binary-searches only when time goes back or the walk gets long.
func findTS(l []int64, pos *int, ts int64) (int, int) {
	i := lowerFrom(l, *pos, ts)
	*pos = i
	j := i
	for j < len(l) && l[j] == ts {
		j++
	}
	return i, j
}

// lowerFrom is the index of the first element of the sorted l not below
// v, found by walking forward from pos (lookups come mostly in order) and
// binary-searching when v lies before pos or the walk gets long.
func lowerFrom[T cmp.Ordered](l []T, pos int, v T) int {
	i := min(pos, len(l))
	if i > 0 && l[i-1] >= v {
		i, _ = slices.BinarySearch(l[:i], v)
		return i
	}
	for n := 0; i < len(l) && l[i] < v; n++ {
		if n == 16 {
			k, _ := slices.BinarySearch(l[i:], v)
			return i + k
		}
		i++
	}
	return i
}

// threadIndex numbers the (pid index, tid index) threads that have flow
// events: a dense table per pid when the tids are few, a map otherwise.
type threadIndex struct {
	nTids int
	rows  [][]int32 // per pid index: per tid index, thread + 1 (0: none)
	m     map[uint64]int32
	keys  []flowKey // per thread: pid and tid (ts unused)
}

// maxDenseTids is the most tids a dense table is made for (a variable for
// tests).
var maxDenseTids = 4096

func newThreadIndex(nPids, nTids int) threadIndex {
	x := threadIndex{nTids: nTids}
	if nTids <= maxDenseTids {
		x.rows = make([][]int32, nPids)
	}
	return x
}

// get returns the thread of pid and tid, -1 when it has none and add is
// false.
func (x *threadIndex) get(pid uint16, tid uint32, add bool) int32 {
	if x.rows != nil && int(pid) < len(x.rows) && int(tid) < x.nTids {
		row := x.rows[pid]
		if row == nil {
			if !add {
				return -1
			}
			row = make([]int32, x.nTids)
			x.rows[pid] = row
		}
		if t := row[tid]; t > 0 || !add {
			return t - 1
		}
		x.keys = append(x.keys, flowKey{pid: pid, tid: tid})
		row[tid] = int32(len(x.keys))
		return int32(len(x.keys) - 1)
	}
	if x.m == nil {
		x.m = map[uint64]int32{}
	}
	k := uint64(pid)<<32 | uint64(tid)
	if t, ok := x.m[k]; ok {
		return t
	}
	if !add {
		return -1
	}
	x.keys = append(x.keys, flowKey{pid: pid, tid: tid})
	x.m[k] = int32(len(x.keys) - 1)
	return int32(len(x.keys) - 1)
}

// flowCounts counts a reader's flow starts and ends per thread (pid and
// tid index), so that the join is laid out without a counting pass.
type flowCounts struct {
	idx   map[uint64]int32
	keys  []uint64
	n     [][2]int32 // per thread: starts, ends
	last  [2]uint64  // the last thread of a start and of an end
	lastI [2]int32   // its index + 1 (0: none yet)
}

func (c *flowCounts) add(pid uint16, tid uint32, end uint64, n int32) {
	key := uint64(pid)<<32 | uint64(tid)
	i := c.lastI[end] - 1
	if i < 0 || c.last[end] != key {
		if c.idx == nil {
			c.idx = map[uint64]int32{}
		}
		var ok bool
		if i, ok = c.idx[key]; !ok {
			i = int32(len(c.keys))
			c.idx[key] = i
			c.keys = append(c.keys, key)
			c.n = append(c.n, [2]int32{})
		}
		c.last[end], c.lastI[end] = key, i+1
	}
	c.n[i][end] += n
}

// mergeFlows appends the flows of o, the reader of a later part of the
// file, whose pid and tid indexes are pmap and tmap in rd's numbering.
func (rd *reader) mergeFlows(o *reader, pmap []uint16, tmap []uint32) {
	if o.nFlows == 0 {
		return
	}
	rd.flowSegs = append(rd.flowSegs, flowSeg{chunks: o.flows.chunks, pmap: pmap, tmap: tmap})
	rd.nFlows += o.nFlows
	rd.nFlowEnds += o.nFlowEnds
	for i, key := range o.flowThreads.keys {
		pid, tid := pmap[key>>32], tmap[uint32(key)]
		rd.flowThreads.add(pid, tid, 0, o.flowThreads.n[i][0])
		rd.flowThreads.add(pid, tid, 1, o.flowThreads.n[i][1])
	}
}

// flowLog is one flow log: rd's own (no maps) or a later part's.
type flowLog struct {
	chunks [][]byte
	pmap   []uint16
	tmap   []uint32
}

// idRef pairs a ts with a value (byTS).
type idRef struct {
	id int64
	v  int32
}

func cmpIDRef(a, b idRef) int { return cmp.Compare(a.id, b.id) }

// sortIDs sorts the starts' ids, with their ops, by id, stably (equal
// ids keep their place order). Flow ids come nearly in order (a few out
// of place, not far), so an insertion sort does it in about one pass;
// past a budget of moves it hands over to sort.Stable.
func sortIDs(id []int64, op []int32) {
	moves, budget := 0, 8*len(id)
	for i := 1; i < len(id); i++ {
		if id[i] >= id[i-1] {
			continue
		}
		x, o, k := id[i], op[i], i
		for ; k > 0 && id[k-1] > x; k-- {
			id[k], op[k] = id[k-1], op[k-1]
		}
		id[k], op[k] = x, o
		if moves += i - k; moves > budget {
			sort.Stable(idsOps{id, op})
			return
		}
	}
}

// idsOps sorts ids with their ops (sort.Interface).
type idsOps struct {
	id []int64
	op []int32
}

func (x idsOps) Len() int           { return len(x.id) }
func (x idsOps) Less(a, b int) bool { return x.id[a] < x.id[b] }
func (x idsOps) Swap(a, b int) {
	x.id[a], x.id[b] = x.id[b], x.id[a]
	x.op[a], x.op[b] = x.op[b], x.op[a]
}

// flowJoin resolves torch_to_npu flows: a flow start leaves a framework
// op (the op that starts at the start's place: pid, tid and ts), a flow
// end arrives at a device task or HCCL op (the slice that starts at the
// end's place), and the two are joined by the flow id. The rules (those
// of the earlier join, which decoded every flow into a 32-byte record and
// sorted them all twice):
//   - a later op at the same place as an earlier one wins;
//   - of several starts with one id, the one at the greatest place
//     (ordered by pid index, tid index, ts) wins;
//   - an end whose start is at no op is dropped;
//   - a slice at a place gets one link per end there, in file order.
//
// Places are looked up per thread, in ts lists walked forward (slices and
// flows of a thread come in time order), so the join touches memory in
// order. The flow logs stay encoded (about 10 bytes a flow) and are
// decoded once per step: starts are held as 20 bytes (ts, id, op; the
// position is the index), ends only once resolved, as 12 bytes (ts, op).
type flowJoin struct {
	thr  threadIndex
	logs []flowLog
	// the starts, grouped by thread in place order, sorted by ts; op is
	// the op at the start's place, -1 when none
	s   flowSide
	sID []int64 // the starts' ids
	// the resolved ends, grouped by thread, sorted by ts
	e   flowSide
	pos []int // per thread: the cursor of findTS
}

// flowSide is one side of the flows, starts or ends, in flat arrays:
// thread t's from base[t], n[t] of them.
type flowSide struct {
	base, n []int32
	ts      []int64
	op      []int32
}

// walk passes: what walk does with each flow
const (
	passStarts = iota // place the starts (s.ts, sID)
	passEnds          // resolve and place the ends (e.ts, e.op) through ids
)

// walk decodes the flow logs in file order for one pass; the last pass
// releases the chunks as they are decoded. It reports, for passEnds, how
// many ends lead to an op.
func (j *flowJoin) walk(pass int, ids []int64, ops []int32) int {
	// the last thread of a start and of an end (they alternate: starts
	// on a Python thread, ends on device streams)
	var lastKey [2]uint64
	lastT := [2]int32{-1, -1}
	kept, pos := 0, 0
	for li := range j.logs {
		g := &j.logs[li]
		var ts, id int64
		for k, b := range g.chunks {
			if pass == passEnds {
				g.chunks[k] = nil
			}
			for i := 0; i < len(b); {
				var pe, tid, dts, did uint64
				pe, i = getUvarint(b, i)
				tid, i = getUvarint(b, i)
				dts, i = getUvarint(b, i)
				did, i = getUvarint(b, i)
				ts += int64(dts>>1) ^ -int64(dts&1)
				id += int64(did>>1) ^ -int64(did&1)
				end := pe & 1
				if (pass == passStarts) == (end == 1) {
					continue
				}
				pid, tx := uint16(pe>>1), uint32(tid)
				if g.pmap != nil {
					pid, tx = g.pmap[pid], g.tmap[tx]
				}
				key := uint64(pid)<<32 | uint64(tx)
				t := lastT[end]
				if t < 0 || key != lastKey[end] {
					t = j.thr.get(pid, tx, true)
					lastKey[end], lastT[end] = key, t
				}
				switch pass {
				case passStarts:
					p := j.s.base[t] + j.s.n[t]
					j.s.n[t]++
					j.s.ts[p] = ts
					j.sID[p] = id
				case passEnds:
					// ends come in id order too, mostly
					x := lowerFrom(ids, pos, id)
					pos = x
					if x == len(ids) || ids[x] != id || ops[x] < 0 {
						continue
					}
					p := j.e.base[t] + j.e.n[t]
					j.e.n[t]++
					j.e.ts[p] = ts
					j.e.op[p] = ops[x]
					kept++
				}
			}
		}
		if pass == passEnds {
			g.chunks = nil
		}
	}
	return kept
}

// decodeFlows reads the flow starts of rd's logs (its own, then its
// segments); the ends are read by resolve.
func (rd *reader) decodeFlows() *flowJoin {
	j := &flowJoin{thr: newThreadIndex(len(rd.pids), len(rd.tids))}
	j.logs = append(j.logs, flowLog{chunks: rd.flows.chunks})
	for _, g := range rd.flowSegs {
		j.logs = append(j.logs, flowLog(g))
	}
	rd.flows.chunks, rd.flowSegs = nil, nil
	for i, key := range rd.flowThreads.keys {
		t := j.thr.get(uint16(key>>32), uint32(key), true)
		for int(t) >= len(j.s.n) {
			j.s.n, j.e.n = append(j.s.n, 0), append(j.e.n, 0)
		}
		j.s.n[t] += rd.flowThreads.n[i][0]
		j.e.n[t] += rd.flowThreads.n[i][1]
	}
	rd.flowThreads = flowCounts{}
	nThr := len(j.thr.keys)
	// starts are laid out in place order: threads by pid and tid index
	order := make([]int32, nThr)
	for t := range order {
		order[t] = int32(t)
	}
	slices.SortFunc(order, func(a, b int32) int { return j.thr.keys[a].cmp(j.thr.keys[b]) })
	j.s.base, j.e.base = make([]int32, nThr), make([]int32, nThr)
	var ns, ne int32
	for _, t := range order {
		j.s.base[t], j.e.base[t] = ns, ne
		ns += j.s.n[t]
		ne += j.e.n[t]
		j.s.n[t] = 0
	}
	if int(ns)*20 >= bigArrayBytes/4 {
		// the starts (20 bytes each) are not allocated on the scan's
		// garbage and the interner's tables, which build dropped
		collect()
	}
	j.s.ts = make([]int64, ns)
	j.sID = make([]int64, ns)
	j.walk(passStarts, nil, nil)
	for t := range order {
		b, n := j.s.base[t], j.s.n[t]
		ts := j.s.ts[b : b+n]
		if !slices.IsSorted(ts) {
			ids := j.sID[b : b+n]
			pairs := byTS(ts, func(i int) int32 { return int32(i) })
			sorted := make([]int64, n)
			for i, pr := range pairs {
				sorted[i] = ids[pr.v]
				ts[i] = pr.id
			}
			copy(ids, sorted)
		}
	}
	j.s.op = make([]int32, ns)
	for i := range j.s.op {
		j.s.op[i] = -1
	}
	j.pos = make([]int, nThr)
	return j
}

// op records that framework op i starts at k.
func (j *flowJoin) op(k flowKey, i int32) {
	b, a, e := j.find(k, &j.s)
	j.setOp(b, a, e, i)
}

// setOp records that op i starts where k's starts lie (find's b, a
// and e in j.s).
func (j *flowJoin) setOp(b int32, a, e int, i int32) {
	for ; a < e; a++ {
		j.s.op[b+int32(a)] = i
	}
}

// forgetOps forgets the ops recorded (op, setOp), for build to number
// them again.
func (j *flowJoin) forgetOps() {
	for i := range j.s.op {
		j.s.op[i] = -1
	}
	clear(j.pos)
}

// find says where k's entries lie in side d's ts: from b+a to b+e, a == e
// when there is none.
func (j *flowJoin) find(k flowKey, d *flowSide) (b int32, a, e int) {
	t := j.thr.get(k.pid, k.tid, false)
	if t < 0 {
		return 0, 0, 0
	}
	b = d.base[t]
	a, e = findTS(d.ts[b:b+d.n[t]], &j.pos[t], k.ts)
	return b, a, e
}

// resolve joins the ends to the ops, once every op is known; it reports
// how many ends lead to an op.
func (j *flowJoin) resolve() int {
	j.s.ts = nil
	// the starts in id order (often nearly their file order: torch_npu's
	// flow id is a device timestamp)
	id, op := j.sID, j.s.op
	sortIDs(id, op)
	// per distinct id, in place: the op of the start at the greatest
	// place (the last of the id's, positions being in place order)
	k := 0
	for i := 0; i < len(id); k++ {
		x := i
		for i++; i < len(id) && id[i] == id[x]; i++ {
		}
		id[k], op[k] = id[x], op[i-1]
	}
	ids, ops := id[:k], op[:k]
	j.s.op, j.sID = nil, nil
	// the ends, each resolved through its id (ends come in id order too,
	// mostly: walk, and binary-search when the id goes back or the walk
	// gets long)
	var nEnds int32
	for t, n := range j.e.n {
		nEnds += n
		j.e.n[t] = 0
	}
	if int(nEnds)*12 >= bigArrayBytes/4 {
		// the starts' ts and ops are garbage (and the Python logs, when
		// the ops were summarized): the ends are not allocated on them
		collect()
	}
	j.e.ts = make([]int64, nEnds)
	j.e.op = make([]int32, nEnds)
	kept := j.walk(passEnds, ids, ops)
	if kept == 0 {
		j.e.ts, j.e.op = nil, nil
		return 0
	}
	for t := range j.e.base {
		b, n := j.e.base[t], j.e.n[t]
		ts := j.e.ts[b : b+n]
		if !slices.IsSorted(ts) {
			ops := j.e.op[b : b+n]
			pairs := byTS(ts, func(i int) int32 { return ops[i] })
			for i, pr := range pairs {
				ts[i], ops[i] = pr.id, pr.v
			}
		}
	}
	clear(j.pos)
	return kept
}

// endsOutside is how many resolved ends lie on threads of processes
// other than those skip reports.
func (j *flowJoin) endsOutside(skip func(pid uint16) bool) int {
	n := 0
	for t, c := range j.e.n {
		if !skip(j.thr.keys[t].pid) {
			n += int(c)
		}
	}
	return n
}

// byTS pairs each ts[i] with v(i), sorted by ts, stably: equal ts keep
// their file order.
func byTS(ts []int64, v func(i int) int32) []idRef {
	pairs := make([]idRef, len(ts))
	for i := range pairs {
		pairs[i] = idRef{ts[i], v(i)}
	}
	slices.SortStableFunc(pairs, cmpIDRef)
	return pairs
}

// each calls fn with the op of each end at k, in file order.
func (j *flowJoin) each(k flowKey, fn func(op int32)) {
	if j.e.ts == nil {
		return
	}
	b, a, e := j.find(k, &j.e)
	for ; a < e; a++ {
		fn(j.e.op[b+int32(a)])
	}
}
