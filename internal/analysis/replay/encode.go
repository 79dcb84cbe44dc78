package replay

import (
	"encoding/binary"
	"slices"
	"sync"
	"unsafe"
)

// A step's items and collectives are kept encoded: a step of 94 MoE layers
// repeats the layer period (~27 items of the same ops and shapes per
// layer), so what an item shares with the others of its op is one
// dictionary entry (RankLine.Dict) and the rest varints.
//
// An item: uvarint(entry<<2 | tokens<<1 | waits), zigzag(Gap), zigzag(Dur),
// when tokens zigzag(Tokens - the entry's Tokens), when waits
// zigzag(Coll - the previous item's Coll that was not -1, from -1).
// A collective: zigzag(Pos - the previous collective's Pos), uvarint(Group),
// uvarint(Type), zigzag(Arrive), Ready and End (0 for -1 and 0, else
// zigzag of their distance to the step's Anchor + 1), zigzag(Dur),
// zigzag(Tail), zigzag(Dur - Transfer). Seq is not kept: the decoder
// numbers each group's collectives in order.

// Entry is what items of one kind share: one entry of RankLine.Dict, per
// op, shapes, kind and graph; Tokens are those of its first item (an
// item with others holds them: the expert ops' differ layer to layer).
type Entry struct {
	Tokens    int32
	Op, Shape uint16
	Kind      ItemKind
	Graph     bool
}

func zig(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzig(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// entry returns the index of it's entry in l.Dict, adding it when missing.
func (l *RankLine) entry(it *Item) uint32 {
	if e := it.ent - 1; e >= 0 && int(e) < len(l.Dict) {
		if d := &l.Dict[e]; d.Op == it.Op && d.Shape == it.Shape && d.Kind == it.Kind && d.Graph == it.Graph {
			return uint32(e)
		}
	}
	if l.dictIx == nil {
		l.dictIx = make([][]uint32, len(l.Ops))
		for i, d := range l.Dict {
			l.index(d.Op, uint32(i))
		}
	}
	if int(it.Op) < len(l.dictIx) {
		for _, e := range l.dictIx[it.Op] {
			if d := &l.Dict[e]; d.Shape == it.Shape && d.Kind == it.Kind && d.Graph == it.Graph {
				return e
			}
		}
	}
	l.Dict = append(l.Dict, Entry{Tokens: it.Tokens, Op: it.Op, Shape: it.Shape, Kind: it.Kind, Graph: it.Graph})
	e := uint32(len(l.Dict) - 1)
	l.index(it.Op, e)
	return e
}

// index adds entry e of op to l.dictIx.
func (l *RankLine) index(op uint16, e uint32) {
	for int(op) >= len(l.dictIx) {
		l.dictIx = append(l.dictIx, nil)
	}
	l.dictIx[op] = append(l.dictIx[op], e)
}

// encBufs hold the buffers steps are encoded in before their bytes are
// copied to their own slice (ranks are built in parallel).
var encBufs = sync.Pool{New: func() any { return new([]byte) }}

// done gives the buffer back once b, encoded in it, is kept: written to
// s (the spill file edited steps go to) when it can be, else copied to a
// slice of its own.
func done(p *[]byte, b []byte, s *Spill) (out []byte, at Ref) {
	if r, ok := s.Put(b); ok {
		at = r
	} else {
		out = append([]byte(nil), b...)
	}
	*p = b[:0]
	encBufs.Put(p)
	return out, at
}

// Spill moves the encoded bytes of l's steps to s (they stay where they
// are when s is nil or a write fails; a step kept decoded is not moved):
// what a finished rank's timeline keeps on the heap is then its
// dictionary and its steps' scalars. l is read as before: each use of a
// step reads its bytes back.
// Steps edited after go to s as they are encoded.
func (l *RankLine) Spill(s *Spill) {
	for k := range l.Steps {
		l.Steps[k].spill(s)
	}
	if s != nil {
		l.spill = s
	}
}

// spill moves st's encoded bytes to s.
func (st *Step) spill(s *Spill) {
	if st.dec != nil {
		return
	}
	if r, ok := s.Put(st.ItemBytes); ok {
		st.itemsAt, st.ItemBytes = r, nil
	}
	if r, ok := s.Put(st.CollBytes); ok {
		st.collsAt, st.CollBytes = r, nil
	}
}

// spillFile is the spill file of the first of tl's steps that has one (nil
// when none has).
func (tl *Timeline) spillFile() *Spill {
	for _, l := range tl.Ranks {
		for k := range l.Steps {
			if s := l.Steps[k].itemsAt.s; s != nil {
				return s
			}
			if s := l.Steps[k].collsAt.s; s != nil {
				return s
			}
		}
	}
	return nil
}

// setItems encodes items as st's (new bytes: the ones st had may be
// another timeline's).
func (l *RankLine) setItems(st *Step, items []Item) {
	st.itemsAt = Ref{}
	if st.dec != nil {
		st.dec = &decoded{items: l.scratch.ownItems(items), colls: st.dec.colls}
		st.ItemBytes, st.N = nil, int32(len(items))
		return
	}
	p := encBufs.Get().(*[]byte)
	b := (*p)[:0]
	prev := int64(-1)
	for i := range items {
		it := &items[i]
		e := l.entry(it)
		id := uint64(e) << 2
		tok := it.Tokens - l.Dict[e].Tokens
		if tok != 0 {
			id |= 2
		}
		if it.Coll >= 0 {
			id |= 1
		}
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, zig(it.Gap))
		b = binary.AppendUvarint(b, zig(it.Dur))
		if tok != 0 {
			b = binary.AppendUvarint(b, zig(int64(tok)))
		}
		if it.Coll >= 0 {
			b = binary.AppendUvarint(b, zig(int64(it.Coll)-prev))
			prev = int64(it.Coll)
		}
	}
	st.ItemBytes, st.itemsAt = done(p, b, l.spill)
	st.N = int32(len(items))
}

// since encodes t (0 stands for none) as its distance to anchor.
func since(t, none, anchor int64) uint64 {
	if t == none {
		return 0
	}
	return zig(t-anchor) + 1
}

func fromSince(u uint64, none, anchor int64) int64 {
	if u == 0 {
		return none
	}
	return unzig(u-1) + anchor
}

// setColls encodes colls as st's (new bytes on the heap).
func setColls(st *Step, colls []Coll) { setCollsTo(st, colls, nil, nil) }

// setColls encodes colls as st's (new bytes), in l's spill file when it
// has one; a decoded step's go to l's scratch when it has one.
func (l *RankLine) setColls(st *Step, colls []Coll) { setCollsTo(st, colls, l.spill, l.scratch) }

// decodedScratch is the items and collectives of the one decoded step a
// line holds edited at a time (RankLine.scratch).
type decodedScratch struct {
	items []Item
	colls []Coll
}

// ownItems returns a copy of items a decoded step may keep: sc's, written
// over the previous step's, or a new slice when sc is nil.
func (sc *decodedScratch) ownItems(items []Item) []Item {
	if sc == nil {
		return slices.Clone(items)
	}
	sc.items = append(sc.items[:0], items...)
	return sc.items
}

// ownColls is ownItems for collectives.
func (sc *decodedScratch) ownColls(colls []Coll) []Coll {
	if sc == nil {
		return slices.Clone(colls)
	}
	sc.colls = append(sc.colls[:0], colls...)
	return sc.colls
}

// setCollsTo encodes colls as st's (new bytes), in s when it is not nil;
// a decoded step keeps a copy of them, sc's when it is not nil.
func setCollsTo(st *Step, colls []Coll, s *Spill, sc *decodedScratch) {
	st.collsAt = Ref{}
	if st.dec != nil {
		st.dec = &decoded{items: st.dec.items, colls: sc.ownColls(colls)}
		st.CollBytes, st.NColls = nil, int32(len(colls))
		return
	}
	p := encBufs.Get().(*[]byte)
	b := (*p)[:0]
	prev := int32(0)
	for i := range colls {
		c := &colls[i]
		b = binary.AppendUvarint(b, zig(int64(c.Pos-prev)))
		prev = c.Pos
		b = binary.AppendUvarint(b, uint64(c.Group))
		b = binary.AppendUvarint(b, uint64(c.Type))
		b = binary.AppendUvarint(b, zig(c.Arrive))
		b = binary.AppendUvarint(b, since(c.Ready, -1, st.Anchor))
		b = binary.AppendUvarint(b, since(c.End, 0, st.Anchor))
		b = binary.AppendUvarint(b, zig(c.Dur))
		b = binary.AppendUvarint(b, zig(c.Tail))
		b = binary.AppendUvarint(b, zig(c.Dur-c.Transfer))
	}
	st.CollBytes, st.collsAt = done(p, b, s)
	st.NColls = int32(len(colls))
}

// uv reads a uvarint at *off.
func uv(b []byte, off *int) (v uint64) {
	i := *off
	for s := uint(0); ; s += 7 {
		x := b[i]
		i++
		v |= uint64(x&0x7f) << s
		if x < 0x80 {
			break
		}
	}
	*off = i
	return v
}

// cursor reads a step's items in order.
type cursor struct {
	b    []byte
	dict []Entry
	off  int
	prev int64  // the last Coll read
	dec  []Item // the step's items when it is kept decoded (Step.dec)
	// pooled is the buffer of encBufs b was read into from a spill file
	pooled *[]byte
	// rest is what is left to read of a spill file into b, a window
	// (cursorIn): a replay of every rank at once holds a window of each
	// step, not the step
	rest Ref
}

// windowBytes and collWindowBytes are the sizes of a windowed cursor's
// buffer (items, collectives); maxItemBytes and maxCollBytes the most bytes
// an item (five varints) and a collective (nine) take.
const (
	windowBytes     = 1024
	collWindowBytes = 512
	maxItemBytes    = 5 * binary.MaxVarintLen64
	maxCollBytes    = 9 * binary.MaxVarintLen64
)

// cursor returns a cursor on st's items; when they are in a spill file
// they are read into a buffer of encBufs, which close gives back.
func (l *RankLine) cursor(st *Step) cursor {
	if st.dec != nil {
		return cursor{dec: st.dec.items}
	}
	if !st.itemsAt.Spilled() {
		return cursor{b: st.ItemBytes, dict: l.Dict, prev: -1}
	}
	p := encBufs.Get().(*[]byte)
	*p = st.itemsAt.Read(*p)
	return cursor{b: *p, dict: l.Dict, prev: -1, pooled: p}
}

// cursorIn is cursor, reading st's items windowBytes at a time into
// *buf when they are in a spill file.
func (l *RankLine) cursorIn(st *Step, buf *[]byte) cursor {
	if st.dec != nil {
		return cursor{dec: st.dec.items}
	}
	if !st.itemsAt.Spilled() {
		return cursor{b: st.ItemBytes, dict: l.Dict, prev: -1}
	}
	if cap(*buf) < windowBytes {
		*buf = make([]byte, windowBytes)
	}
	c := cursor{b: (*buf)[:0], dict: l.Dict, prev: -1, rest: st.itemsAt}
	c.refill()
	return c
}

// refill moves what is left unread of c's window to its start and reads
// the next bytes of c.rest after it.
func (c *cursor) refill() { c.b, c.off = refill(c.b, c.off, &c.rest) }

// refill moves what is left unread of window b (from off) to its start,
// reads the next bytes of *rest after it and returns the window, read from
// its start.
func refill(b []byte, off int, rest *Ref) ([]byte, int) {
	w := b[:cap(b)]
	n := copy(w, b[off:])
	k := min(int64(len(w)-n), rest.n)
	Ref{s: rest.s, off: rest.off, n: k}.Read(w[n : n+int(k)])
	rest.off, rest.n = rest.off+k, rest.n-k
	return w[:n+int(k)], 0
}

// close gives c's buffer back (c is not read after).
func (c *cursor) close() {
	if c.pooled != nil {
		encBufs.Put(c.pooled)
		c.pooled, c.b = nil, nil
	}
}

// next decodes the next item into it.
func (c *cursor) next(it *Item) {
	if c.dec != nil {
		*it = c.dec[c.off]
		c.off++
		return
	}
	if c.rest.n > 0 && len(c.b)-c.off < maxItemBytes {
		c.refill()
	}
	id := uv(c.b, &c.off)
	e := &c.dict[id>>2]
	it.Tokens, it.Op, it.Shape, it.Kind, it.Graph, it.ent = e.Tokens, e.Op, e.Shape, e.Kind, e.Graph, int32(id>>2)+1
	it.Gap = unzig(uv(c.b, &c.off))
	it.Dur = unzig(uv(c.b, &c.off))
	if id&2 != 0 {
		it.Tokens += int32(unzig(uv(c.b, &c.off)))
	}
	it.Coll = -1
	if id&1 != 0 {
		c.prev += unzig(uv(c.b, &c.off))
		it.Coll = int16(c.prev)
	}
}

// items decodes st's items into buf.
func (l *RankLine) items(st *Step, buf []Item) []Item {
	if st.dec != nil {
		return append(buf[:0], st.dec.items...)
	}
	buf = resize(buf, int(st.N))
	c := l.cursor(st)
	for i := range buf {
		c.next(&buf[i])
	}
	c.close()
	return buf
}

// colls decodes st's collectives into buf.
func colls(st *Step, buf []Coll) []Coll {
	if st.dec != nil {
		return append(buf[:0], st.dec.colls...)
	}
	buf = resize(buf, int(st.NColls))
	var p *[]byte
	b := st.CollBytes
	if st.collsAt.Spilled() {
		p = encBufs.Get().(*[]byte)
		*p = st.collsAt.Read(*p)
		b = *p
	}
	off, pos := 0, int32(0)
	for i := range buf {
		decodeColl(b, &off, &pos, st.Anchor, &buf[i])
	}
	if p != nil {
		encBufs.Put(p)
	}
	renumber(buf)
	return buf
}

// decodeColl decodes the collective at *off of b into c (pos is the
// previous one's Pos; its Seq is left as it was).
func decodeColl(b []byte, off *int, pos *int32, anchor int64, c *Coll) {
	*pos += int32(unzig(uv(b, off)))
	c.Pos = *pos
	c.Group = uint16(uv(b, off))
	c.Type = uint16(uv(b, off))
	c.Arrive = unzig(uv(b, off))
	c.Ready = fromSince(uv(b, off), -1, anchor)
	c.End = fromSince(uv(b, off), 0, anchor)
	c.Dur = unzig(uv(b, off))
	c.Tail = unzig(uv(b, off))
	c.Transfer = c.Dur - unzig(uv(b, off))
}

// collCursor reads a step's collectives in order (their Seq unset),
// through a window when they are in a spill file.
type collCursor struct {
	b      []byte
	off    int
	pos    int32
	anchor int64
	rest   Ref
	dec    []Coll // the step's collectives when it is kept decoded
	i      int
}

// collCursorIn returns a cursor on st's collectives, reading them
// collWindowBytes at a time into *buf when they are in a spill file.
func collCursorIn(st *Step, buf *[]byte) collCursor {
	if st.dec != nil {
		return collCursor{dec: st.dec.colls}
	}
	if !st.collsAt.Spilled() {
		return collCursor{b: st.CollBytes, anchor: st.Anchor}
	}
	if cap(*buf) < collWindowBytes {
		*buf = make([]byte, collWindowBytes)
	}
	c := collCursor{b: (*buf)[:0], anchor: st.Anchor, rest: st.collsAt}
	c.b, c.off = refill(c.b, c.off, &c.rest)
	return c
}

// next decodes the next collective into co.
func (c *collCursor) next(co *Coll) {
	if c.dec != nil {
		*co = c.dec[c.i]
		c.i++
		return
	}
	if c.rest.n > 0 && len(c.b)-c.off < maxCollBytes {
		c.b, c.off = refill(c.b, c.off, &c.rest)
	}
	decodeColl(c.b, &c.off, &c.pos, c.anchor, co)
}

// decodedMaxBytes bounds what NewTimeline keeps decoded (Step.dec): a
// timeline whose steps take at most this many bytes decoded (items and
// collectives) is replayed and edited without decoding each step at each
// use (reading it back from the spill file) and encoding its edits again;
// a larger one, whose memory is what the encoding saves, stays encoded,
// so what a rank costs in memory does not grow with the steps' length.
// 8 MiB holds 16 ranks of 94 MoE layers x 4 steps (5.4 MB): their run
// costs ~10% less CPU for ~6 MiB more peak RSS (docs/performance.md,
// "Per-rank memory").
var decodedMaxBytes = 8 << 20

// itemSize and collSize are what an item and a collective take decoded.
const (
	itemSize = int(unsafe.Sizeof(Item{}))
	collSize = int(unsafe.Sizeof(Coll{}))
)

// keepDecoded keeps every step of tl's ranks decoded when they fit in
// decodedMaxBytes; their encoded bytes on the heap (none when they were
// spilled) go.
func keepDecoded(tl *Timeline) {
	n := 0
	for _, l := range tl.Ranks {
		for k := range l.Steps {
			n += int(l.Steps[k].N)*itemSize + int(l.Steps[k].NColls)*collSize
		}
	}
	if n > decodedMaxBytes {
		return
	}
	tl.decoded = true
	for _, l := range tl.Ranks {
		for k := range l.Steps {
			st := &l.Steps[k]
			if st.dec == nil {
				st.dec = &decoded{items: l.items(st, nil), colls: colls(st, nil)}
			}
			// every read of a decoded step reads dec
			st.ItemBytes, st.CollBytes = nil, nil
		}
	}
}

// open is a step decoded: what the builder and the transforms edit.
type open struct {
	Items []Item
	Colls []Coll
}

// open decodes st into o (reusing o's buffers).
func (l *RankLine) open(st *Step, o *open) {
	o.Items = l.items(st, o.Items)
	o.Colls = colls(st, o.Colls)
}

// store encodes o as st.
func (l *RankLine) store(st *Step, o *open) {
	l.setItems(st, o.Items)
	l.setColls(st, o.Colls)
}

// StepItems returns step k's items, decoded.
func (l *RankLine) StepItems(k int) []Item { return l.items(&l.Steps[k], nil) }

// StepColls returns step k's collectives, decoded.
func (l *RankLine) StepColls(k int) []Coll { return colls(&l.Steps[k], nil) }

// SetStepItems sets step k's items (encoded as new bytes).
func (l *RankLine) SetStepItems(k int, items []Item) { l.setItems(&l.Steps[k], items) }
