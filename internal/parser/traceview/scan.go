package traceview

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/bits"

	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// The scanner reads the top-level JSON array in large blocks and parses
// each event object in place, in a single pass: it finds the keys the
// model needs (ph, name, pid, tid, ts, dur, cat, id and a few `args` keys),
// skips every other value without looking inside strings (bytes.IndexByte
// finds the closing quote), and never copies the event. An event cut by the
// end of a block is parsed again from its first byte after the block is
// refilled; with 1 MiB blocks and ~200-byte events that is rare.

// blockSize is the first read buffer's size; while the input keeps
// coming the buffer doubles up to maxBlock (and beyond, for one big event).
// A variable so the fuzz target can shrink it and exercise every refill.
var blockSize = 64 << 10

const maxBlock = 1 << 20

// MaxEventBytes is the largest single event the reader accepts. A bigger
// event (no profiler writes one; a corrupt or hostile file might) is
// skipped with a warning naming its byte offset, so memory stays bounded
// by this plus one read block. A variable so tests can lower it.
var MaxEventBytes = 64 << 20

var (
	errTruncated  = errors.New("truncated")
	errNotTrace   = errors.New("not a JSON trace array")
	errEventLarge = errors.New("event too large")
	errEventBad   = errors.New("malformed event")
	// errMore is the parsers' signal that the event runs past the data
	// read so far.
	errMore = errors.New("need more data")
	errBad  = errors.New("malformed JSON")
)

// source is the buffered input: blocks read from an io.Reader, or, for a
// plain file (newMapSource), windows of the file mapped read-only, which
// spares the kernel's copy into a buffer (on a 2-CPU VM, read(2) of 200 MB
// cost 0.17 s of system time; mapping 1 MiB windows 0.06 s).
type source struct {
	r      io.Reader
	buf    []byte
	pos    int   // next unread byte in buf
	end    int   // valid bytes in buf
	base   int64 // file offset of buf[0]
	eof    bool
	rerr   error
	maxEvt int
	// object: the events are the "traceEvents" array of an object
	object bool
	// head is what a Kineto header before "traceEvents" says (kineto.go)
	head kinetoHead
	// comma: skipSpace(true) skipped a ',' since it was last cleared
	comma bool
	// mapped input: the file, where the input ends, and whether buf is a
	// mapping (to be unmapped)
	mf     mapFile
	mend   int64
	mapped bool
}

// mapWindow is the size of a mapped window (a variable for tests).
var mapWindow = 1 << 20

// mapFile is what a mapped source needs of a file.
type mapFile interface {
	Fd() uintptr
}

// close releases a mapped window; the source reads nothing more.
func (s *source) close() {
	if s.mapped {
		unmap(s.buf)
		s.mapped = false
	}
	s.buf, s.pos, s.end, s.eof = nil, 0, 0, true
}

// remap is fill for a mapped source: it maps a window that starts at the
// page holding buf[keep] and reaches past the data held so far (growing
// for an event larger than a window).
func (s *source) remap(keep int) bool {
	if s.eof {
		return false
	}
	start := s.base + int64(keep)
	have := s.base + int64(s.end)
	if have >= s.mend {
		s.eof = true
		return false
	}
	aligned := start &^ int64(pageSize-1)
	length := int64(mapWindow)
	for aligned+length <= have {
		length *= 2
	}
	length = min(length, s.mend-aligned)
	b, err := mapAt(s.mf, aligned, int(length))
	if err != nil {
		s.eof, s.rerr = true, err
		return false
	}
	if s.mapped {
		unmap(s.buf)
	}
	s.pos = int(s.base + int64(s.pos) - aligned)
	s.base, s.buf, s.end, s.mapped = aligned, b, len(b), true
	return true
}

// newMapSource maps the file f from byte off to byte end, or returns nil
// when the platform or the file cannot be mapped (read it instead).
func newMapSource(f io.ReaderAt, off, end int64) *source {
	mf, ok := f.(mapFile)
	if !ok || !canMap || off >= end {
		return nil
	}
	s := &source{mf: mf, base: off, mend: end, maxEvt: MaxEventBytes}
	if !s.remap(0) {
		return nil
	}
	return s
}

func newSource(r io.Reader) *source {
	return &source{r: r, buf: make([]byte, blockSize), maxEvt: MaxEventBytes}
}

// fill reads more data, keeping buf[keep:end]; it returns false when no
// more data could be read.
func (s *source) fill(keep int) bool {
	if s.mf != nil {
		return s.remap(keep)
	}
	if s.eof {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end = n
	}
	// grow the block while the input keeps coming (up to maxBlock), or
	// when one event does not fit
	if s.end == len(s.buf) || (len(s.buf) < maxBlock && s.base >= int64(4*len(s.buf))) {
		nb := make([]byte, len(s.buf)*2)
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	// read at least a few KiB (or to the end of the buffer) per fill, so a
	// reader that returns tiny pieces does not make the event parser start
	// over for every piece
	want := min(len(s.buf)-s.end, 4096)
	got := 0
	for got < want {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		got += n
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.rerr = err
			}
			return got > 0
		}
	}
	return true
}

// offset returns the file offset of the next unread byte.
func (s *source) offset() int64 { return s.base + int64(s.pos) }

func isSpace(c byte) bool { return c <= ' ' && (c == ' ' || c == '\n' || c == '\r' || c == '\t') }

// skipSpace advances past whitespace (and commas when comma is true); it
// returns false at the end of the input.
func (s *source) skipSpace(comma bool) bool {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c > ' ' && c != ',' {
				return true
			}
			if isSpace(c) || (comma && c == ',') {
				s.comma = s.comma || c == ','
				s.pos++
				continue
			}
			return true
		}
		if !s.fill(s.pos) {
			return false
		}
	}
}

// start consumes the opening '[' (or `{"traceEvents": [`).
func (s *source) start() error {
	if !s.skipSpace(false) {
		return errNotTrace
	}
	// UTF-8 BOM
	if s.end-s.pos < 3 {
		s.fill(s.pos)
	}
	if s.end-s.pos >= 3 && s.buf[s.pos] == 0xEF && s.buf[s.pos+1] == 0xBB && s.buf[s.pos+2] == 0xBF {
		s.pos += 3
		if !s.skipSpace(false) {
			return errNotTrace
		}
	}
	switch s.buf[s.pos] {
	case '[':
		s.pos++
		return nil
	case '{':
		// Kineto-style {"traceEvents": [...]}: find the array.
		for {
			i := bytes.Index(s.buf[s.pos:s.end], []byte(`"traceEvents"`))
			if i >= 0 {
				s.head.read(s.buf[s.pos : s.pos+i])
				s.pos += i + len(`"traceEvents"`)
				if !s.skipSpace(false) || s.buf[s.pos] != ':' {
					return errNotTrace
				}
				s.pos++
				if !s.skipSpace(false) || s.buf[s.pos] != '[' {
					return errNotTrace
				}
				s.pos++
				s.object = true
				return nil
			}
			s.head.read(s.buf[s.pos:s.end])
			keep := s.end - 16
			if keep < s.pos {
				keep = s.pos
			}
			s.pos = keep
			if !s.fill(keep) {
				return errNotTrace
			}
		}
	}
	return errNotTrace
}

// skipEvent scans the event that starts at buf[begin] ('{') to its end,
// string- and nesting-aware, refilling the buffer and keeping nothing
// before the scan position (so an event of any size costs one block). It
// returns the index just after the event, or -1 when the input ends first.
func (s *source) skipEvent(begin int) int {
	i := begin
	depth := 0
	inStr, esc := false, false
	for {
		for i < s.end {
			c := s.buf[i]
			i++
			if inStr {
				switch {
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == '"':
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i
				}
			}
		}
		s.pos = i
		if !s.fill(i) {
			return -1
		}
		i = s.pos
	}
}

// lookBehind is how many bytes before a candidate event start nextEvent
// keeps across refills, to see the ',' that precedes it.
const lookBehind = 64

// nextEvent looks for the next event start after buf[from], as every
// profiler writes one: a '{' preceded by ',' and followed by '"'
// (whitespace allowed around both). It is how the reader resynchronises
// after bytes that are not an event: a '{' inside a broken string does not
// count unless it looks exactly like that, and the caller still parses
// what it finds before trusting it. loose (for bytes between events) also
// takes the first '{' followed by '"' while no '"' was skipped. It leaves
// s.pos at the '{' and returns true, or returns false when the input ends
// first; quoted tells whether the bytes skipped held a '"'.
func (s *source) nextEvent(from int, loose bool) (found, quoted bool) {
	i := from + 1
	// what lies before buf[from] depends on where the blocks were cut:
	// look back no further than from+1, and then lookBehind bytes
	lo := s.base + int64(from) + 1
	for {
		for i < s.end {
			j := bytes.IndexByte(s.buf[i:s.end], '{')
			if j < 0 {
				quoted = quoted || bytes.IndexByte(s.buf[i:s.end], '"') >= 0
				i = s.end
				break
			}
			j += i
			quoted = quoted || bytes.IndexByte(s.buf[i:j], '"') >= 0
			k := j + 1
			for k < s.end && isSpace(s.buf[k]) {
				k++
			}
			if k+8 > s.end && !s.eof {
				i = j // look again with more data
				break
			}
			i = j + 1
			if k == s.end || s.buf[k] != '"' {
				continue
			}
			floor := max(int(lo-s.base), j-lookBehind, 0)
			if (loose && !quoted) || commaBefore(s.buf, j, floor) || eventKeyAt(s.buf[:s.end], j, k, floor) {
				s.pos = j
				return true, quoted
			}
		}
		s.pos = i
		if !s.fill(max(i-lookBehind, 0)) {
			s.pos = s.end
			return false, quoted
		}
		i = s.pos
	}
}

// eventKeyAt reports whether the '{' at b[j] (its '"' at b[k]) opens an
// event whose bytes before it were damaged: its first key is one a trace
// event starts with, and it is not a value (no ':' or '[' before it).
func eventKeyAt(b []byte, j, k, min int) bool {
	if p := lastByte(b, j, min); p >= 0 && (b[p] == ':' || b[p] == '[') {
		return false
	}
	rest := b[k+1:]
	for _, key := range [...]string{`ph"`, `name"`, `pid"`, `tid"`, `ts"`, `cat"`} {
		if bytes.HasPrefix(rest, []byte(key)) {
			return true
		}
	}
	return false
}

// commaBefore reports whether the last byte before b[j] (and from
// b[min] on) that is not whitespace is ','.
func commaBefore(b []byte, j, min int) bool {
	k := lastByte(b, j, min)
	return k >= 0 && b[k] == ','
}

// lastByte returns the index of the last byte before b[j], from b[min]
// on, that is not whitespace, or -1.
func lastByte(b []byte, j, min int) int {
	k := j - 1
	for k >= min && isSpace(b[k]) {
		k--
	}
	if k < min {
		return -1
	}
	return k
}

// --- in-place parsing of one event object ---
//
// Every helper takes the data b and an index i and returns the index after
// what it read, or a negative value: -1 (errMore) when b ends first, -2
// (errBad) when the bytes are not JSON.

const (
	iMore = -1
	iBad  = -2
)

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// quoteOrSlash returns a mask whose lowest set bit marks the first '"' or
// '\\' among the 8 bytes of x (little endian); 0 when there is none.
func quoteOrSlash(x uint64) uint64 {
	q := x ^ (swarLo * '"')
	s := x ^ (swarLo * '\\')
	return ((q-swarLo)&^q | (s-swarLo)&^s) & swarHi
}

// strEnd returns the index of the closing quote of the string whose
// content starts at b[i] (just after the opening quote), and whether the
// content holds a backslash. Short strings are scanned 8 bytes at a time;
// past 64 bytes (call stacks, long kernel names) bytes.IndexByte takes over.
func strEnd(b []byte, i int) (int, bool) {
	esc := false
	start := i
	for i+8 <= len(b) {
		m := quoteOrSlash(le64(b, i))
		if m == 0 {
			i += 8
			if i-start >= 64 {
				return strEndLong(b, i, esc)
			}
			continue
		}
		i += bits.TrailingZeros64(m) >> 3
		if b[i] == '"' {
			return i, esc
		}
		esc = true
		i += 2
	}
	for i < len(b) {
		switch b[i] {
		case '"':
			return i, esc
		case '\\':
			esc = true
			i += 2
			continue
		}
		i++
	}
	return iMore, esc
}

// strEndLong is strEnd for long strings.
func strEndLong(b []byte, i int, esc bool) (int, bool) {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return iMore, esc
		}
		j += i
		if k := bytes.IndexByte(b[i:j], '\\'); k < 0 {
			return j, esc
		} else {
			// resolve escapes from the first backslash on
			esc = true
			i += k
			for i < j {
				if b[i] == '\\' {
					i += 2
					continue
				}
				i++
			}
			if i == j {
				return j, esc
			}
			// the quote at j was escaped
			i = j + 1
		}
	}
}

// skipComposite returns the index after the object or array starting at
// b[i].
func skipComposite(b []byte, i int) int {
	if c := b[i]; c == '{' || c == '[' {
		return skipRest(b, i+1)
	}
	return skipCompositeSlow(b, i)
}

// skipCompositeSlow is skipComposite for a value that does not start with
// '{' or '[' (no caller passes one; kept so the function stays total).
func skipCompositeSlow(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			e, _ := strEnd(b, i+1)
			if e < 0 {
				return e
			}
			i = e + 1
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return iMore
}

// value is one raw JSON value: for strings, the content between the
// quotes (str true); otherwise the literal text.
type value struct {
	b   []byte
	str bool
	esc bool // content holds escapes
	set bool // args values: the key was present
}

// event is what one trace event holds that npuprof reads. Byte slices
// point into the read buffer and are valid until the next refill.
type event struct {
	phV                   value
	name, cat             value
	pid, tid, ts, dur, id value
	// from args; set tells whether the key was present
	taskType, stream, modelID value
	argName, argLabels        value
	// kType is a Kineto device slice's args "type" (KERNEL_AICORE, ...)
	kType value
	// transport is an HCCL plane task's transport (planeSDMA, planeRDMA;
	// 0 none)
	transport uint8
	hasArgs   bool
	// pidIdx is 1 + the reader's index of pid, resolved with kind (0
	// when it was not), so that the reader need not look pid up again
	pidIdx uint32
	// kind is the process kind of pid as the reader knew it when pid was
	// read (procUnknown when the event has no reader or no pid yet)
	kind int
}

// metaName reports whether an event name is one of the metadata events the
// reader reads (process_name, process_labels, thread_name, ...): such an
// event is never skipped.
func metaName(n []byte) bool {
	return bytes.HasPrefix(n, []byte("process_")) || bytes.HasPrefix(n, []byte("thread_"))
}

// plain reports whether the rest of ev (or its args) can be skipped
// unread: its name is known and not metadata, and its process is one no
// pass reads beyond name, ids and times.
func (ev *event) plain() bool {
	if ev.name.b == nil || metaName(ev.name.b) {
		return false
	}
	return len(ev.phV.b) != 1 || ev.phV.b[0] != 'M'
}

// skipArgs reports whether ev's args object holds nothing the reader
// keeps: args are read for metadata and for device (Ascend Hardware)
// tasks, and for slices of processes whose name is not known yet.
func (ev *event) skipArgs() bool {
	switch ev.kind {
	case procPython, procHCCL, procOther, procOverlap:
		return ev.plain()
	}
	if c := ev.cat.b; ev.cat.str && (string(c) == "cpu_op" || string(c) == "python_function") {
		return ev.plain()
	}
	return false
}

// transportName is the key of a plane task's transport type in its args,
// as torch_npu writes them ("transport type": "SDMA"), and transportWord
// its first 8 bytes as one word.
var (
	transportName = []byte(`"transport type"`)
	transportWord = binary.LittleEndian.Uint64(transportName)
)

// transportOf is the transport an HCCL slice's args name: planeSDMA,
// planeRDMA, planeOther (the key with another value: LOCAL, yet another
// transport, or no string) or 0 (no such key: big ops, a device kernel
// read before its process was known, or a plane task whose key was
// damaged, which build names). One search: each 'y' of the args is tried
// as the key's (an IndexByte each, then one word compared, a call only
// where the word matches); never a substring search, whose first byte
// would be the '"' that opens every key and string. The reader counts it
// once the event is whole (rd.event): a parse cut by the buffer's end is
// repeated.
func transportOf(args []byte) uint8 {
	const y = 12 // the index of 'y' in transportName
	for off := y; off < len(args); {
		k := bytes.IndexByte(args[off:], 'y')
		if k < 0 {
			return 0
		}
		k += off
		off = k + 1
		s, e := k-y, k-y+len(transportName)
		if e <= len(args) && le64(args, s) == transportWord && string(args[s:e]) == string(transportName) {
			return transportAfter(args[e:])
		}
	}
	return 0
}

// transportAfter is the transport the value after the transport type key
// names (a: the bytes after the key), with any white space around its
// colon (valid JSON all the same).
func transportAfter(a []byte) uint8 {
	i := 0
	for i < len(a) && isSpace(a[i]) {
		i++
	}
	if i < len(a) && a[i] == ':' {
		for i++; i < len(a) && isSpace(a[i]); i++ {
		}
	}
	if i+5 < len(a) && a[i] == '"' && a[i+5] == '"' {
		switch string(a[i+1 : i+5]) {
		case "SDMA":
			return planeSDMA
		case "RDMA":
			return planeRDMA
		}
	}
	return planeOther
}

// The transports an event's transport field names.
const (
	planeSDMA = 1 + iota
	planeRDMA
	// planeOther: the key is there, with another value
	planeOther
)

// skipRest returns the index after the object whose body continues at
// b[i] (one level deep), without reading its keys.
//
// Most objects it skips are flat (the args of Python and HCCL slices, the
// rest of an Overlap Analysis slice): then the first '}' closes the object,
// which the standard library's vector searches show in a few instructions
// per 32 bytes. That '}' closes it exactly when the bytes before it hold no
// backslash (so quotes pair up), an even number of quotes (so the '}' is
// not in a string) and no bracket (so the depth never changed). Otherwise
// skipRestSlow walks the object.
func skipRest(b []byte, i int) int {
	if e := flatEnd(b, i); e >= 0 {
		return e
	}
	return skipRestSlow(b, i)
}

// flatEnd is skipRest's fast path: the index after the first '}' from
// b[i] when that '}' closes a flat object (see skipRest), else -1.
func flatEnd(b []byte, i int) int {
	if j := bytes.IndexByte(b[i:], '}'); j >= 0 {
		seg := b[i : i+j]
		if bytes.IndexByte(seg, '\\') < 0 && bytes.Count(seg, quote)&1 == 0 &&
			bytes.IndexByte(seg, '{') < 0 && bytes.IndexByte(seg, '[') < 0 && bytes.IndexByte(seg, ']') < 0 {
			return i + j + 1
		}
	}
	return -1
}

var quote = []byte{'"'}

// skipRestSlow is skipRest for any object (see skipRestWalk). Bytes
// skipped unparsed are only checked for string and nesting structure, so
// one damaged quote would let the walk run over the next events (strings
// and structure swap places) until another damaged quote closes it:
// parseEvent checks what it skipped (skipChecked).
func skipRestSlow(b []byte, i int) int {
	return skipRestWalk(b, i)
}

// skipChecked is what parseEvent skips unparsed: skip's result for b[i:],
// or iBad when what it skipped spans events (see spansEvents).
func skipChecked(b []byte, i int, skip func([]byte, int) int) int {
	e := skip(b, i)
	if e > 0 && spansEvents(b[i:e]) {
		return iBad
	}
	return e
}

// skipRestChecked is skipChecked(b, i, skipRest), and
// skipArgsChecked skipChecked(b, i, skipComposite) for b[i] == '{'.
// What the flat path (flatEnd) skips holds one '}', its last byte, so it
// cannot span events: only the walk's result is checked.
func skipRestChecked(b []byte, i int) int {
	if e := flatEnd(b, i); e >= 0 {
		return e
	}
	return skipChecked(b, i, skipRestSlow)
}

func skipArgsChecked(b []byte, i int) int {
	if e := flatEnd(b, i+1); e >= 0 {
		return e
	}
	return skipChecked(b, i, skipObjectSlow)
}

// skipObjectSlow is skipComposite's walk for the object at b[i] ('{').
func skipObjectSlow(b []byte, i int) int { return skipRestSlow(b, i+1) }

// spansEvents reports whether seg, the rest of an object after its
// opening brace and possibly some members, holds `}` `,` `{` (whitespace
// between allowed) and is not valid JSON. A valid object can hold that
// only in an array of objects, and then it is left alone.
func spansEvents(seg []byte) bool {
	for k := 0; ; {
		j := bytes.IndexByte(seg[k:], '}')
		if j < 0 {
			return false
		}
		k += j + 1
		n := k
		for n < len(seg) && isSpace(seg[n]) {
			n++
		}
		if n == len(seg) || seg[n] != ',' {
			continue
		}
		n++
		for n < len(seg) && isSpace(seg[n]) {
			n++
		}
		if n < len(seg) && seg[n] == '{' {
			body := bytes.TrimLeft(seg, ", \t\r\n")
			return !json.Valid(append([]byte{'{'}, body...))
		}
	}
}

// skipRestWalk reads 8 bytes at a time and stops only at quotes,
// backslashes and brackets, keeping track of strings itself (a backslash
// in a string escapes the next byte).
func skipRestWalk(b []byte, i int) int {
	depth := 1
	inStr := false
	skip := i // bytes before skip were escaped by a backslash
	for ; i+8 <= len(b); i += 8 {
		// every quote, backslash and bracket is flagged (a few other
		// bytes may be too: they are read and ignored)
		m := specialMask(le64(b, i))
		for m != 0 {
			k := i + bits.TrailingZeros64(m)>>3
			m &= m - 1
			if k < skip {
				continue
			}
			if inStr {
				switch b[k] {
				case '\\':
					skip = k + 2
				case '"':
					inStr = false
				}
				continue
			}
			switch b[k] {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return k + 1
				}
			}
		}
	}
	for i = max(i, skip); i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return iMore
}

// specialMask sets bit 7 of every byte of x that is '"', '\\', '{', '}',
// '[' or ']' (and maybe of a byte just above one: the borrow of the SWAR
// zero test). '[' and ']' differ from '{' and '}' only in bit 5.
func specialMask(x uint64) uint64 {
	q := x ^ (swarLo * '"')
	s := x ^ (swarLo * '\\')
	y := x | (swarLo * 0x20)
	o := y ^ (swarLo * '{')
	c := y ^ (swarLo * '}')
	return ((q-swarLo)&^q | (s-swarLo)&^s | (o-swarLo)&^o | (c-swarLo)&^c) & swarHi
}

// parseEvent parses the event object starting at b[i] ('{') into ev and
// returns the index after it. It is one loop with the key dispatch inlined:
// this is the hottest code in npuprof. Map: '{', then per key: skip
// whitespace, match the key by length and first byte, read its value
// (ph, name, pid, tid, ts, dur, cat, id, args via parseArgs), or skip it;
// '}' ends the event. Kept long on purpose: splitting the dispatch costs
// calls per key (docs/architecture.md, "Kept on purpose").
//
// With a reader, what no pass reads is skipped without being parsed: once
// pid names a process no pass reads (Overlap Analysis, counters, CANN),
// the rest of a non-metadata event; the args of Python and HCCL slices.
// Skipped bytes are only checked for string and nesting structure.
func parseEvent(b []byte, i int, ev *event, rd *reader) int {
	*ev = event{}
	i++
	for {
		// a key's opening quote where the last value's `, "` left i (every
		// key but the first), or white space first; '}' ends an empty
		// object (or one with a trailing ',')
		if i >= len(b) || b[i] != '"' {
			if i = keyAfterSpace(b, i); i < 0 || b[i] == '}' {
				return endOrErr(i)
			}
		}
		ks := i + 1
		var dst *value
		ke := -1
		args := false
		// fix is the length of the string value the key's fast path
		// expects (ph "X", ts "1736410582431668.784"); 0 none
		fix := 0
		if ks+8 <= len(b) {
			// the keys of the top level are short and few: recognise them
			// (with their closing quote) from one 8-byte load
			w := le64(b, ks)
			// (the keys differ in their first two bytes, so the order of
			// the cases is only their frequency)
			switch {
			case w&mask4 == kPid:
				ke, dst = ks+3, &ev.pid
			case w&mask4 == kTid:
				ke, dst = ks+3, &ev.tid
			case w&mask3 == kTs:
				ke, dst, fix = ks+2, &ev.ts, 20
			case w&mask5 == kName:
				ke, dst = ks+4, &ev.name
			case w&mask3 == kPh:
				ke, dst, fix = ks+2, &ev.phV, 1
			case w&mask4 == kDur:
				ke, dst = ks+3, &ev.dur
			case w&mask5 == kArgs:
				ke, args = ks+4, true
			case w&mask4 == kCat:
				ke, dst = ks+3, &ev.cat
			case w&mask3 == kID:
				ke, dst = ks+2, &ev.id
			}
		}
		if ke < 0 {
			e, _ := strEnd(b, ks)
			if e < 0 {
				return e
			}
			ke = e
		}
		i = ke + 1
		if i+2 < len(b) && b[i+2] > ' ' && le16(b, i) == colonSpace {
			// `": v`, as every profiler writes it
			i += 2
		} else if i = afterColon(b, i); i < 0 {
			return i
		}
		if args && b[i] == '{' {
			if rd != nil && ev.skipArgs() {
				a := i
				i = skipArgsChecked(b, i)
				if i < 0 {
					return i
				}
				ev.hasArgs = true
				if ev.kind == procHCCL {
					ev.transport = transportOf(b[a:i])
				}
				goto next
			}
			a := i
			i = parseArgs(b, i, ev)
			if i < 0 {
				return i
			}
			if (ev.kind == procUnknown || ev.kind == procHCCL) && rd != nil {
				// perhaps a plane task read before its process was known
				// (or before its name)
				ev.transport = transportOf(b[a:i])
			}
			goto next
		}
		if dst == nil && !args {
			// a key the fast path did not see (near the end of the data)
			k := b[ks:ke]
			// kept: a key to the field it fills, as comm.go's setTimeInfo does for its own format
			switch len(k) {
			case 2:
				switch string(k) {
				case "ph":
					dst = &ev.phV
				case "ts":
					dst = &ev.ts
				case "id":
					dst = &ev.id
				}
			case 3:
				switch string(k) {
				case "pid":
					dst = &ev.pid
				case "tid":
					dst = &ev.tid
				case "dur":
					dst = &ev.dur
				case "cat":
					dst = &ev.cat
				}
			case 4:
				switch string(k) {
				case "name":
					dst = &ev.name
				case "args":
					if b[i] == '{' {
						a := i
						i = parseArgs(b, i, ev)
						if i < 0 {
							return i
						}
						if (ev.kind == procUnknown || ev.kind == procHCCL) && rd != nil {
							// as above
							ev.transport = transportOf(b[a:i])
						}
						goto next
					}
				}
			}
		}
		// kept: the value scan written out in both key loops (here and parseArgs): a helper costs a call per value
		if b[i] == '"' {
			// a string of the length its key expects, with no quote or
			// backslash before its closing quote: what strEnd would find
			if fix == 1 && i+3 <= len(b) && b[i+2] == '"' && b[i+1] != '"' && b[i+1] != '\\' {
				*dst = value{b: b[i+1 : i+2], str: true}
				i += 3
				goto next
			}
			if fix == 20 && i+22 <= len(b) && b[i+21] == '"' &&
				quoteOrSlash(le64(b, i+1))|quoteOrSlash(le64(b, i+9))|quoteOrSlash(le64(b, i+13)) == 0 {
				*dst = value{b: b[i+1 : i+21], str: true}
				i += 22
				goto next
			}
			// a string: strEnd directly (scanValue's first case, one
			// call less for the most common value)
			e, esc := strEnd(b, i+1)
			if e < 0 {
				return e
			}
			if dst != nil {
				*dst = value{b: b[i+1 : e], str: true, esc: esc}
			}
			i = e + 1
		} else if scalarByte[b[i]] {
			// a number or literal: scanValue's last case, inline
			j := i + 1
			for j < len(b) && scalarByte[b[j]] {
				j++
			}
			if j >= len(b) {
				return iMore
			}
			if dst != nil {
				*dst = value{b: b[i:j]}
			}
			i = j
		} else if i = scanValue(b, i, dst, false); i < 0 {
			return i
		}
		if dst == &ev.pid && rd != nil {
			ev.kind, ev.pidIdx = rd.kindOf(ev.pid)
			if ev.kind == procOther && ev.plain() {
				return skipRestChecked(b, i)
			}
		}
	next:
		// kept: the separator written out in both key loops (here and
		// parseArgs), as the value scan is: a call per value costs more
		if i+2 < len(b) && b[i+2] == '"' && le16(b, i) == commaSpace {
			// `, "key`, as every profiler writes it
			i += 2
			continue
		}
		if i < len(b) && b[i] == '}' {
			// the event's end, as every profiler writes it
			return i + 1
		}
		var more bool
		if i, more = afterValue(b, i); !more {
			return i
		}
	}
}

// keyAfterSpace skips white space before a key: the index of its '"' or
// of the object's '}', iMore at the end of b, iBad for anything else.
func keyAfterSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) {
		return iMore
	}
	if c := b[i]; c != '"' && c != '}' {
		return iBad
	}
	return i
}

// endOrErr is what a key loop returns where keyAfterSpace found no key:
// the index after the '}', or its iMore or iBad.
func endOrErr(i int) int {
	if i < 0 {
		return i
	}
	return i + 1
}

// afterValue reads what follows a member's value at b[i] when it is not
// `, "` or '}': white space, then ',' (the index after it, more) or the
// object's '}' (the index after it, not more). Two members with no ','
// between them (a damaged file) are iBad, the end of b iMore, neither
// more.
func afterValue(b []byte, i int) (int, bool) {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) {
		return iMore, false
	}
	switch b[i] {
	case ',':
		return i + 1, true
	case '}':
		return i + 1, false
	}
	return iBad, false
}

// le16 and le64 are the little-endian words at b[i:]; the caller has
// checked that b holds them (i+2 or i+8 <= len(b)). Slicing b[i:i+n]
// costs two compares where slicing b[i:] for binary.LittleEndian costs
// ~12 instructions (the slice's cap and a pointer mask).
func le16(b []byte, i int) uint16 { return binary.LittleEndian.Uint16(b[i : i+2]) }
func le64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i : i+8]) }

// afterColon is the slow path after a key's closing quote at b[i-1]:
// whitespace, ':', whitespace; it returns the index of the value, or
// iMore / iBad. (The common `": ` is checked inline by the callers.)
func afterColon(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) {
		return iMore
	}
	if b[i] != ':' {
		return iBad
	}
	i++
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) {
		return iMore
	}
	return i
}

// little-endian words of the top-level keys with their closing quote
const (
	mask3 = 1<<24 - 1
	mask4 = 1<<32 - 1
	mask5 = 1<<40 - 1
	mask6 = 1<<48 - 1
)

// little-endian words of `": ` and `, `, and of the device task args keys
// (checked against word() in the tests)
const (
	colonSpace = 0x203a             // `: `
	commaSpace = 0x202c             // `, `
	kModelID   = 0x6449206c65646f4d // `Model Id`
	kTaskTyp   = 0x707954206b736154 // `Task Typ`
	kTypeEnd   = 0x2265             // `e"`
	kPhysicS   = 0x5320636973796850 // `Physic S`
	kTreamID   = 0x6449206d61657274 // `tream Id`
	kTaskID    = 0x226449206b736154 // `Task Id"`
	kBatchID   = 0x6449206863746142 // `Batch Id`
	kSubtask   = 0x206b736174627553 // `Subtask `
	kIDq       = 0x226449           // `Id"`
	kConnecti  = 0x697463656e6e6f63 // `connecti`
	kOnIDq     = 0x2264695f6e6f     // `on_id"`
)

var (
	kPh   = word(`ph"`)
	kTs   = word(`ts"`)
	kID   = word(`id"`)
	kPid  = word(`pid"`)
	kTid  = word(`tid"`)
	kDur  = word(`dur"`)
	kCat  = word(`cat"`)
	kName = word(`name"`)
	kArgs = word(`args"`)
)

func word(s string) uint64 {
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return w
}

// scalarByte marks the bytes of numbers and literals (true, false, null).
var scalarByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eEtrufalsn") {
		t[c] = true
	}
	return t
}()

// parseArgs reads the `args` object at b[i], keeping the keys passes read.
// Map: per key, match it by length and bytes (Task Type, Physic Stream Id,
// Model Id, Input Shapes and the other kept keys), read a string or a
// number, or skip a value of any shape. Kept long on purpose, like
// parseEvent: the key dispatch is inlined in the hot loop.
func parseArgs(b []byte, i int, ev *event) int {
	ev.hasArgs = true
	i++
	for {
		// as in parseEvent: a key's quote, or white space or '}' first
		if i >= len(b) || b[i] != '"' {
			if i = keyAfterSpace(b, i); i < 0 || b[i] == '}' {
				return endOrErr(i)
			}
		}
		ks := i + 1
		ke := -1
		var dst *value
		if ks+17 <= len(b) {
			// the keys of a device task's args, in the layout torch_npu
			// writes: recognised whole (with their closing quote) from
			// 8-byte loads; any other key is scanned below
			switch le64(b, ks) {
			case kModelID:
				if b[ks+8] == '"' {
					ke, dst = ks+8, &ev.modelID
				}
			case kTaskTyp:
				if le16(b, ks+8) == kTypeEnd {
					ke, dst = ks+9, &ev.taskType
				}
			case kPhysicS:
				if le64(b, ks+8) == kTreamID && b[ks+16] == '"' {
					ke, dst = ks+16, &ev.stream
				}
			case kTaskID:
				ke = ks + 7
			case kBatchID:
				if b[ks+8] == '"' {
					ke = ks + 8
				}
			case kSubtask:
				if le64(b, ks+8)&mask3 == kIDq {
					ke = ks + 10
				}
			case kConnecti:
				if le64(b, ks+8)&mask6 == kOnIDq {
					ke = ks + 13
				}
			}
		}
		known := ke >= 0
		if !known {
			e, _ := strEnd(b, ks)
			if e < 0 {
				return e
			}
			ke = e
		}
		i = ke + 1
		if i+2 < len(b) && b[i+2] > ' ' && le16(b, i) == colonSpace {
			i += 2
		} else if i = afterColon(b, i); i < 0 {
			return i
		}
		if !known {
			dst = argDst(ev, b[ks:ke])
		}
		// kept: the value scan as in parseEvent's key loop: a helper costs a call per value
		if b[i] == '"' {
			e, esc := strEnd(b, i+1)
			if e < 0 {
				return e
			}
			if dst != nil {
				*dst = value{b: b[i+1 : e], str: true, esc: esc, set: true}
			}
			i = e + 1
		} else if scalarByte[b[i]] {
			// a number or literal: scanValue's last case, inline
			j := i + 1
			for j < len(b) && scalarByte[b[j]] {
				j++
			}
			if j >= len(b) {
				return iMore
			}
			if dst != nil {
				*dst = value{b: b[i:j], set: true}
			}
			i = j
		} else if i = scanValue(b, i, dst, true); i < 0 {
			return i
		}
		// kept: the separator as in parseEvent's key loop
		if i+2 < len(b) && b[i+2] == '"' && le16(b, i) == commaSpace {
			i += 2
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		var more bool
		if i, more = afterValue(b, i); !more {
			return i
		}
	}
}

// scanValue reads the JSON value starting at b[i] into dst (when not nil;
// set marks an args key as present) and returns the index after it, or
// iMore/iBad. Strings keep their raw bytes; objects and arrays are skipped.
func scanValue(b []byte, i int, dst *value, set bool) int {
	switch c := b[i]; c {
	case '"':
		e, esc := strEnd(b, i+1)
		if e < 0 {
			return e
		}
		if dst != nil {
			*dst = value{b: b[i+1 : e], str: true, esc: esc, set: set}
		}
		return e + 1
	case '{', '[':
		return skipComposite(b, i)
	default:
		j := i
		for j < len(b) && scalarByte[b[j]] {
			j++
		}
		if j >= len(b) {
			return iMore
		}
		if j == i {
			return iBad
		}
		if dst != nil {
			*dst = value{b: b[i:j], set: set}
		}
		return j
	}
}

// unquote turns raw string content (between quotes) into a string,
// resolving escapes only when present.
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	q := make([]byte, 0, len(raw)+2)
	q = append(q, '"')
	q = append(q, raw...)
	q = append(q, '"')
	if err := json.Unmarshal(q, &s); err != nil {
		return string(raw)
	}
	return s
}

// parseInt reads a decimal integer (optionally quoted, as in `"tid": "3"`);
// ok is false for anything else (fractions are accepted when whole, "12.0").
func parseInt(b []byte) (int64, bool) {
	if len(b) == 1 && b[0]-'0' <= 9 {
		return int64(b[0] - '0'), true // a stream id
	}
	if len(b) == 19 {
		// a flow id (a time in ns): two groups of 8 digits and three
		if v, ok := sixteenDigits(le64(b, 0), le64(b, 8)); ok {
			d0, d1, d2 := b[16]-'0', b[17]-'0', b[18]-'0'
			if d0 <= 9 && d1 <= 9 && d2 <= 9 {
				if n := v*1000 + uint64(d0)*100 + uint64(d1)*10 + uint64(d2); n <= 1<<63-1 {
					return int64(n), true
				}
				return 0, false
			}
		}
	}
	if len(b) == 0 || len(b) > 20 {
		return timeparse.ParseInt(b)
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg, i = true, 1
		if len(b) == 1 || len(b) > 20 {
			return 0, false
		}
	} else if len(b) > 19 {
		return timeparse.ParseInt(b)
	}
	var n uint64
	if len(b)-i >= 8 {
		if v, ok := eightDigits(b[i:]); ok {
			n, i = v, i+8
			// flow ids are 19 digits: a second group (below 10^16, so the
			// at most 3 digits left cannot overflow)
			if len(b)-i >= 8 {
				if v, ok := eightDigits(b[i:]); ok {
					n, i = n*100000000+v, i+8
				}
			}
		}
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return timeparse.ParseInt(b)
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// sixteenDigits is eightDigits of the 16 bytes of two little-endian
// words (x first), both checked at once.
func sixteenDigits(x, y uint64) (uint64, bool) {
	const hiNib, zeros, sixes = 0xf0f0f0f0f0f0f0f0, 0x3030303030303030, 0x0606060606060606
	if (x&hiNib^zeros)|(y&hiNib^zeros)|((x+sixes)&hiNib^zeros)|((y+sixes)&hiNib^zeros) != 0 {
		return 0, false
	}
	x, y = x-zeros, y-zeros
	x, y = x*10+x>>8, y*10+y>>8
	x = ((x&0x000000ff000000ff)*(100+1000000<<32) + (x>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
	y = ((y&0x000000ff000000ff)*(100+1000000<<32) + (y>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
	return x*100000000 + y, true
}

// eightDigits returns the value of the 8 bytes at b[0:8] when all are
// decimal digits (the first is the most significant).
func eightDigits(b []byte) (uint64, bool) {
	x := binary.LittleEndian.Uint64(b)
	// every byte in 0x30..0x3f, and none above 0x39 (adding 6 to a byte
	// below 0x40 cannot carry into the next)
	if x&0xf0f0f0f0f0f0f0f0 != 0x3030303030303030 || (x+0x0606060606060606)&0xf0f0f0f0f0f0f0f0 != 0x3030303030303030 {
		return 0, false
	}
	x -= 0x3030303030303030
	// pairs of digits, then groups of four, then all eight
	x = x*10 + x>>8
	x = ((x&0x000000ff000000ff)*(100+1000000<<32) + (x>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
	return x, true
}

// argDst is where the value of the args key k goes (nil: not kept): the
// keys parseArgs does not recognise from their bytes.
func argDst(ev *event, k []byte) *value {
	switch len(k) {
	case 4:
		switch string(k) {
		case "name":
			return &ev.argName
		case "type":
			// Kineto's device slices
			return &ev.kType
		}
	case 6:
		if string(k) == "labels" {
			return &ev.argLabels
		}
	case 8:
		switch string(k) {
		case "Model Id":
			return &ev.modelID
		case "streamId":
			// Kineto's device slices
			return &ev.stream
		}
	case 9:
		switch string(k) {
		case "Task Type":
			return &ev.taskType
		case "Stream Id":
			return &ev.stream
		}
	case 16:
		if string(k) == "Physic Stream Id" {
			return &ev.stream
		}
	}
	return nil
}
