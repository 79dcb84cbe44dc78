// Package traceview reads torch_npu's trace_view.json and msprof's
// msprof_*.json timelines as a stream and fills a model.Rank.
//
// The file is a JSON array of Chrome-trace events, often gigabytes. The
// reader pulls one event at a time out of 1 MiB blocks and parses it in
// place (never a DOM, never a copy), parses `ts` from its decimal text
// straight into int64 ns, interns names, skips counter events, Python
// tracer slices and every `args` key no pass reads, and stops cleanly at
// the last complete event of a truncated file.
//
// Process names are metadata events that may come after the slices they
// name (tracegen puts them there on purpose), so slices are first appended
// to a compact per-process log (varint records, about 12 bytes a slice)
// and turned into model types once every name is known. A process whose
// name is known and that no pass reads (Overlap Analysis, CANN, counters)
// is dropped as soon as its name is seen.
package traceview

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"unsafe"

	"github.com/npuprof/npuprof/internal/parser/internal/intern"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// Stats describes what one read saw.
type Stats struct {
	// Events counts the events read, the malformed ones skipped
	// included (BadEvents of them).
	Events int64
	// Skipped counts events larger than MaxEventBytes, skipped unread.
	Skipped   int64
	Bytes     int64 // bytes of complete events consumed
	Truncated bool
	// TruncatedAt is the byte offset where the last incomplete event began.
	TruncatedAt int64
	// Malformed: the read stopped (Truncated is set too) because the bytes
	// at TruncatedAt are not an event, rather than because the file ended.
	Malformed bool
	// Parts is how many parts of the file were read at the same time and
	// joined (ReadFile); 1 for a sequential read.
	Parts int
	// BadEvents counts the malformed events skipped; BadBytes the bytes
	// skipped with them (and any other bytes between events that were
	// not an event), in Resyncs places, the first at BadAt: each time the
	// read went on at the next event boundary (see resync).
	BadEvents, BadBytes, Resyncs, BadAt int64
}

// badRuns is where the read skipped bytes that are not an event and went
// on at the next event boundary.
type badRuns struct {
	runs, bytes, first int64
	why                string // what was wrong at first
}

func (b *badRuns) add(off, n int64, why string) {
	if b.runs == 0 {
		b.first, b.why = off, why
	}
	b.runs++
	b.bytes += n
}

func (b *badRuns) merge(o badRuns) {
	if o.runs == 0 {
		return
	}
	if b.runs == 0 {
		b.first, b.why = o.first, o.why
	}
	b.runs += o.runs
	b.bytes += o.bytes
}

// dropped counts events of one kind the reader could not use, and where
// the first one was, for a single warning per kind.
type dropped struct {
	n, first int64
}

func (d *dropped) add(off int64) {
	if d.n == 0 {
		d.first = off
	}
	d.n++
}

// interner keeps one copy of every name, in the rank's symbol table
// (model.Syms): its ids are the model's symbols, so building the model
// needs no translation and no string copies. In front of the table sits an
// open-addressing table of ids keyed by maphash of the raw bytes, so a
// lookup neither allocates nor goes through a map of strings. Escapes are
// resolved only for new names; a name written with and without escapes is
// one id (raw spellings map to the symbol of the unescaped string).
//
// Most names (three in four, task types included) are at most 16 bytes:
// those are looked up first in a second table keyed by the name's bytes
// themselves, loaded as two words (intern.ShortKey): a hit costs a few
// dozen instructions instead of maphash's and memequal's ~170. Kept apart
// from intern.Strings on purpose: this maps raw bytes straight to the
// rank's symbols in one call on the hottest path, where intern.Strings (a
// string and a number, then the symbol) cost 0.8% of the trace reader's
// instructions.
type interner struct {
	syms *model.Syms // the rank's table: id -> unescaped string
	raws []string    // the raw spelling each table slot was keyed by
	tab  []uint32    // slot -> 1 + index into raws/rawID, 0 when empty
	ids  []uint32    // index into raws -> id
	seed maphash.Seed
	// names of at most 16 bytes: open addressing, hashed with seeds
	short        []shortEnt
	nShort       int
	seed0, seed1 uint64
	// names longer than 16 bytes: the last one seen per slot, keyed like
	// short (first and last 8 bytes, length) and checked against its raw
	// spelling; a miss goes to longID. Kernel names repeat (aclnn...,
	// 30 to 60 bytes): a hit costs one compare instead of maphash's probe.
	long []longEnt
	// escaped holds the ids of names written with escapes (kept by
	// release: ctrlText tells a control character written escaped from
	// a raw one)
	escaped map[uint32]bool
}

// longEnt is a name longer than 16 bytes in the long cache: its key, and
// 1 + its index into raws (0: an empty slot).
type longEnt struct {
	a, z uint64
	n, i uint32
}

// shortEnt is a name of at most 16 bytes (as intern.ShortKey) and its id; n is
// the length plus one, 0 for an empty slot.
type shortEnt struct {
	a, z  uint64
	n, id uint32
}

func newInterner(syms *model.Syms) *interner {
	in := &interner{syms: syms, tab: make([]uint32, 4096), seed: maphash.MakeSeed(),
		short: make([]shortEnt, 1024), long: make([]longEnt, 512), seed0: rand.Uint64(), seed1: rand.Uint64()}
	in.insert("", 0)
	return in
}

// shortSlot is the first table slot of a short key.
func (in *interner) shortSlot(a, z uint64, n int) uint64 {
	hi, lo := bits.Mul64(a^in.seed0, z^in.seed1^uint64(n)<<32)
	return (hi ^ lo) & uint64(len(in.short)-1)
}

// shortAdd records the id of a name of at most 16 bytes.
func (in *interner) shortAdd(a, z uint64, n int, id uint32) {
	if 2*(in.nShort+1) > len(in.short) {
		old := in.short
		in.short = make([]shortEnt, 2*len(old))
		for _, e := range old {
			if e.n != 0 {
				in.shortPlace(e)
			}
		}
	}
	in.shortPlace(shortEnt{a: a, z: z, n: uint32(n) + 1, id: id})
	in.nShort++
}

func (in *interner) shortPlace(e shortEnt) {
	mask := uint64(len(in.short) - 1)
	h := in.shortSlot(e.a, e.z, int(e.n-1))
	for in.short[h].n != 0 {
		h = (h + 1) & mask
	}
	in.short[h] = e
}

func (in *interner) insert(raw string, id uint32) {
	in.raws = append(in.raws, raw)
	in.ids = append(in.ids, id)
	if 2*len(in.raws) > len(in.tab) {
		// grow the table only: raws and ids keep their indexes
		in.tab = make([]uint32, 2*len(in.tab))
		for i := range in.raws {
			in.place(i)
		}
		return
	}
	in.place(len(in.raws) - 1)
}

// place puts raws[i] into the table.
func (in *interner) place(i int) {
	mask := uint64(len(in.tab) - 1)
	h := maphash.String(in.seed, in.raws[i]) & mask
	for in.tab[h] != 0 {
		h = (h + 1) & mask
	}
	in.tab[h] = uint32(i + 1)
}

func (in *interner) id(b []byte) uint32 {
	if n := len(b); n > 16 {
		a, z := binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[n-8:n])
		e := &in.long[in.shortSlot(a, z, n)&uint64(len(in.long)-1)]
		if e.n == uint32(n) && e.a == a && e.z == z && e.i != 0 && in.raws[e.i-1] == string(b) {
			return in.ids[e.i-1]
		}
		id, i := in.longID(b)
		*e = longEnt{a: a, z: z, n: uint32(n), i: uint32(i) + 1}
		return id
	}
	a, z := intern.ShortKey(b)
	n := len(b)
	mask := uint64(len(in.short) - 1)
	for h := in.shortSlot(a, z, n); ; h = (h + 1) & mask {
		e := &in.short[h]
		if e.n == 0 {
			break
		}
		if e.a == a && e.z == z && e.n == uint32(n)+1 {
			return e.id
		}
	}
	id, _ := in.longID(b)
	in.shortAdd(a, z, n, id)
	return id
}

// longID is id through the table of all names (keyed by maphash); i is
// the name's index in raws.
func (in *interner) longID(b []byte) (id uint32, i int) {
	mask := uint64(len(in.tab) - 1)
	h := maphash.Bytes(in.seed, b) & mask
	for {
		e := in.tab[h]
		if e == 0 {
			break
		}
		if in.raws[e-1] == string(b) {
			return in.ids[e-1], int(e - 1)
		}
		h = (h + 1) & mask
	}
	raw := string(b)
	s := raw // one copy serves both when there is nothing to unescape
	esc := strings.IndexByte(raw, '\\') >= 0
	if esc {
		s = unquote(b)
	}
	id = uint32(in.syms.Intern(s))
	if esc && s != raw {
		if in.escaped == nil {
			in.escaped = map[uint32]bool{}
		}
		in.escaped[id] = true
	}
	in.insert(raw, id)
	return id, len(in.raws) - 1
}

// str returns the string of an id.
func (in *interner) str(id uint32) string { return in.syms.Str(model.Sym(id)) }

// release drops the tables that map raw spellings to ids (a few MB at
// 1 GB, on the build's live peak); str still answers, from the rank's
// table. Build calls it: every name is read by then.
func (in *interner) release() {
	in.raws, in.tab, in.ids, in.short, in.long = nil, nil, nil, nil, nil
}

// process kinds
const (
	procUnknown = iota // no process_name seen (yet)
	procOther          // named, and no pass reads it
	procPython
	procHardware
	procHCCL
)

func procKind(name string) int {
	switch name {
	case "Python", "python", "MindSpore":
		// MindSpore's framework process (2.3+) plays torch_npu's part
		return procPython
	case "Ascend Hardware":
		return procHardware
	case "HCCL", "Communication":
		return procHCCL
	case "NPU":
		// a Kineto trace's device (kineto.go)
		return procKineto
	case "Overlap Analysis":
		return procOverlap
	}
	return procOther
}

// slice categories kept in the log
const (
	catOther uint8 = iota
	catCPUOp
)

// record flags (first byte of a log record)
const (
	fCPUOp    = 1 << 0
	fTaskType = 1 << 1
	fStream   = 1 << 2
	fModel    = 1 << 3
	// fOther: a Kineto slice of another category than kernel, memory
	// copy or set; in the NPU process it is counted and skipped (build)
	fOther = 1 << 4
	// fTransport: the slice's args hold a "transport type" (transportOf),
	// as every HCCL plane task's do (build names those that do not)
	fTransport = 1 << 5
)

// plog is one process's pending slices: varint records of flags, tid
// index, ts delta, dur, name id, [task type id], [stream], [model id], in
// 64 KiB chunks (no doubling, no copying as it grows).
type plog struct {
	chunks [][]byte
	// segs are the logs of the same process that later parts of a split
	// file read (see absorb), decoded after chunks
	segs   []logSeg
	n      int
	lastTS int64
	kind   int // from this reader's process_name
	// known is the kind earlier parts of a split file learnt (see
	// ReadFile), used while kind is procUnknown
	known int
}

// eff is the process kind the reader acts on.
func (lg *plog) eff() int {
	if lg.kind != procUnknown {
		return lg.kind
	}
	return lg.known
}

const (
	chunkSize = 64 << 10
	maxRecord = 64 // bytes: flags + 7 varints
)

// buf returns the chunk to append a record to.
func (l *plog) buf() []byte {
	k := len(l.chunks)
	if k > 0 && cap(l.chunks[k-1])-len(l.chunks[k-1]) >= maxRecord {
		return l.chunks[k-1]
	}
	// chunks start small (a process with a few slices costs little) and
	// double up to chunkSize
	size := chunkSize
	if k < 4 {
		size = 4 << 10 << k
	}
	l.chunks = append(l.chunks, make([]byte, 0, size))
	return l.chunks[len(l.chunks)-1]
}

type reader struct {
	// ctrl counts the device task and collective names and task types
	// (each once) that hold a raw control character
	ctrl ctrlText
	// planeSDMA and planeRDMA count the HCCL plane tasks whose transport
	// type is SDMA or RDMA (transportOf)
	planeSDMA, planeRDMA int
	// planeBy counts them per process (by pid index), for the devices
	// of a file that holds several
	planeBy [][2]int
	// pidDev is the device a process's "NPU {id}" label names, by pid
	pidDev  map[int64]int
	src     *source
	in      *interner
	pidIdx  map[int64]uint16
	pids    []int64
	strPids map[string]int64
	tidIdx  map[int64]uint32
	tids    []int64
	logs    []plog
	threads map[[2]int64]string
	// flows: varint records of end flag, pid index, tid index, ts delta,
	// id delta, in chunks like a process log (no copying as it grows)
	flows                plog
	flowSegs             []flowSeg // the later parts' flow logs (see absorb)
	nFlows, nFlowEnds    int
	flowThreads          flowCounts // flows per thread, for sizing the join
	flowLastTS, flowLast int64
	stats                Stats
	device               int
	hwPid                int64 // pid of the "Ascend Hardware" process, 0 when unknown
	sawKineto            bool  // a Kineto device process ("NPU") was named
	overlap              bool  // keep the Overlap Analysis (ReadWithOverlap)
	// foreign is the first process label of another accelerator than an
	// NPU ("GPU 0", "MTIA 17": a CUDA, ROCm or MTIA Kineto trace)
	foreign      string
	off          int64 // byte offset of the event being read
	malformedWhy string
	// bytes after the closing ']' that are not events, and where
	trailing, trailingAt int64
	// events dropped or repaired, reported once each
	drops            dropSet
	large, malformed dropped
	bad              badRuns
	// pids and tids seen, raw, and what they resolved to
	pidCache, tidCache idCache
	// loop's state: the input or array ended; the last stop was exactly
	// at the requested offset
	ended, stopExact bool
	// part is set on the readers of a split file's later parts (see
	// ReadFile)
	part *partState
	// kinds, when set, is where this reader publishes the process kinds
	// it learns, for the later parts of a split file
	kinds *kindTable
}

// Read parses one trace file into rank. A truncated file is read up to its
// last complete event; the rank is then marked partial with the byte offset.
// An error is returned only when the input is not a trace at all or cannot
// be read.
func Read(r io.Reader, file string, rank *model.Rank) (Stats, error) {
	return read(r, file, rank, false)
}

// ReadWithOverlap is Read keeping the profiler's own Overlap Analysis
// (rank.OwnOverlap): for msprof_*.json, and a trace_view.json of CANN 8.5
// and later or of no known version. Read skips its slices, a quarter of a
// torch_npu trace_view.json's events, whose window the analysis recomputes
// by an older writer's rule at no cost (docs/formats.md).
func ReadWithOverlap(r io.Reader, file string, rank *model.Rank) (Stats, error) {
	return read(r, file, rank, true)
}

func read(r io.Reader, file string, rank *model.Rank, overlap bool) (Stats, error) {
	rd := newReader(newSource(r), &rank.Syms)
	rd.overlap = overlap
	if err := rd.begin(file); err != nil {
		return rd.stats, err
	}
	if err := rd.loop(file, -1); err != nil {
		return rd.stats, err
	}
	rd.finish(file, rank)
	rd.stats.Parts = 1
	return rd.stats, rd.notNPU(file)
}

// newReader returns a reader whose names go to syms (the rank's table,
// or a scratch table for the later parts of a split file).
func newReader(src *source, syms *model.Syms) *reader {
	return &reader{
		src:     src,
		in:      newInterner(syms),
		pidIdx:  map[int64]uint16{},
		strPids: map[string]int64{},
		tidIdx:  map[int64]uint32{},
		threads: map[[2]int64]string{},
		device:  -1,
	}
}

// begin consumes the opening of the array.
func (rd *reader) begin(file string) error {
	sc := rd.src
	if err := sc.start(); err != nil {
		if sc.rerr != nil {
			return fmt.Errorf("%s: read error: %w", file, sc.rerr)
		}
		return fmt.Errorf("%s: not a trace: expected a JSON array of events ('[' ...) or an object with \"traceEvents\"", file)
	}
	return nil
}

// loop reads events until the array or the input ends (rd.ended), or,
// when stopAt >= 0, until the next event starts at or after byte stopAt
// (rd.stopExact tells whether it starts exactly there); the source then
// stays at that event, so loop can be called again to go on. An error is
// returned only for a read error.
func (rd *reader) loop(file string, stopAt int64) error {
	sc := rd.src
	var ev event
	for {
		if p := sc.pos; p+2 < sc.end && sc.buf[p+2] == '{' && sc.buf[p] == ',' && sc.buf[p+1] == ' ' {
			// `, {` between events, as every profiler writes it (what
			// skipSpace would skip, without its call and byte loop)
			sc.pos = p + 2
		} else if sc.comma = false; !sc.skipSpace(true) {
			if sc.rerr != nil {
				return fmt.Errorf("%s: read error at byte %d: %w", file, sc.offset(), sc.rerr)
			}
			rd.truncated(sc.offset())
			break
		}
		c := sc.buf[sc.pos]
		off := sc.offset()
		if c == ']' {
			sc.pos++
			if more, err := rd.afterClose(file, off); err != nil {
				return err
			} else if more {
				continue
			}
			break
		}
		if c != '{' {
			// bytes between events that are not an event
			why := fmt.Sprintf("expected '{' or ']' at byte %d, found %q", off, c)
			if more, err := rd.resync(file, sc.pos, off, false, why); err != nil || !more {
				return err
			}
			continue
		}
		if stopAt >= 0 && off >= stopAt {
			rd.stopExact = off == stopAt
			return nil
		}
		begin := sc.pos
		end := parseEvent(sc.buf[:sc.end], begin, &ev, rd)
		for end == iMore && sc.end-begin <= sc.maxEvt {
			sc.pos = begin
			if !sc.fill(begin) {
				break
			}
			begin = sc.pos
			end = parseEvent(sc.buf[:sc.end], begin, &ev, rd)
		}
		if end == iMore && sc.end-begin <= sc.maxEvt {
			// the input ended inside the event
			if sc.rerr != nil {
				return fmt.Errorf("%s: read error at byte %d: %w", file, off, sc.rerr)
			}
			if found, _ := sc.nextEvent(begin, false); found {
				// a damaged event that never closes, events after it
				rd.malformed.add(off)
				rd.stats.Events++
				rd.bad.add(off, sc.offset()-off, fmt.Sprintf("the event at byte %d never closes", off))
				continue
			}
			rd.truncated(off)
			break
		}
		if end == iBad {
			// not a JSON object of "key": value pairs: go on at the
			// next event boundary
			why := fmt.Sprintf("the event at byte %d is not a JSON object of \"key\": value pairs", off)
			if more, err := rd.resync(file, begin, off, true, why); err != nil || !more {
				return err
			}
			continue
		}
		large := end == iMore || (end > 0 && end-begin > sc.maxEvt)
		if large {
			// an event too large to hold: find its end and go on
			if end < 0 {
				end = sc.skipEvent(begin)
				if end < 0 {
					if sc.rerr != nil {
						return fmt.Errorf("%s: read error at byte %d: %w", file, off, sc.rerr)
					}
					rd.truncated(off)
					break
				}
			}
			sc.pos = end
			rd.large.add(off)
			rd.stats.Skipped++
			continue
		}
		rd.off = off
		rd.event(&ev)
		sc.pos = end
		rd.stats.Events++
		rd.stats.Bytes = sc.base + int64(end)
	}
	rd.ended = true
	return nil
}

// resync skips what is not an event, from buf[from] (file offset off):
// the event that starts there when inEvent, else bytes between events. The
// read goes on at the next event boundary (source.nextEvent), counting the
// bytes skipped and, when they held an event's text, the event; there is
// none before the end of the input, the read stops at off like a
// truncation, and why says what was wrong. Either way the rank is partial
// (finish): nothing is skipped in silence. It returns whether the read
// goes on.
func (rd *reader) resync(file string, from int, off int64, inEvent bool, why string) (bool, error) {
	sc := rd.src
	// bytes that are not an event where an event should start (after a
	// comma) held one when they hold a string; right after a complete
	// event they are what is left of it
	lost := inEvent || sc.comma
	found, quoted := sc.nextEvent(from, !inEvent)
	if sc.rerr != nil {
		return false, fmt.Errorf("%s: read error at byte %d: %w", file, sc.offset(), sc.rerr)
	}
	lost = lost && (inEvent || quoted)
	if lost {
		rd.malformed.add(off)
		rd.stats.Events++
	}
	if !found {
		rd.truncated(off)
		rd.stats.Malformed = true
		rd.malformedWhy = why
		rd.ended = true
		return false, nil
	}
	rd.bad.add(off, sc.offset()-off, why)
	return true, nil
}

// afterClose checks what follows the ']' at off that closes the array of
// events: nothing but whitespace, or the rest of the {"traceEvents": [...]}
// object (',' or '}'). Anything else means the ']' is a damaged byte
// between events: the read resynchronises (resync) and goes on.
func (rd *reader) afterClose(file string, off int64) (bool, error) {
	sc := rd.src
	if !sc.skipSpace(false) {
		return false, nil
	}
	if c := sc.buf[sc.pos]; sc.object && (c == ',' || c == '}') {
		return false, nil
	}
	at := sc.offset()
	why := fmt.Sprintf("a ']' at byte %d is followed by more data at byte %d", off, at)
	lost := sc.comma
	found, quoted := sc.nextEvent(sc.pos-1, true)
	if sc.rerr != nil {
		return false, fmt.Errorf("%s: read error at byte %d: %w", file, sc.offset(), sc.rerr)
	}
	switch {
	case found:
		if quoted && lost {
			rd.malformed.add(off)
			rd.stats.Events++
		}
		rd.bad.add(off, sc.offset()-off, why)
		return true, nil
	case quoted:
		rd.malformed.add(off)
		rd.stats.Events++
		rd.truncated(off)
		rd.stats.Malformed = true
		rd.malformedWhy = why
	default:
		rd.trailing = sc.offset() - at
		rd.trailingAt = at
	}
	return false, nil
}

// finish reports what was dropped and builds the model.
func (rd *reader) finish(file string, rank *model.Rank) {
	rd.warnDropped(file, rank)
	rd.stats.BadEvents = rd.malformed.n
	rd.stats.BadBytes, rd.stats.Resyncs, rd.stats.BadAt = rd.bad.bytes, rd.bad.runs, rd.bad.first
	var reasons []string
	if b := rd.bad; b.runs > 0 {
		reasons = append(reasons, fmt.Sprintf("%s is malformed at byte %d (%s): skipped %d byte(s) holding %d event(s) in %d place(s), going on each time at the next event boundary", file, b.first, b.why, b.bytes, rd.malformed.n, b.runs))
	}
	if rd.stats.Truncated {
		reason := fmt.Sprintf("%s is truncated: it ends inside an event at byte %d", file, rd.stats.TruncatedAt)
		if rd.stats.Malformed {
			reason = fmt.Sprintf("%s is malformed: %s", file, rd.malformedWhy)
		}
		reasons = append(reasons, reason)
	}
	if len(reasons) > 0 {
		rank.Partial = true
		reason := strings.Join(reasons, "; ") + fmt.Sprintf("; analyzed the %d complete events before it", rd.stats.Events-rd.malformed.n)
		if rd.bad.runs > 0 {
			reason = strings.Join(reasons, "; ") + fmt.Sprintf("; analyzed the other %d events", rd.stats.Events-rd.malformed.n)
		}
		if rank.PartialReason == "" {
			rank.PartialReason = reason
		}
		rank.Warn(file, "%s", reason)
	}
	if rd.trailing > 0 {
		rank.Warn(file, "ignored %d byte(s) after the closing ']' (from byte %d): not events", rd.trailing, rd.trailingAt)
	}
	rd.build(rank, file)
}

// sizeText prints a byte limit: "64 MiB", or "300 bytes".
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// warnDropped turns the counts of unusable events into one warning each.
func (rd *reader) warnDropped(file string, rank *model.Rank) {
	for _, d := range []struct {
		d   dropped
		msg string
	}{
		{rd.large, "skipped %d event(s) larger than the " + sizeText(MaxEventBytes) + " event limit (first at byte %d)"},
		{rd.drops.badTs, "skipped %d complete (ph X) event(s) without a numeric ts (first at byte %d)"},
		{rd.drops.outOfRange, "skipped %d complete (ph X) event(s) whose ts or ts+dur is outside the int64 nanosecond range (first at byte %d)"},
		{rd.drops.badPh, "skipped %d event(s) without a known phase (\"ph\": one of the Chrome trace event letters) (first at byte %d)"},
		{rd.drops.noName, "skipped %d complete (ph X) event(s) without a \"name\" (a damaged key?) (first at byte %d)"},
		{rd.drops.badDur, "%d complete (ph X) event(s) have a missing, non-numeric or negative dur, taken as 0 (first at byte %d)"},
	} {
		if d.d.n > 0 {
			rank.Warnings = append(rank.Warnings, model.Warning{File: file, Message: fmt.Sprintf(d.msg, d.d.n, d.d.first), Count: int(d.d.n)})
		}
	}
}

func (rd *reader) truncated(off int64) {
	rd.stats.Truncated = true
	rd.stats.TruncatedAt = off
}

// pid returns the index of the event's pid, remembering the recent ones.
func (rd *reader) pid(v value) uint16 {
	k, ok := keyOf(v.b, v.str)
	if !ok {
		return rd.pidOf(v)
	}
	e := &rd.pidCache[k.slot()]
	if e.ok && e.k == k {
		return uint16(e.idx)
	}
	i := rd.pidOf(v)
	*e = idEntry{k: k, idx: uint32(i), ok: true}
	return i
}

// kindOf returns the process kind of a pid value, and 1 + the pid's index.
func (rd *reader) kindOf(v value) (int, uint32) {
	i := rd.pid(v)
	if int(i) >= len(rd.logs) {
		return procOther, uint32(i) + 1
	}
	lg := &rd.logs[i]
	if lg.kind == procUnknown && rd.part != nil {
		rd.part.refresh(rd)
	}
	return lg.eff(), uint32(i) + 1
}

// evPid returns the index of ev's pid: as parseEvent resolved it, or
// looked up.
func (rd *reader) evPid(ev *event) uint16 {
	if ev.pidIdx != 0 {
		return uint16(ev.pidIdx - 1)
	}
	return rd.pid(ev.pid)
}

// tid returns the index of the event's tid, remembering the recent ones.
func (rd *reader) tid(v value) uint32 {
	k, ok := keyOf(v.b, false)
	if !ok {
		return rd.tidIndex(tidOf(v))
	}
	e := &rd.tidCache[k.slot()]
	if e.ok && e.k == k {
		return e.idx
	}
	i := rd.tidIndex(tidOf(v))
	*e = idEntry{k: k, idx: i, ok: true}
	return i
}

// idKey is a raw pid or tid of at most 16 bytes, exactly: its length, its
// first and last 8 bytes (which cover it), or its bytes when shorter.
type idKey struct {
	a, z uint64
	n    int32
	str  bool
}

// keyOf returns the key of a raw id; false when it is too long for one,
// or when it is shorter than 8 bytes and ends its buffer (then the id is
// resolved without the cache). Below 8 bytes it loads the word at b[0:8],
// within b's capacity (b is a slice of the read buffer), and masks off
// the bytes after b: the bytes packed little endian, as a loop would.
func keyOf(b []byte, str bool) (idKey, bool) {
	n := len(b)
	if n > 16 || cap(b) < 8 {
		return idKey{}, false
	}
	a, z := binary.LittleEndian.Uint64(b[:8]), uint64(0)
	if n >= 8 {
		z = binary.LittleEndian.Uint64(b[n-8:])
	} else {
		a &= 1<<(8*(uint(n)&7)) - 1
	}
	return idKey{a, z, int32(n), str}, true
}

// slot spreads keys over an idCache.
func (k idKey) slot() int {
	h := (k.a ^ k.z*31 ^ uint64(k.n)) * 0x9e3779b97f4a7c15
	return int(h >> 60)
}

// idEntry is a raw id and what it resolved to (the resolution of a raw id
// never changes within a reader).
type idEntry struct {
	k   idKey
	idx uint32
	ok  bool
}

// idCache holds recently seen ids, direct-mapped: a trace alternates
// between a handful of pids and tids.
type idCache [16]idEntry

func (rd *reader) pidOf(v value) uint16 {
	var pid int64
	if v.str {
		s := string(v.b)
		p, ok := rd.strPids[s]
		if !ok {
			if n, ok := parseInt(v.b); ok {
				p = n
			} else {
				p = -int64(len(rd.strPids)) - 1
			}
			rd.strPids[s] = p
		}
		pid = p
	} else {
		p, ok := parseInt(v.b)
		if !ok {
			p = -1 << 40
		}
		pid = p
	}
	return rd.pidIndex(pid)
}

// pidIndex returns the index of a pid number, adding it when new.
func (rd *reader) pidIndex(pid int64) uint16 {
	if i, ok := rd.pidIdx[pid]; ok {
		return i
	}
	if len(rd.pids) >= 1<<16-1 {
		return 1<<16 - 1
	}
	i := uint16(len(rd.pids))
	rd.pids = append(rd.pids, pid)
	rd.pidIdx[pid] = i
	rd.logs = append(rd.logs, plog{})
	return i
}

// tidOf returns a numeric tid, or a negative hash of a tid that is not an
// int64 (a name, or a number out of range) so distinct tids stay distinct.
func tidOf(v value) int64 {
	if t, ok := parseInt(v.b); ok {
		return t
	}
	var h int64 = 1469598103934665603
	for _, c := range v.b {
		h = (h ^ int64(c)) * 1099511628211
	}
	if h > 0 {
		h = -h
	}
	return h
}

func (rd *reader) tidIndex(tid int64) uint32 {
	if i, ok := rd.tidIdx[tid]; ok {
		return i
	}
	i := uint32(len(rd.tids))
	rd.tids = append(rd.tids, tid)
	rd.tidIdx[tid] = i
	return i
}

func (rd *reader) event(ev *event) {
	switch ev.transport {
	case planeSDMA:
		rd.planeSDMA++
		rd.planeOf(ev)[0]++
	case planeRDMA:
		rd.planeRDMA++
		rd.planeOf(ev)[1]++
	}
	var ph byte
	if len(ev.phV.b) == 1 && ev.phV.str {
		ph = ev.phV.b[0]
	}
	switch ph {
	case 'X':
		rd.complete(ev)
	case 'M':
		rd.meta(ev)
	case 's', 'f':
		// a switch on the bytes compares them in place (a string
		// variable of them is a copy, made for each flow event)
		switch string(ev.name.b) {
		case "torch_to_npu", "mindspore_to_npu":
			rd.flowEv(ph == 'f', ev)
		}
	default:
		if ph == 0 || !knownPhase[ph] {
			rd.badPhase(ev)
		}
	}
}

// badPhase counts an event without a known phase, unless it belongs to a
// process no pass reads (whose events may have been skipped before ph).
func (rd *reader) badPhase(ev *event) {
	pid := rd.evPid(ev)
	if int(pid) >= len(rd.logs) {
		return
	}
	kind := rd.logs[pid].eff()
	if kind == procOther {
		return
	}
	drops := &rd.drops
	if kind == procUnknown && rd.part != nil {
		drops = rd.part.dropsOf(pid)
	}
	drops.badPh.add(rd.off)
}

// knownPhase marks the phases of the Chrome trace event format; an event
// with another ph (or none) is counted and warned about, since a damaged
// byte could have turned a device slice into one.
var knownPhase = func() (t [256]bool) {
	for _, c := range []byte("BEXiICbnestfPONDMRc") {
		t[c] = true
	}
	return t
}()

func (rd *reader) complete(ev *event) {
	var flags byte
	if ev.cat.b != nil {
		switch string(ev.cat.b) {
		case "cpu_op":
			flags |= fCPUOp
		case "python_function":
			// Python tracer slices: not read by any pass.
			return
		}
	}
	pid := rd.evPid(ev)
	lg := &rd.logs[pid]
	kind := lg.eff()
	if kind == procOther {
		return
	}
	drops := &rd.drops
	if kind == procUnknown && rd.part != nil {
		// a later part of a split file: whether these count depends on
		// what the earlier parts learn of the process (see absorb)
		drops = rd.part.dropsOf(pid)
	}
	var kineto []byte
	if rd.src.object {
		// a Kineto trace's slice: its kind of slice and kernel type
		var skip bool
		if kineto, skip = kinetoSlice(ev, kind); skip {
			return
		}
		if c := string(ev.cat.b); c != "kernel" && c != "gpu_memcpy" && c != "gpu_memset" {
			flags |= fOther
		}
	}
	if ev.name.b == nil {
		// every writer names a slice: its "name" key was damaged
		drops.noName.add(rd.off)
		return
	}
	ts, ok := usToNs(ev.ts.b)
	if ok && rd.src.head.base != 0 {
		ts, ok = rd.absTS(ts)
		if !ok {
			drops.outOfRange.add(rd.off)
			return
		}
	}
	if !ok {
		if ev.ts.b == nil || !timeparse.LooksNumeric(ev.ts.b) {
			drops.badTs.add(rd.off)
		} else {
			drops.outOfRange.add(rd.off)
		}
		return
	}
	dur, ok := usToNs(ev.dur.b)
	if !ok || dur < 0 {
		if ok || !timeparse.LooksNumeric(ev.dur.b) {
			drops.badDur.add(rd.off)
			dur = 0
		} else {
			drops.outOfRange.add(rd.off)
			return
		}
	}
	if ts > 0 && dur > math.MaxInt64-ts {
		drops.outOfRange.add(rd.off)
		return
	}
	var tt uint32
	var stream, modelID int64
	switch {
	case ev.taskType.set:
		flags |= fTaskType
		tt = rd.in.id(ev.taskType.b)
	case kineto != nil:
		flags |= fTaskType
		tt = rd.in.id(kineto)
	}
	if ev.stream.set {
		if n, ok := parseInt(ev.stream.b); ok && n >= 0 && n <= math.MaxInt32 {
			flags |= fStream
			stream = n
		}
	}
	if ev.modelID.set && string(ev.modelID.b) != "4294967295" {
		// (UINT32_MAX, which torch_npu writes for "no model", is not kept
		// either way)
		if n, ok := parseInt(ev.modelID.b); ok && n >= 0 && n < math.MaxUint32 {
			flags |= fModel
			modelID = n
		}
	}
	if ev.transport != 0 {
		flags |= fTransport
	}
	name := rd.in.id(ev.name.b)
	tid := rd.tid(ev.tid)
	lg.add(flags, tid, ts, dur, name, tt, stream, uint64(modelID))
}

// add appends one slice record.
func (lg *plog) add(flags byte, tid uint32, ts, dur int64, name, tt uint32, stream int64, modelID uint64) {
	b := lg.buf()
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(tid))
	b = binary.AppendVarint(b, ts-lg.lastTS)
	b = binary.AppendUvarint(b, uint64(dur))
	b = binary.AppendUvarint(b, uint64(name))
	if flags&fTaskType != 0 {
		b = binary.AppendUvarint(b, uint64(tt))
	}
	if flags&fStream != 0 {
		b = binary.AppendVarint(b, stream)
	}
	if flags&fModel != 0 {
		b = binary.AppendUvarint(b, modelID)
	}
	lg.chunks[len(lg.chunks)-1] = b
	lg.n++
	lg.lastTS = ts
}

// usToNs is timeparse.MicrosToNanos with a fast path for the common
// spellings (digits, optionally '.' and at most three decimals).
// maxWholeUs is the largest whole number of microseconds timeparse
// accepts: above it the fast paths hand the text to timeparse, which
// refuses it, instead of wrapping around int64.
const maxWholeUs = timeparse.MaxWholeMicros

func usToNs(b []byte) (int64, bool) {
	// kept: summary's micros repeats this conversion; as a call it costs 4% of a ts
	if len(b) == 20 && b[16] == '.' {
		// how profilers write ts: 16 digits, '.', 3 decimals (the same
		// arithmetic as below, without its loops)
		// (sixteenDigits written out: as a call it costs 4% of a ts)
		const hiNib, zeros, sixes = 0xf0f0f0f0f0f0f0f0, 0x3030303030303030, 0x0606060606060606
		x, y := le64(b, 0), le64(b, 8)
		d0, d1, d2 := b[17]-'0', b[18]-'0', b[19]-'0'
		if (x&hiNib^zeros)|(y&hiNib^zeros)|((x+sixes)&hiNib^zeros)|((y+sixes)&hiNib^zeros) == 0 && d0 <= 9 && d1 <= 9 && d2 <= 9 {
			x, y = x-zeros, y-zeros
			x, y = x*10+x>>8, y*10+y>>8
			x = ((x&0x000000ff000000ff)*(100+1000000<<32) + (x>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
			y = ((y&0x000000ff000000ff)*(100+1000000<<32) + (y>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
			if us := x*100000000 + y; us <= maxWholeUs {
				return int64(us)*1000 + int64(d0)*100 + int64(d1)*10 + int64(d2), true
			}
			// beyond int64 nanoseconds, or at its edge: timeparse decides
			return timeparse.MicrosToNanos(b)
		}
	}
	var n int64
	i := 0
	if len(b) < 16 {
		// a duration: a few digits before the point (fewer than 16, so
		// the limit below cannot be reached)
		for ; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			n = n*10 + int64(c)
		}
	} else {
		// whole groups of 8 digits first (a ts has 16 before the point)
		if v, ok := eightDigits(b); ok {
			n, i = int64(v), 8
			if v, ok := eightDigits(b[8:]); ok {
				n, i = n*100000000+int64(v), 16
			}
		}
		for ; i < len(b) && i < 16; i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			n = n*10 + int64(c)
		}
	}
	if i == 0 || n > maxWholeUs {
		// not a number here, or 16 digits that may not fit int64 ns
		return timeparse.MicrosToNanos(b)
	}
	if i == len(b) {
		return n * 1000, true
	}
	if b[i] != '.' || len(b)-i-1 > 3 {
		return timeparse.MicrosToNanos(b)
	}
	if i+4 == len(b) {
		// three decimals, as most durations have
		d0, d1, d2 := b[i+1]-'0', b[i+2]-'0', b[i+3]-'0'
		if d0 <= 9 && d1 <= 9 && d2 <= 9 {
			return n*1000 + int64(d0)*100 + int64(d1)*10 + int64(d2), true
		}
	}
	f, k := int64(0), 0
	for i++; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			return timeparse.MicrosToNanos(b)
		}
		f = f*10 + int64(c)
		k++
	}
	for ; k < 3; k++ {
		f *= 10
	}
	return n*1000 + f, true
}

func (rd *reader) meta(ev *event) {
	n := string(ev.name.b)
	if n == "process_labels" {
		rd.labels(rd.evPid(ev), unquote(ev.argLabels.b))
		return
	}
	if n != "process_name" && n != "thread_name" {
		return
	}
	val := unquote(ev.argName.b)
	pid := rd.evPid(ev)
	if n == "process_name" {
		lg := &rd.logs[pid]
		lg.kind = procKind(val)
		if lg.kind == procOverlap && !rd.overlap {
			lg.kind = procOther
		}
		if lg.kind == procHardware && int(pid) < len(rd.pids) {
			rd.hwPid = rd.pids[pid]
		}
		if lg.kind == procKineto && int(pid) < len(rd.pids) {
			rd.kinetoDevice(rd.pids[pid])
		}
		if rd.kinds != nil && int(pid) < len(rd.pids) {
			rd.kinds.publish(rd.pids[pid], lg.kind)
		}
		if lg.kind == procOther && !rd.src.object {
			// no pass reads it: drop what was logged, skip what comes (in
			// a Kineto trace the host process is only known by its label,
			// which may come later: labels)
			lg.chunks, lg.n = nil, 0
		}
	} else {
		rd.threads[[2]int64{int64(pid), tidOf(ev.tid)}] = val
	}
}

func (rd *reader) flowEv(end bool, ev *event) {
	ts, ok := usToNs(ev.ts.b)
	if !ok {
		return
	}
	var id int64
	if t, d := ev.ts.b, ev.id.b; ts >= 0 && len(t) == 20 && len(d) == 19 && t[16] == '.' &&
		le64(d, 8) == le64(t, 8) && le64(d, 0) == le64(t, 0) && d[16] == t[17] && d[17] == t[18] && d[18] == t[19] {
		// torch_npu's flow id is the device task's start in ns: at a
		// flow end, the digits of ts without its point (ts >= 0: the
		// 19 digits did not overflow, so parseInt would read ts too)
		id = ts
	} else if id, ok = parseInt(ev.id.b); !ok {
		return
	}
	pid := rd.evPid(ev)
	tid := rd.tid(ev.tid)
	var e uint64
	if end {
		e = 1
	}
	rd.addFlow(pid, tid, ts, id, e)
}

// addFlow appends one flow record (end is 1 for a flow end).
func (rd *reader) addFlow(pid uint16, tid uint32, ts, id int64, end uint64) {
	lg := &rd.flows
	b := lg.buf()
	b = binary.AppendUvarint(b, uint64(pid)<<1|end)
	b = binary.AppendUvarint(b, uint64(tid))
	b = binary.AppendVarint(b, ts-rd.flowLastTS)
	b = binary.AppendVarint(b, id-rd.flowLast)
	lg.chunks[len(lg.chunks)-1] = b
	rd.nFlows++
	if end == 1 {
		rd.nFlowEnds++
	}
	rd.flowLastTS, rd.flowLast = ts, id
	rd.flowThreads.add(pid, tid, end, 1)
}

// labels reads process_labels metadata: new versions write "NPU {id}". In
// a Kineto trace, "CPU" marks the host process, whatever its name.
func (rd *reader) labels(pid uint16, l string) {
	if l == "CPU" && rd.src.object && int(pid) < len(rd.logs) && rd.logs[pid].kind == procOther {
		rd.logs[pid].kind = procPython
		if rd.kinds != nil && int(pid) < len(rd.pids) {
			rd.kinds.publish(rd.pids[pid], procPython)
		}
	}
	if rd.foreign == "" && foreignLabel(l) {
		rd.foreign = l
	}
	if strings.HasPrefix(l, "NPU ") {
		var d int
		if _, err := fmt.Sscanf(l[4:], "%d", &d); err == nil && d >= 0 && d < 1<<15 {
			rd.device = d
			if int(pid) < len(rd.pids) {
				if rd.pidDev == nil {
					rd.pidDev = map[int64]int{}
				}
				rd.pidDev[rd.pids[pid]] = d
			}
		}
	}
}

// planeOf is the plane-task counts of the process of ev.
func (rd *reader) planeOf(ev *event) *[2]int {
	p := int(rd.evPid(ev))
	for len(rd.planeBy) <= p {
		rd.planeBy = append(rd.planeBy, [2]int{})
	}
	return &rd.planeBy[p]
}

// procDevice is the device of process p (a pid index): its "NPU {id}"
// label's, else its packed pid's; -1 when neither names one.
func (rd *reader) procDevice(p int) int {
	pid := rd.pids[p]
	if d, ok := rd.pidDev[pid]; ok {
		return d
	}
	if rd.logs[p].kind == procKineto {
		// Kineto writes a device's slices with pid = its device id
		if pid >= 0 && pid < 1<<15 {
			return int(pid)
		}
		return -1
	}
	return devFromPid(pid)
}

// deviceOfProcs is the device of every process (by pid index) of a file
// whose "Ascend Hardware" processes (a Kineto trace's "NPU" processes)
// are on several devices (torch_npu's pid_device_map, msprof's
// per-device loop, torch.profiler driving several NPUs), which it records on rank
// (Devices); nil when they are on one. When they are several but their
// pids and labels do not name a device each, a warning says that the
// file is read as one rank.
func (rd *reader) deviceOfProcs(rank *model.Rank, file string) []int {
	hw := procHardware
	nHW := countKind(rd.logs, procHardware)
	if nHW == 0 {
		hw, nHW = procKineto, countKind(rd.logs, procKineto)
	}
	if nHW < 2 {
		return nil
	}
	devOf := make([]int, len(rd.logs))
	var devs []int
	unknown := 0
	for p := range rd.logs {
		devOf[p] = -1
		switch rd.logs[p].kind {
		case procHardware, procHCCL, procOverlap, procKineto:
			devOf[p] = rd.procDevice(p)
		}
		if rd.logs[p].kind != hw {
			continue
		}
		if devOf[p] < 0 {
			unknown++
		} else if !slices.Contains(devs, devOf[p]) {
			devs = append(devs, devOf[p])
		}
	}
	if unknown > 0 || len(devs) != nHW {
		rank.Warn(file, "holds %d device processes (\"Ascend Hardware\", or a Kineto trace's \"NPU\") whose pids and process_labels do not name a device each, so they cannot be split into one rank per device: npuprof reads them as one rank, its window and sums covering every device together; analyze each device's capture apart", nHW)
		return nil
	}
	for _, d := range devs {
		rank.AddDevice(d)
	}
	return devOf
}

// hcclThreadKind is what thread tid (an index) of HCCL process p holds: 1
// big ops, 2 plane tasks (isBigOpThread); named says that the thread's
// name was read.
func (rd *reader) hcclThreadKind(p int, tid uint32) (kind byte, named bool) {
	tn, named := rd.threads[[2]int64{int64(p), rd.tids[tid]}]
	if isBigOpThread(tn) {
		return 1, named
	}
	return 2, named
}

// ctrlText counts the texts that hold a raw byte below 0x20, which JSON
// allows in a string only escaped: a flipped bit of a letter ('E' ->
// 0x05). The scan does not look for them; build checks each distinct name
// and task type once (names written with escapes are left alone).
type ctrlText struct {
	n     int
	first string
}

// check looks at the name of id.
func (c *ctrlText) check(in *interner, id uint32) {
	s := in.str(id)
	if !hasCtrl(s) || in.escaped[id] {
		return
	}
	if c.n == 0 {
		c.first = s
	}
	c.n++
}

// hasCtrl reports whether s holds a byte below 0x20: 8 bytes at a time
// (a byte b < 0x20 is one where b - 0x20 borrows and b's top bit is
// clear; a borrow only marks bytes above a true one), then the rest.
func hasCtrl(s string) bool {
	const ones, highs = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if (x-ones)&^x&highs != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] < ' ' {
			return true
		}
	}
	return false
}

// planeThread reports whether thread tid (an index) of HCCL process p is
// named as a plane's ("Plane {k}").
func (rd *reader) planeThread(p int, tid uint32) bool {
	return strings.HasPrefix(rd.threads[[2]int64{int64(p), rd.tids[tid]}], "Plane ")
}

// isBigOpThread reports whether an HCCL-process thread holds big ops
// ("Group {g} Communication", "Group {g} Aicpu Communication") rather than
// plane tasks ("Plane {k}").
func isBigOpThread(name string) bool {
	return strings.HasPrefix(name, "Group") && strings.HasSuffix(name, "Communication")
}

// taskInfo is what a name and task type tell of a device task, computed
// once per pair.
type taskInfo struct {
	tt     uint32
	opType model.Sym
	class  model.TaskClass
	coll   bool // a collective, when in a Kineto device process
	// the extras of the last two tasks of this name and task type
	// that differed in model id, stream or device (an EVENT_WAIT's
	// alternate between streams), the last first
	x [2]lastExtra
}

// taskInfos holds the taskInfo of each name (and task type) met.
type taskInfos struct {
	// at: by name id, 1 + the index in list of the name's (first task
	// type's) info, 0 before its first task: 4 bytes a name, most of which
	// (the collectives' unique names) never name a task
	at   []int32
	list []taskInfo
	more map[[2]uint32]*taskInfo // a name seen with a second task type
}

// get is the info of name with task type tt, nil when not made yet.
func (x *taskInfos) get(name, tt uint32) *taskInfo {
	if int(name) < len(x.at) {
		if k := x.at[name]; k > 0 && x.list[k-1].tt == tt {
			return &x.list[k-1]
		}
	}
	return nil
}

// lastExtra is a task's extras (model.Extra) and what made them differ
// between tasks of one name and task type: its model id, stream and device.
type lastExtra struct {
	extra model.Extra
	// dev is the device + 1 (0: no task yet)
	dev uint32
	// ms is the model id and stream, one word to compare
	ms uint64
}

// newLastExtra is the key of a task of model id m, stream s and device d.
func newLastExtra(m uint32, s int32, d int16) lastExtra {
	return lastExtra{dev: uint32(uint16(d)) + 1, ms: uint64(m)<<32 | uint64(uint32(s))}
}

// differs reports whether a task of key k needs other extras than o's.
func (k *lastExtra) differs(o *lastExtra) bool { return o.ms != k.ms || o.dev != k.dev }

// build turns what the scan collected into the rank's model. Map: the
// flow join (when flows outnumber their ends); Python processes
// (ProfilerStep steps by name id, the framework ops' numbers for the
// join; the ops themselves last, pythonOps, or their summary in their
// place, opSummer); flow ends resolved to ops;
// slices of processes whose metadata was cut; device processes (tasks,
// each name's class and HCCL type computed once per name id, HCCL threads
// as big ops or plane tasks); then availability, truncation notes and the
// device id. Kept long on purpose: one pass over rd.logs per process kind,
// with the per-name caches local (docs/architecture.md, "Kept on purpose").
func (rd *reader) build(rank *model.Rank, file string) {
	rank.HCCLPlane.SDMA, rank.HCCLPlane.RDMA = rd.planeSDMA, rd.planeRDMA
	rd.in.release()
	var join *flowJoin
	if rd.nFlows > rd.nFlowEnds {
		join = rd.decodeFlows()
	}
	// Python processes first: steps, the framework ops and their indexes
	// for the flow join. A rank whose tasks' array is large makes its
	// ops after the tasks (pythonOps), from the logs kept encoded (a
	// third of the ops' 24 bytes each) while that array is allocated, the
	// build's live peak; a small one makes them here, in the one decode.
	var s slice
	nTasks := 0
	for p := range rd.logs {
		if k := rd.logs[p].kind; k == procHardware || k == procKineto {
			nTasks += rd.logs[p].n
		}
	}
	late := nTasks*taskBytes >= lateOpsBytes
	// a rank reduced once read takes the ops' summary (opSummer) in
	// their place, when each thread's ops come in time order
	var sum *opSummer
	if rank.TaskLinksOnly() && summarizeOps {
		sum = newOpSummer(rd.in.syms.Len(), len(rd.tids))
		if join != nil {
			// (an op at each flow start, at most)
			sum.sum.Ends = make([]int64, 0, min(rd.count(procPython), len(join.s.op)))
		}
	}
	// ProfilerStep names, by name id: 0 unknown, 1 a step, 2 not one
	isStep := make([]byte, rd.in.syms.Len())
	nOps := int32(0)
	steps := len(rank.Steps)
	// decodePython reads the steps and numbers the ops for the flow
	// join, making them (small rank) or summarizing them (sum); false
	// when a summary's thread went back in time
	decodePython := func() bool {
		if nOps := rd.count(procPython); nOps > 0 && !late && sum == nil {
			rank.FrameworkOps = slices.Grow(rank.FrameworkOps, nOps)
		}
		for p := range rd.logs {
			lg := &rd.logs[p]
			if lg.kind != procPython {
				continue
			}
			d := newDecoder(lg)
			if late || sum != nil {
				d = keptDecoder(lg)
			}
			for d.next(&s) {
				if int(s.name) >= len(isStep) || isStep[s.name] != 2 {
					name := rd.in.str(s.name)
					if strings.HasPrefix(name, "ProfilerStep#") {
						var id int
						if _, err := fmt.Sscanf(name[len("ProfilerStep#"):], "%d", &id); err == nil {
							rank.Steps = append(rank.Steps, model.Step{ID: id, Start: s.ts, End: s.ts + s.dur})
						}
						continue
					}
					if int(s.name) < len(isStep) {
						isStep[s.name] = 2
					}
				}
				if s.flags&fCPUOp == 0 {
					continue
				}
				switch {
				case sum != nil:
					var b int32
					var a, e int
					if join != nil {
						b, a, e = join.find(flowKey{uint16(p), s.tid, s.ts}, &join.s)
					}
					i, ok := sum.op(&s, a < e)
					if !ok {
						return false
					}
					if a < e {
						join.setOp(b, a, e, i)
					}
				case join != nil:
					join.op(flowKey{uint16(p), s.tid, s.ts}, nOps)
				}
				nOps++
				if !late && sum == nil {
					rank.FrameworkOps = append(rank.FrameworkOps, model.FrameworkOp{Start: s.ts, Dur: s.dur, Name: model.Sym(s.name), Thread: rank.Threads.ID(rd.tids[s.tid])})
				}
			}
			if !late && sum == nil {
				lg.chunks, lg.segs = nil, nil
			}
		}
		return true
	}
	if !decodePython() {
		// the ops are made after all, from the logs the summary kept
		sum, nOps, rank.Steps = nil, 0, rank.Steps[:steps]
		clear(isStep)
		if join != nil {
			join.forgetOps()
		}
		decodePython()
	}
	if sum != nil {
		for p := range rd.logs {
			if lg := &rd.logs[p]; lg.kind == procPython {
				lg.chunks, lg.segs = nil, nil
			}
		}
	}
	lateOps := late && sum == nil
	// flow ends, resolved to ops through the flow id
	// (the task links alone, 8 bytes each, for a rank reduced once read)
	var opTasks []model.OpTask
	nPairs := -1
	if join != nil {
		if n := join.resolve(); n == 0 {
			join = nil
		} else if rank.TaskLinksOnly() {
			// (no room for the ends on HCCL threads; allocated once the
			// tasks' array is, and the logs moved into it are garbage)
			hccl := func(p uint16) bool { return rd.logs[p].kind == procHCCL }
			nPairs = join.endsOutside(hccl)
		} else {
			rank.Links = slices.Grow(rank.Links, n)
		}
	}
	pairs := nPairs >= 0
	link := func(k flowKey, task, hccl int32) {
		if join == nil || pairs && task < 0 {
			return
		}
		join.each(k, func(op int32) {
			if pairs {
				opTasks = append(opTasks, model.OpTask{Op: op, Task: task})
				return
			}
			rank.Links = append(rank.Links, model.Link{Op: op, Task: task, HCCL: hccl})
		})
	}
	// slices on processes (or HCCL threads) whose names were never read:
	// in a truncated file their metadata lay after the cut
	haveHW, haveHCCL := false, false
	unnamed, unnamedHCCL := 0, 0
	for p := range rd.logs {
		switch rd.logs[p].kind {
		case procHardware, procKineto:
			haveHW = true
		case procHCCL:
			haveHCCL = true
		case procUnknown:
			unnamed += rd.logs[p].n
		}
	}
	// device processes: one per device (torch_npu's pid_device_map,
	// msprof's per-device loop), each task and op tagged with its device
	devOf := rd.deviceOfProcs(rank, file)
	dev16 := func(p int) int16 {
		if devOf == nil {
			return 0
		}
		return int16(devOf[p])
	}
	// a large tasks' array holds the device logs until its tasks are made
	var tl tail
	if nTasks > 0 {
		collectBefore(nTasks * taskBytes)
		rank.Tasks = slices.Grow(rank.Tasks, nTasks)
		if late {
			var dl []*plog
			for p := range rd.logs {
				if k := rd.logs[p].kind; k == procHardware || k == procKineto {
					dl = append(dl, &rd.logs[p])
				}
			}
			if tl = newTail(rank.Tasks, dl); tl.base != nil {
				// the logs' old chunks are garbage (a cycle the
				// allocation started kept them): the next goal is
				// set without them
				collect()
			}
		}
	}
	if nPairs >= 0 {
		opTasks = make([]model.OpTask, 0, nPairs)
	}
	if rd.count(procHCCL)*hcclBytes >= sizeHCCLBytes {
		// a large HCCL log: the collectives' array sized, not grown
		// (at 1 GB appends went through 21 MB of arrays beside the
		// tasks)
		rank.HCCL = slices.Grow(rank.HCCL, rd.bigOps())
	}
	// what a name (and task type) tells, by name id: computed once
	nNames := rd.in.syms.Len()
	var infos taskInfos
	// distinct task types (with their names) that no table of
	// model.KnownTaskType holds, and the first
	unknownTypes, unknownType := 0, ""
	// taskInfoOf is infos.get's slow path: a name's first task, or a name
	// seen with a second task type; its pointer is good until its next call
	taskInfoOf := func(name, tt uint32) *taskInfo {
		if ti, ok := infos.more[[2]uint32{name, tt}]; ok {
			return ti
		}
		n := rd.in.str(name)
		ti := taskInfo{tt: tt, opType: rank.Intern(rd.opType(n)), class: model.ClassifyTask(rd.in.str(tt), n),
			coll: kinetoCollective(n, rd.in.str(tt))}
		rd.ctrl.check(rd.in, name)
		rd.ctrl.check(rd.in, tt)
		if tt != 0 && !model.KnownTaskType(rd.in.str(tt)) {
			// a damaged Task Type ("AI_VECTOR_COcRE"), or one newer
			// than npuprof: the task is classed other
			if unknownTypes == 0 {
				unknownType = rd.in.str(tt)
			}
			unknownTypes++
		}
		if int(name) < len(infos.at) && infos.at[name] == 0 {
			infos.list = append(infos.list, ti)
			infos.at[name] = int32(len(infos.list))
			return &infos.list[len(infos.list)-1]
		}
		if infos.more == nil {
			infos.more = map[[2]uint32]*taskInfo{}
		}
		infos.more[[2]uint32{name, tt}] = &ti
		return &ti
	}
	hn := hcclNames{n: nNames}
	// slices of a Kineto NPU process that are no kernel or copy (fOther),
	// and the first one's name id + 1
	otherNPU, otherName := 0, uint32(0)
	// per HCCL thread (tid index): 0 unknown yet, 1 big ops, 2 plane
	// tasks; unnamed threads are also marked in unnamedHCCLThreads
	threadKind := make([]byte, len(rd.tids))
	unnamedThread := make([]bool, len(rd.tids))
	// plane tasks whose args hold no transport type, and the first
	noTransport, noTransportName, noTransportTs := 0, "", int64(0)
	// addHCCL appends the big op s of process p
	addHCCL := func(p int, s *slice) {
		hi := hn.info(rd, rank, s.name)
		link(flowKey{uint16(p), s.tid, s.ts}, -1, int32(len(rank.HCCL)))
		rank.HCCL = append(rank.HCCL, model.HCCLOp{
			Start: s.ts, Dur: s.dur, Name: model.Sym(s.name), Type: hi.typ,
			HashSuffix: hi.hash, Variant: hi.variant, Device: dev16(p),
		})
	}
	for p := range rd.logs {
		lg := &rd.logs[p]
		switch lg.kind {
		case procHardware, procKineto:
			if infos.at == nil {
				infos.at = make([]int32, nNames)
			}
			d, room, dev := newDecoder(lg), 0, dev16(p)
			for d.next(&s) {
				if s.flags&fOther != 0 && lg.kind == procKineto {
					otherNPU, otherName = otherNPU+1, cmp.Or(otherName, s.name+1)
					continue
				}
				ti := infos.get(s.name, s.tt)
				if ti == nil {
					ti = taskInfoOf(s.name, s.tt)
				}
				if ti.coll && lg.kind == procKineto {
					addHCCL(p, &s)
					continue
				}
				stream := int32(s.stream)
				if s.stream < 0 {
					stream = int32(rd.tids[s.tid])
				}
				key := newLastExtra(s.modelID, stream, dev)
				if key.differs(&ti.x[0]) {
					if key.differs(&ti.x[1]) {
						key.extra = rank.Extras.ID(model.TaskExtra{Name: model.Sym(s.name), OpType: ti.opType, TaskType: model.Sym(s.tt), ModelID: s.modelID,
							Stream: stream, Class: ti.class, Device: dev})
					} else {
						key.extra = ti.x[1].extra
					}
					ti.x[0], ti.x[1] = key, ti.x[0]
				}
				link(flowKey{uint16(p), s.tid, s.ts}, int32(len(rank.Tasks)), -1)
				t := model.DeviceTask{Start: s.ts, Extra: ti.x[0].extra}
				rank.SetDur(&t, s.dur)
				if len(rank.Tasks) >= room {
					room = tl.reserve(len(rank.Tasks)+1, taskBytes, &d)
				}
				rank.Tasks = append(rank.Tasks, t)
			}
		case procOverlap:
			own := &rank.OwnOverlap
			if devOf != nil {
				own = &rank.Part(devOf[p]).OwnOverlap
			}
			d := newDecoder(lg)
			unknown, first := 0, ""
			// each thread holds one kind, and is named for it: a slice
			// of another kind there took its name from another event
			// (a duplicated chunk: "Free" with Computing's times)
			kindOf := map[uint32]string{}
			astray, firstAstray, astrayThread := 0, "", ""
			for d.next(&s) {
				name := rd.in.str(s.name)
				tn, ok := kindOf[s.tid]
				if !ok {
					tn = rd.threads[[2]int64{int64(p), rd.tids[s.tid]}]
					if !model.OverlapKind(tn) {
						tn = ""
					}
					kindOf[s.tid] = tn
				}
				if tn != "" && name != tn && model.OverlapKind(name) {
					if astray == 0 {
						firstAstray, astrayThread = name, tn
					}
					astray++
					continue
				}
				if !own.Add(name, s.ts, s.dur) {
					if unknown == 0 {
						first = name
					}
					unknown++
				}
			}
			if unknown > 0 {
				// a damaged name: that slice is in none of the four sums
				rank.Warn(file, "%d Overlap Analysis slice(s) of no kind npuprof knows (first: %q; Computing, Communication, Communication(Not Overlapped) and Free are): left out of the profiler's own overlap", unknown, first[:min(len(first), 60)])
			}
			if astray > 0 {
				rank.Warn(file, "%d Overlap Analysis slice(s) of one kind on the thread of another (first: %q on thread %q), where each thread holds the slices of its name (damaged events?): left out of the profiler's own overlap", astray, firstAstray, astrayThread)
			}
		case procHCCL:
			plane := &rank.HCCLPlane
			if devOf != nil {
				plane = &rank.Part(devOf[p]).HCCLPlane
				if p < len(rd.planeBy) {
					plane.SDMA, plane.RDMA = rd.planeBy[p][0], rd.planeBy[p][1]
				}
			}
			clear(threadKind)
			d := newDecoder(lg)
			for d.next(&s) {
				k := threadKind[s.tid]
				if k == 0 {
					var named bool
					k, named = rd.hcclThreadKind(p, s.tid)
					if !named {
						unnamedThread[s.tid] = true
					}
					threadKind[s.tid] = k
				}
				if unnamedThread[s.tid] {
					unnamedHCCL++
				}
				if k != 1 {
					plane.Tasks++
					if s.flags&fTransport == 0 && rd.planeThread(p, s.tid) {
						// a plane task's args always name its transport
						if noTransport == 0 {
							noTransportName, noTransportTs = rd.in.str(s.name), s.ts
						}
						noTransport++
					}
					continue
				}
				addHCCL(p, &s)
			}
		}
		if lg.kind != procPython { // late ops are decoded from them last
			lg.chunks, lg.segs = nil, nil
		}
	}
	join = nil // the resolved ends are garbage now
	if late {
		// and so are the logs: what follows (the framework ops, or
		// their reduction and the rest of the read) is not allocated on
		// them
		collect()
	}
	if opTasks != nil {
		rank.SetTaskLinks(opTasks)
	}
	if sum != nil {
		rank.SetOpSummary(&sum.sum)
	}
	if lateOps {
		rd.pythonOps(rank, int(nOps), isStep)
	}
	if unknownTypes > 0 {
		rank.Warnings = append(rank.Warnings, model.Warning{File: file, Count: unknownTypes,
			Message: fmt.Sprintf("%d device task name(s) come with a Task Type npuprof does not know (first: %q), expected a device task type (AI_CORE, AI_VECTOR_CORE, MIX_AIV, AI_CPU, EVENT_WAIT_SQE, ...): those tasks count neither as compute nor as collectives or waits", unknownTypes, unknownType[:min(len(unknownType), 60)])})
	}
	if rd.ctrl.n > 0 {
		rank.Warnings = append(rank.Warnings, model.Warning{File: file, Count: rd.ctrl.n,
			Message: fmt.Sprintf("%d device task or collective name(s) or task type(s) hold a control character, which no JSON string may hold unescaped (first: %q): damaged bytes, read as they are", rd.ctrl.n, rd.ctrl.first)})
	}
	if noTransport > 0 {
		// the args key or the transport type key damaged: the task is in
		// neither count. Named as the events dropped for a damaged key
		// are (warnDropped): the read itself went on whole, so the rank
		// is not partial (a file is partial when cut or resynchronised)
		rank.Warnings = append(rank.Warnings, model.Warning{File: file, Count: noTransport,
			Message: fmt.Sprintf("%d HCCL plane task(s) (on \"Plane\" threads) have no \"transport type\" in their args, which every plane task's hold (first: %q at ts %d ns): damaged events, left out of hccl.plane.sdma.count and hccl.plane.rdma.count", noTransport, noTransportName, noTransportTs)})
	}
	// A device timeline records every collective, so HCCL is measured (a
	// single-card run legitimately has none) -- unless the file was cut
	// before the metadata that identifies the HCCL process or its threads.
	if rd.bad.runs > 0 {
		rank.Have.TimelinePartial = true
	}
	if rd.stats.Truncated {
		rank.Have.TimelinePartial = true
		at := rd.stats.TruncatedAt
		cut := "truncated"
		if rd.stats.Malformed {
			cut = "malformed"
		}
		if unnamed > 0 {
			rank.Warn(file, "%d slice(s) belong to processes whose process_name metadata lies after byte %d, where the file is %s; they could not be attributed", unnamed, at, cut)
		}
		unnamed = 0
		switch {
		case !haveHW:
			// collectives alone are no timeline: drop them so a
			// kernel_details fallback cannot count them twice
			rank.HCCL = nil
			links := rank.Links[:0]
			for _, l := range rank.Links {
				if l.Task >= 0 {
					links = append(links, l)
				}
			}
			rank.Links = links
			if len(rank.Links) == 0 {
				rank.Links = nil
			}
			rank.Have.TimelineNote = fmt.Sprintf("%s is %s at byte %d, before the Ascend Hardware process metadata, so no device task can be identified", file, cut, at)
		case !haveHCCL || unnamedHCCL > 0:
			rank.Have.HCCLNote = fmt.Sprintf("%s is %s at byte %d, before the HCCL process and thread metadata, so collectives cannot be identified", file, cut, at)
		}
	}
	if unnamed > 0 {
		// (a damaged pid, or a process whose metadata was lost)
		rank.Warn(file, "%d slice(s) belong to processes that no process_name metadata names; they could not be attributed", unnamed)
	}
	rank.Have.Timeline = len(rank.Tasks) > 0 || len(rank.HCCL) > 0
	if rank.Have.TimelinePartial || !rank.Have.Timeline {
		// a cut file holds part of the profiler's own analysis: the
		// window is recomputed from the tasks read
		rank.OwnOverlap = model.OwnOverlap{}
		for i := range rank.PerDevice {
			rank.PerDevice[i].OwnOverlap = model.OwnOverlap{}
		}
	}
	rank.Have.HCCL = rank.Have.Timeline && rank.Have.HCCLNote == ""
	if !rank.Have.Timeline && rank.Have.TimelineNote == "" {
		switch {
		case rd.stats.Malformed:
			rank.Have.TimelineNote = fmt.Sprintf("%s is malformed at byte %d, before any device task", file, rd.stats.TruncatedAt)
		case rd.stats.Truncated:
			rank.Have.TimelineNote = fmt.Sprintf("%s is truncated at byte %d, before any device task", file, rd.stats.TruncatedAt)
		default:
			rank.Have.TimelineNote = fmt.Sprintf("%s has no device tasks (no \"Ascend Hardware\" or HCCL process slices)", file)
		}
	}
	rank.Have.Framework = len(rank.FrameworkOps) > 0 || sum != nil && nOps > 0
	rd.kinetoFinish(rank, file, otherNPU, otherName)
	if rank.Device < 0 && rd.device < 0 {
		rd.device = devFromPid(rd.hwPid)
	}
	if rank.Device < 0 && rd.device >= 0 {
		rank.Device = rd.device
	}
}

// pythonOps makes the rank's framework ops, n of them, from the Python
// processes' logs (released as they are decoded), in the order build
// numbered them for the flow join: the slices that are cpu ops and not
// steps (isStep: 2 for a name that is not one).
func (rd *reader) pythonOps(rank *model.Rank, n int, isStep []byte) {
	if n == 0 {
		return
	}
	rank.FrameworkOps = slices.Grow(rank.FrameworkOps, n)
	var pl []*plog
	for p := range rd.logs {
		if rd.logs[p].kind == procPython {
			pl = append(pl, &rd.logs[p])
		}
	}
	// the ops' array holds the Python logs until the ops are made
	tl := newTail(rank.FrameworkOps, pl)
	var s slice
	for p := range rd.logs {
		if lg := &rd.logs[p]; lg.kind == procPython {
			for d, room := newDecoder(lg), 0; d.next(&s); {
				if s.flags&fCPUOp == 0 || (int(s.name) >= len(isStep) || isStep[s.name] != 2) && strings.HasPrefix(rd.in.str(s.name), "ProfilerStep#") {
					continue // not an op, or a step: as build's first pass
				}
				if len(rank.FrameworkOps) >= room {
					room = tl.reserve(len(rank.FrameworkOps)+1, opBytes, &d)
				}
				rank.FrameworkOps = append(rank.FrameworkOps, model.FrameworkOp{Start: s.ts, Dur: s.dur, Name: model.Sym(s.name), Thread: rank.Threads.ID(rd.tids[s.tid])})
			}
			lg.chunks, lg.segs = nil, nil
		}
	}
}

// bigOps is how many slices the HCCL processes hold on threads of big
// ops (isBigOpThread): the collectives build makes of them.
func (rd *reader) bigOps() int {
	n := 0
	kind := make([]byte, len(rd.tids)) // by tid index: 0 unknown, 1 big ops, 2 not
	var s slice
	for p := range rd.logs {
		lg := &rd.logs[p]
		if lg.kind != procHCCL {
			continue
		}
		clear(kind)
		for d := keptDecoder(lg); d.next(&s); {
			k := kind[s.tid]
			if k == 0 {
				k, _ = rd.hcclThreadKind(p, s.tid)
				kind[s.tid] = k
			}
			if k == 1 {
				n++
			}
		}
	}
	return n
}

// sizeHCCLBytes is the size of the HCCL processes' slices, as collectives,
// from which build counts the collectives before making them (a variable
// for the tests).
var sizeHCCLBytes = bigArrayBytes / 16

// summarizeOps lets build summarize the ops (a variable for the tests,
// which compare with the ops made).
var summarizeOps = true

// lateOpsBytes is the size of the tasks' array from which build makes
// the framework ops after the tasks (a variable for the tests, which
// read both ways).
var lateOpsBytes = bigArrayBytes

// count is the number of slices of the processes of a kind.
func (rd *reader) count(kind int) int {
	n := 0
	for p := range rd.logs {
		if rd.logs[p].kind == kind {
			n += rd.logs[p].n
		}
	}
	return n
}

// taskBytes and opBytes are the sizes of a device task and a framework op.
const (
	taskBytes = int(unsafe.Sizeof(model.DeviceTask{}))
	opBytes   = int(unsafe.Sizeof(model.FrameworkOp{}))
	hcclBytes = int(unsafe.Sizeof(model.HCCLOp{}))
)

// bigArrayBytes is the size of an array from which build collects the
// read's garbage before allocating it.
const bigArrayBytes = 16 << 20

// Collect is the collection the build of a large rank runs before its
// tasks' array is allocated (collectBefore) and once the logs moved into
// it (tail): nil (the default) runs none; npuprof's GC policy sets it
// (pipeline.SetDefaultGC).
var Collect func()

// collect runs Collect, when set.
func collect() {
	if Collect != nil {
		Collect()
	}
}

// collectBefore collects before an array of n bytes is allocated, when n
// is large: the tasks are allocated whole (sized from the logs), and an
// array that lands on uncollected garbage (the decoded Python log, the
// flow join's starts) starts the next collection late, with the heap
// past its goal by that garbage (at 1 GB: 129 MB for 102 MB live). What
// is live then is mostly the logs' chunks, which hold no pointers: the
// cycle costs little.
func collectBefore(n int) {
	if n >= bigArrayBytes {
		collect()
	}
}

// countKind counts the processes of a kind.
func countKind(logs []plog, kind int) int {
	n := 0
	for i := range logs {
		if logs[i].kind == kind {
			n++
		}
	}
	return n
}

// devFromPid decodes the device id from a packed device pid,
// (process_pid << 10) | (layer_sort_index << 5) | device_id, where device 31
// means host (docs/formats.md#device-pids). It is only a fallback for mid-version traces
// whose process_labels say "NPU" without the id; small (old, unpacked) pids
// give -1.
func devFromPid(pid int64) int {
	if pid < 1<<10 {
		return -1
	}
	if d := int(pid & 31); d != 31 {
		return d
	}
	return -1
}
