package traceview

import (
	"math"
	"unsafe"
)

// Decoding a large array's logs in the array itself. The tasks' array
// (16 bytes a task) and the framework ops' (24 bytes an op) are allocated
// whole, sized from the logs, while those logs are still encoded (about
// 10 and 8 bytes a slice): the build's live peak held both. A tail moves
// the logs' chunks into the array's unused capacity, at its end, so the
// chunks are garbage before the array is filled; elements are written
// from the front, behind the decoder, and the unread rest moves out
// (evacuate) before an element would overwrite it; the loops ask
// (reserve) only when the room they were given is used up.
type tail struct {
	// base is the array's first byte, n its capacity in bytes (nil, 0:
	// no tail)
	base unsafe.Pointer
	n    int
	// logs are the logs whose chunks were moved
	logs []*plog
}

// newTail moves the chunks of logs (each log's own, then its segments')
// into the end of s's unused capacity, in that order; it returns no tail,
// the logs untouched, when they do not fit. T must hold no pointers.
func newTail[T any](s []T, logs []*plog) tail {
	size := int(unsafe.Sizeof(*new(T)))
	full := s[:cap(s)]
	n := 0
	eachChunk(logs, func(c *[]byte) { n += len(*c) })
	if n == 0 || n > (cap(s)-len(s))*size {
		return tail{}
	}
	t := tail{base: unsafe.Pointer(unsafe.SliceData(full)), n: cap(s) * size, logs: logs}
	b := unsafe.Slice((*byte)(t.base), t.n)
	at := t.n - n
	eachChunk(logs, func(c *[]byte) {
		d := b[at : at+len(*c) : at+len(*c)]
		copy(d, *c)
		at += len(*c)
		*c = d
	})
	return t
}

// eachChunk calls fn with each chunk of logs, in decode order.
func eachChunk(logs []*plog, fn func(c *[]byte)) {
	for _, lg := range logs {
		for i := range lg.chunks {
			fn(&lg.chunks[i])
		}
		for _, g := range lg.segs {
			for i := range g.chunks {
				fn(&g.chunks[i])
			}
		}
	}
}

// next is the offset in the array of d's next unread byte.
func (t *tail) next(d *decoder) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(d.b)))-uintptr(t.base)) + d.at
}

// reserve makes room for n elements of size bytes: it returns how many
// end at or before d's next unread byte, first evacuating the unread
// rest when n do not (then, or without a tail, as many as the array
// holds).
func (t *tail) reserve(n, size int, d *decoder) int {
	if t.base == nil {
		return math.MaxInt
	}
	if r := t.next(d) / size; n <= r {
		return r
	}
	t.evacuate(d)
	return math.MaxInt
}

// evacuate copies the unread bytes, from d's next one, out of the array,
// and points d and the logs at the copy; the tail is done.
func (t *tail) evacuate(d *decoder) {
	from := t.next(d)
	buf := make([]byte, t.n-from)
	copy(buf, unsafe.Slice((*byte)(t.base), t.n)[from:])
	lo, hi := uintptr(t.base)+uintptr(from), uintptr(t.base)+uintptr(t.n)
	re := func(c *[]byte) {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(*c)))
		if len(*c) > 0 && p >= lo && p < hi {
			o := int(p - lo)
			*c = buf[o : o+len(*c) : o+len(*c)]
		}
	}
	rest := len(d.b) - d.at
	d.b, d.at = buf[:rest:rest], 0
	// the segment being decoded is d's alone; the rest of the logs
	// share their chunk lists with d
	for i := range d.chunks {
		re(&d.chunks[i])
	}
	eachChunk(t.logs, re)
	*t = tail{}
}
