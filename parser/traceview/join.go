package traceview

import (
	"cmp"
	"slices"
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
	b      []byte
	ts     int64
	segs   []logSeg
	tmap   []uint32
	names  []uint32
}

func newDecoder(l *plog) decoder { return decoder{chunks: l.chunks, segs: l.segs} }

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
			return x | uint64(c)<<sh, i
		}
		x |= uint64(c&0x7f) << sh
		sh += 7
	}
}

// getVarint is getUvarint for a zig-zag signed varint.
func getVarint(b []byte, i int) (int64, int) {
	u, i := getUvarint(b, i)
	return int64(u>>1) ^ -int64(u&1), i
}

func (d *decoder) next(s *slice) bool {
	for len(d.b) == 0 {
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
		d.b, d.chunks[0], d.chunks = d.chunks[0], nil, d.chunks[1:]
	}
	b := d.b
	flags := b[0]
	s.flags = flags
	v, i := getUvarint(b, 1)
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
	d.b = b[i:]
	if d.tmap != nil {
		s.tid = d.tmap[s.tid]
		s.name = d.names[s.name]
		if flags&fTaskType != 0 {
			s.tt = d.names[s.tt]
		}
	}
	return true
}

// flowDecoder walks a flow log (see addFlow), dropping each chunk once
// decoded.
type flowDecoder struct {
	chunks [][]byte
	b      []byte
	i      int
	ts, id int64
}

// next returns the next record: pe is the pid index << 1 | the end flag.
func (d *flowDecoder) next() (pe, tid uint64, ts, id int64, ok bool) {
	for d.i >= len(d.b) {
		if len(d.chunks) == 0 {
			return 0, 0, 0, 0, false
		}
		d.b, d.i, d.chunks[0], d.chunks = d.chunks[0], 0, nil, d.chunks[1:]
	}
	b, i := d.b, d.i
	pe, i = getUvarint(b, i)
	tid, i = getUvarint(b, i)
	dts, i := getVarint(b, i)
	did, i := getVarint(b, i)
	d.i = i
	d.ts += dts
	d.id += did
	return pe, tid, d.ts, d.id, true
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

// tsRef is one flow event of a thread: its ts, and for a start its index
// among the starts, for an end the op it leads to.
type tsRef struct {
	ts int64
	v  int32
}

// sortedByTS sorts a thread's events by ts, keeping file order among
// equal ts; they nearly always come in time order already.
func sortedByTS(l []tsRef) {
	for i := 1; i < len(l); i++ {
		if l[i].ts < l[i-1].ts {
			slices.SortStableFunc(l, func(a, b tsRef) int { return cmp.Compare(a.ts, b.ts) })
			return
		}
	}
}

// findTS returns the range [i, j) of the events at ts in a thread's
// sorted list. Lookups mostly come in time order, so it walks forward from
// *pos (where the last lookup's range began) and binary-searches only when
// time goes back or the walk gets long.
func findTS(l []tsRef, pos *int, ts int64) (int, int) {
	i := min(*pos, len(l))
	if i > 0 && l[i-1].ts >= ts {
		i, _ = slices.BinarySearchFunc(l[:i], ts, func(r tsRef, ts int64) int { return cmp.Compare(r.ts, ts) })
	} else {
		for n := 0; i < len(l) && l[i].ts < ts; n++ {
			if n == 16 {
				k, _ := slices.BinarySearchFunc(l[i:], ts, func(r tsRef, ts int64) int { return cmp.Compare(r.ts, ts) })
				i += k
				break
			}
			i++
		}
	}
	*pos = i
	j := i
	for j < len(l) && l[j].ts == ts {
		j++
	}
	return i, j
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
	} else {
		x.m = map[uint64]int32{}
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

// flowJoin resolves torch_to_npu flows: a flow start leaves a framework
// op (the op that starts at the start's place: pid, tid and ts), a flow
// end arrives at a device task or HCCL op (the slice that starts at the
// end's place), and the two are joined by the flow id. The rules (those
// of the earlier join, which sorted every flow record twice):
//   - a later op at the same place as an earlier one wins;
//   - of several starts with one id, the one at the greatest place
//     (ordered by pid index, tid index, ts) wins;
//   - an end whose start is at no op is dropped;
//   - a slice at a place gets one link per end there, in file order.
//
// Places are looked up per thread, in lists sorted by ts and walked
// forward (slices and flows of a thread come in time order), so the join
// touches memory in order rather than at random.
type flowJoin struct {
	thr threadIndex
	// starts, in file order
	sThr []int32
	sTS  []int64
	sID  []idRef // id and index, in file order until resolve
	sOp  []int32 // the op at the start's place, -1 when none
	// per thread: its starts (v: index into the above), then after
	// resolve its ends (v: the op), sorted by ts
	starts, ends [][]tsRef
	pos          []int // per thread: the cursor of findTS
	// ends, in file order, until resolved
	eThr []int32
	eTS  []int64
	eID  []int64
}

// decodeFlows reads the flow logs of rd (its own, then its segments).
func (rd *reader) decodeFlows() *flowJoin {
	nStarts, nEnds := rd.nFlows-rd.nFlowEnds, rd.nFlowEnds
	j := &flowJoin{
		thr:  newThreadIndex(len(rd.pids), len(rd.tids)),
		sThr: make([]int32, 0, nStarts),
		sTS:  make([]int64, 0, nStarts),
		sID:  make([]idRef, 0, nStarts),
		eThr: make([]int32, 0, nEnds),
		eTS:  make([]int64, 0, nEnds),
		eID:  make([]int64, 0, nEnds),
	}
	// the last thread looked up, for runs of one thread's flows
	lastPid, lastTid, lastT := uint16(0), uint32(0), int32(-1)
	add := func(pid uint16, tid uint32, ts, id int64, end bool) {
		if lastT < 0 || pid != lastPid || tid != lastTid {
			lastPid, lastTid, lastT = pid, tid, j.thr.get(pid, tid, true)
		}
		if end {
			j.eThr = append(j.eThr, lastT)
			j.eTS = append(j.eTS, ts)
			j.eID = append(j.eID, id)
			return
		}
		j.sID = append(j.sID, idRef{id, int32(len(j.sThr))})
		j.sThr = append(j.sThr, lastT)
		j.sTS = append(j.sTS, ts)
	}
	d := flowDecoder{chunks: rd.flows.chunks}
	for {
		pe, tid, ts, id, ok := d.next()
		if !ok {
			break
		}
		add(uint16(pe>>1), uint32(tid), ts, id, pe&1 == 1)
	}
	rd.flows.chunks = nil
	for i := range rd.flowSegs {
		g := &rd.flowSegs[i]
		d := flowDecoder{chunks: g.chunks}
		for {
			pe, tid, ts, id, ok := d.next()
			if !ok {
				break
			}
			add(g.pmap[pe>>1], g.tmap[tid], ts, id, pe&1 == 1)
		}
		rd.flowSegs[i] = flowSeg{}
	}
	rd.flowSegs = nil
	nThr := len(j.thr.keys)
	j.sOp = make([]int32, len(j.sTS))
	for i := range j.sOp {
		j.sOp[i] = -1
	}
	j.starts = groupByThread(nThr, j.sThr, func(i int) tsRef { return tsRef{j.sTS[i], int32(i)} })
	j.pos = make([]int, nThr)
	return j
}

// groupByThread returns, per thread, the events of thr (thread per event)
// in file order, made by ref, sorted by ts.
func groupByThread(nThr int, thr []int32, ref func(i int) tsRef) [][]tsRef {
	counts := make([]int, nThr)
	for _, t := range thr {
		if t >= 0 {
			counts[t]++
		}
	}
	all := make([]tsRef, 0, len(thr))
	lists := make([][]tsRef, nThr)
	for t, n := range counts {
		lists[t] = all[len(all) : len(all) : len(all)+n]
		all = all[:len(all)+n]
	}
	for i, t := range thr {
		if t >= 0 {
			lists[t] = append(lists[t], ref(i))
		}
	}
	for _, l := range lists {
		sortedByTS(l)
	}
	return lists
}

// op records that framework op i starts at k.
func (j *flowJoin) op(k flowKey, i int32) {
	t := j.thr.get(k.pid, k.tid, false)
	if t < 0 {
		return
	}
	l := j.starts[t]
	a, b := findTS(l, &j.pos[t], k.ts)
	for ; a < b; a++ {
		j.sOp[l[a].v] = i
	}
}

// idRef is a flow start's id and index.
type idRef struct {
	id int64
	s  int32
}

func cmpIDRef(a, b idRef) int { return cmp.Compare(a.id, b.id) }

// placeCmp orders two starts by place.
func (j *flowJoin) placeCmp(a, b int) int {
	ka, kb := j.thr.keys[j.sThr[a]], j.thr.keys[j.sThr[b]]
	ka.ts, kb.ts = j.sTS[a], j.sTS[b]
	return ka.cmp(kb)
}

// resolve joins the ends to the ops, once every op is known; it reports
// how many ends lead to an op.
func (j *flowJoin) resolve() int {
	// the starts in id order (often nearly their file order: torch_npu's
	// flow id is a device timestamp)
	sid := j.sID
	if !slices.IsSortedFunc(sid, cmpIDRef) {
		slices.SortFunc(sid, cmpIDRef)
	}
	// per distinct id: the op of the start at the greatest place
	n := len(sid)
	ids := make([]int64, 0, n)
	ops := make([]int32, 0, n)
	for i := 0; i < n; {
		best := int(sid[i].s)
		id := sid[i].id
		i++
		for ; i < n && sid[i].id == id; i++ {
			if s := int(sid[i].s); j.placeCmp(s, best) > 0 {
				best = s
			}
		}
		ids = append(ids, id)
		ops = append(ops, j.sOp[best])
	}
	j.sThr, j.sTS, j.sID, j.sOp, j.starts = nil, nil, nil, nil, nil
	// each end's op (ends come in id order too, mostly: walk, and
	// binary-search when the id goes back or the walk gets long)
	eOp := make([]int32, len(j.eID))
	kept := 0
	pos := 0
	for e, id := range j.eID {
		eOp[e] = -1
		i := min(pos, len(ids))
		if i > 0 && ids[i-1] >= id {
			i, _ = slices.BinarySearch(ids[:i], id)
		} else {
			for k := 0; i < len(ids) && ids[i] < id; k++ {
				if k == 16 {
					d, _ := slices.BinarySearch(ids[i:], id)
					i += d
					break
				}
				i++
			}
		}
		pos = i
		if i < len(ids) && ids[i] == id && ops[i] >= 0 {
			eOp[e] = ops[i]
			kept++
		}
	}
	if kept == 0 {
		return 0
	}
	thr := j.eThr
	for e := range thr {
		if eOp[e] < 0 {
			thr[e] = -1
		}
	}
	j.ends = groupByThread(len(j.thr.keys), thr, func(e int) tsRef { return tsRef{j.eTS[e], eOp[e]} })
	clear(j.pos)
	j.eThr, j.eTS, j.eID = nil, nil, nil
	return kept
}

// each calls fn with the op of each end at k, in file order.
func (j *flowJoin) each(k flowKey, fn func(op int32)) {
	t := j.thr.get(k.pid, k.tid, false)
	if t < 0 {
		return
	}
	if int(t) >= len(j.ends) {
		return
	}
	l := j.ends[t]
	if len(l) == 0 {
		return
	}
	a, b := findTS(l, &j.pos[t], k.ts)
	for ; a < b; a++ {
		fn(l[a].v)
	}
}
