package traceview

import (
	"bytes"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Reading one file on several cores.
//
// A trace is one JSON array, but its events are independent, so a plain
// (seekable, uncompressed) file can be cut at event boundaries and its parts
// read at the same time. A boundary is only guessed (`}, {"` at about
// size*k/parts: the bytes could lie inside a string), so it is checked: the
// reader of part k-1 stops at the first event that starts at or after the
// guessed cut, and the parts are joined only when that event starts exactly
// there. Otherwise the reader of part k-1 simply goes on to the end, and
// the later parts are thrown away: a wrong guess costs time, never results.
//
// Joined parts give the same model as one sequential read. Each later part
// knows only the process names it has read itself plus those the earlier
// parts have published so far (kindTable): names from earlier in the file,
// so acting on them is what a sequential read does. What a later part could
// not decide (slices, and bad timestamps, of a process it did not know) it
// keeps, and absorb decides with the names of the whole earlier file.

// MinSplitBytes is the smallest file ReadFile cuts into parts: below it
// the goroutines are not worth their start-up. A variable for tests.
var MinSplitBytes int64 = 32 << 20

// ReadFile reads a plain trace file of size bytes like Read, on up to
// parts goroutines (one part per goroutine, each at least MinSplitBytes/2;
// parts <= 1 reads sequentially).
func ReadFile(f io.ReaderAt, size int64, file string, rank *model.Rank, parts int) (Stats, error) {
	return readFile(f, size, file, rank, parts, false)
}

// ReadFileWithOverlap is ReadFile keeping the profiler's own Overlap
// Analysis (rank.OwnOverlap), as ReadWithOverlap.
func ReadFileWithOverlap(f io.ReaderAt, size int64, file string, rank *model.Rank, parts int) (Stats, error) {
	return readFile(f, size, file, rank, parts, true)
}

func readFile(f io.ReaderAt, size int64, file string, rank *model.Rank, parts int, overlap bool) (Stats, error) {
	if MinSplitBytes > 0 {
		// parts of at least MinSplitBytes/2: on a big machine one rank
		// must not turn into a hundred tiny parts
		parts = min(parts, int(2*size/MinSplitBytes))
	}
	if parts <= 1 {
		return readCuts(f, size, file, rank, nil, overlap)
	}
	var cuts []int64
	for k := 1; k < parts; k++ {
		c := findBoundary(f, size*int64(k)/int64(parts), size)
		if c > 0 && (len(cuts) == 0 || c > cuts[len(cuts)-1]) {
			cuts = append(cuts, c)
		}
	}
	return readCuts(f, size, file, rank, cuts, overlap)
}

// readCuts reads the file in len(cuts)+1 parts starting at 0 and at the
// (increasing) guessed event boundaries cuts.
func readCuts(f io.ReaderAt, size int64, file string, rank *model.Rank, cuts []int64, overlap bool) (Stats, error) {
	rds, err := readParts(f, size, file, rank, cuts, overlap)
	if err != nil {
		return rds[0].stats, err
	}
	st := joinParts(rds, file, rank)
	return st, rds[0].notNPU(file)
}

// readParts reads the parts and returns the readers of those that join
// (see readCuts); overlap keeps the Overlap Analysis (ReadWithOverlap).
func readParts(f io.ReaderAt, size int64, file string, rank *model.Rank, cuts []int64, overlap bool) ([]*reader, error) {
	n := len(cuts) + 1
	rds := make([]*reader, n)
	tables := make([]*kindTable, n)
	for k := range rds {
		off := int64(0)
		if k > 0 {
			off = cuts[k-1]
		}
		src := newMapSource(f, off, size)
		if src == nil {
			src = newSource(io.NewSectionReader(f, off, size-off))
			src.base = off
		}
		defer src.close()
		// the first part's names go straight to the rank's table; the
		// others' to scratch tables, translated by absorb
		syms := &rank.Syms
		if k > 0 {
			syms = &model.Syms{}
		}
		rds[k] = newReader(src, syms)
		rds[k].overlap = overlap
		tables[k] = &kindTable{m: map[int64]int{}}
		rds[k].kinds = tables[k]
		if k > 0 {
			rds[k].part = &partState{earlier: tables[:k]}
		}
	}
	if err := rds[0].guard(file, func() error { return rds[0].begin(file) }); err != nil {
		return rds, err
	}
	for _, rd := range rds[1:] {
		// what may follow the closing ']' depends on how the file began
		rd.src.object = rds[0].src.object
		rd.src.head = rds[0].src.head
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		stop := int64(-1)
		if k < n-1 {
			stop = cuts[k]
		}
		if k == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = rds[k].guard(file, func() error { return rds[k].loop(file, stop) })
		}()
	}
	stop0 := int64(-1)
	if n > 1 {
		stop0 = cuts[0]
	}
	errs[0] = rds[0].guard(file, func() error { return rds[0].loop(file, stop0) })
	wg.Wait()
	// the parts that join: up to the first reader that did not stop
	// exactly where the next part begins
	last := 0
	for last < n-1 && errs[last] == nil && !rds[last].ended && rds[last].stopExact {
		last++
	}
	for k := 0; k <= last; k++ {
		if errs[k] != nil {
			return rds, errs[k]
		}
	}
	if !rds[last].ended {
		// a wrong guess: this part reads on to the end by itself
		rds[last].kinds = nil
		if err := rds[last].guard(file, func() error { return rds[last].loop(file, -1) }); err != nil {
			return rds, err
		}
	}
	return rds[:last+1], nil
}

// joinParts absorbs the later parts' readers into the first and builds
// the model.
func joinParts(rds []*reader, file string, rank *model.Rank) Stats {
	rd := rds[0]
	for k := 1; k < len(rds); k++ {
		rd.absorb(rds[k])
		rds[k] = nil
	}
	rd.finish(file, rank)
	rd.stats.Parts = len(rds)
	return rd.stats
}

// findBoundary returns the offset of the first '{' at or after at that
// looks like the start of an event (`}` `,` `{` `"`, with any whitespace
// between), within 1 MiB; -1 when there is none.
func findBoundary(f io.ReaderAt, at, size int64) int64 {
	const window = 1 << 20
	if at <= 0 || at >= size {
		return -1
	}
	buf := make([]byte, min(window, size-at))
	n, _ := f.ReadAt(buf, at)
	buf = buf[:n]
	for i := 0; i < len(buf); {
		j := bytes.IndexByte(buf[i:], '{')
		if j < 0 {
			return -1
		}
		j += i
		i = j + 1
		// after: optional whitespace, then '"'
		k := j + 1
		for k < len(buf) && isSpace(buf[k]) {
			k++
		}
		if k >= len(buf) || buf[k] != '"' {
			continue
		}
		// before: optional whitespace, ',', optional whitespace, '}'
		k = j - 1
		for k >= 0 && isSpace(buf[k]) {
			k--
		}
		if k < 0 || buf[k] != ',' {
			continue
		}
		k--
		for k >= 0 && isSpace(buf[k]) {
			k--
		}
		if k < 0 || buf[k] != '}' {
			continue
		}
		return at + int64(j)
	}
	return -1
}

// kindTable is where one part publishes the process kinds (by numeric
// pid) it learns from process_name metadata.
type kindTable struct {
	version atomic.Int64
	mu      sync.Mutex
	m       map[int64]int
}

func (t *kindTable) publish(pid int64, kind int) {
	if pid < 0 {
		// a string pid's number is local to one reader
		return
	}
	t.mu.Lock()
	t.m[pid] = kind
	t.mu.Unlock()
	t.version.Add(1)
}

// dropSet counts the complete events dropped for their timestamps, phase
// or missing name.
type dropSet struct {
	badTs, outOfRange, badDur, badPh, noName dropped
}

func (d *dropped) merge(o dropped) {
	if o.n == 0 {
		return
	}
	if d.n == 0 || o.first < d.first {
		d.first = o.first
	}
	d.n += o.n
}

func (d *dropSet) merge(o *dropSet) {
	d.badTs.merge(o.badTs)
	d.outOfRange.merge(o.outOfRange)
	d.badDur.merge(o.badDur)
	d.badPh.merge(o.badPh)
	d.noName.merge(o.noName)
}

// partState is what a later part of a split file keeps besides a plain
// reader's state.
type partState struct {
	earlier []*kindTable // the tables of the earlier parts, in file order
	seen    int64        // sum of their versions at the last refresh
	drops   map[uint16]*dropSet
}

// refresh copies what the earlier parts have learnt into the known kinds
// of the processes this part has not named itself.
func (p *partState) refresh(rd *reader) {
	var v int64
	for _, t := range p.earlier {
		v += t.version.Load()
	}
	if v == p.seen {
		return
	}
	p.seen = v
	for _, t := range p.earlier {
		t.mu.Lock()
		for i := range rd.logs {
			if rd.logs[i].kind != procUnknown || rd.pids[i] < 0 {
				continue
			}
			if k, ok := t.m[rd.pids[i]]; ok {
				// a later part's table wins, as a later name would
				rd.logs[i].known = k
			}
		}
		t.mu.Unlock()
	}
}

func (p *partState) dropsOf(pid uint16) *dropSet {
	if p.drops == nil {
		p.drops = map[uint16]*dropSet{}
	}
	d := p.drops[pid]
	if d == nil {
		d = &dropSet{}
		p.drops[pid] = d
	}
	return d
}

// strOf re-interns a string of another reader's interner (its raw
// spellings reach the table when this reader meets them).
func (in *interner) strOf(s string) uint32 {
	return uint32(in.syms.Intern(s))
}

// absorb appends the events of o, the reader of the part of the file that
// follows rd's, as if rd had read them itself.
func (rd *reader) absorb(o *reader) {
	// processes: o's pid numbers in rd's numbering (string pids by name)
	strPid := map[int64]string{}
	for s, p := range o.strPids {
		strPid[p] = s
	}
	pmap := make([]uint16, len(o.pids))
	for j, p := range o.pids {
		if s, ok := strPid[p]; ok {
			pmap[j] = rd.pidOf(value{b: []byte(s), str: true})
		} else {
			pmap[j] = rd.pidIndex(p)
		}
	}
	tmap := make([]uint32, len(o.tids))
	for j, t := range o.tids {
		tmap[j] = rd.tidIndex(t)
	}
	names := make([]uint32, o.in.syms.Len())
	for j := range names {
		names[j] = rd.in.strOf(o.in.str(uint32(j)))
	}
	for j := range o.in.escaped {
		if rd.in.escaped == nil {
			rd.in.escaped = map[uint32]bool{}
		}
		rd.in.escaped[names[j]] = true
	}
	for j := range o.logs {
		ol := &o.logs[j]
		i := pmap[j]
		if int(i) >= len(rd.logs) {
			continue
		}
		lg := &rd.logs[i]
		// o kept the slices (and bad timestamps) of processes it did not
		// know; rd knows more of the file
		keep := !(ol.kind == procUnknown && lg.kind == procOther)
		switch ol.kind {
		case procUnknown:
		case procOther:
			// named in o: a sequential read drops everything logged
			lg.chunks, lg.segs, lg.n, lg.kind = nil, nil, 0, procOther
			keep = false
		default:
			lg.kind = ol.kind
		}
		if d := o.part.drops[uint16(j)]; d != nil && keep {
			rd.drops.merge(d)
		}
		if !keep || ol.n == 0 {
			continue
		}
		// o's log is kept as it is, a segment decoded after rd's own
		lg.segs = append(lg.segs, logSeg{chunks: ol.chunks, tmap: tmap, names: names})
		lg.n += ol.n
	}
	for k, v := range o.threads {
		if int(k[0]) < len(pmap) {
			rd.threads[[2]int64{int64(pmap[k[0]]), k[1]}] = v
		}
	}
	rd.mergeFlows(o, pmap, tmap)
	rd.planeSDMA += o.planeSDMA
	rd.planeRDMA += o.planeRDMA
	for j, c := range o.planeBy {
		if i := int(pmap[j]); c != [2]int{} {
			for len(rd.planeBy) <= i {
				rd.planeBy = append(rd.planeBy, [2]int{})
			}
			rd.planeBy[i][0] += c[0]
			rd.planeBy[i][1] += c[1]
		}
	}
	for pid, d := range o.pidDev {
		if rd.pidDev == nil {
			rd.pidDev = map[int64]int{}
		}
		rd.pidDev[pid] = d
	}
	if o.device >= 0 {
		rd.device = o.device
	}
	rd.sawKineto = rd.sawKineto || o.sawKineto
	if rd.foreign == "" {
		rd.foreign = o.foreign
	}
	if o.hwPid != 0 {
		rd.hwPid = o.hwPid
	}
	rd.drops.merge(&o.drops)
	rd.large.merge(o.large)
	rd.malformed.merge(o.malformed)
	rd.bad.merge(o.bad)
	rd.trailing, rd.trailingAt = o.trailing, o.trailingAt
	rd.stats.Events += o.stats.Events
	rd.stats.Skipped += o.stats.Skipped
	if o.stats.Bytes > 0 {
		rd.stats.Bytes = o.stats.Bytes
	}
	rd.stats.Truncated, rd.stats.TruncatedAt, rd.stats.Malformed = o.stats.Truncated, o.stats.TruncatedAt, o.stats.Malformed
	rd.malformedWhy = o.malformedWhy
	rd.ended = o.ended
}

// guard runs fn (which reads the source) and, for a mapped source, turns
// the fault of a file that shrank under the mapping into a read error.
func (rd *reader) guard(file string, fn func() error) (err error) {
	if !rd.src.mapped {
		return fn()
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if _, fault := v.(interface{ Addr() uintptr }); !fault {
				panic(v)
			}
			err = fmt.Errorf("%s: read error near byte %d: the file changed (shrank) while it was read", file, rd.src.offset())
		}
	}()
	return fn()
}
