package summary

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sync"
)

// csvScanner reads CSV records the way encoding/csv does with LazyQuotes
// and FieldsPerRecord = -1 (the settings npuprof uses for the profiler's
// CSVs), in place: the input is read in large blocks into one buffer, a
// record is located there with vectorised byte searches (bytes.IndexByte
// for line ends and quotes, bytes.Count for the commas of cells nobody
// reads), and only the cells a caller asks for are decoded. A cell that is
// not quoted, or quoted without escapes, is a slice of the buffer; the
// others are decoded into a scratch buffer. Everything is valid until the
// next record.
//
// kernel_details.csv is tens of MB with 20 to 46 columns of which
// ReadKernelDetails reads up to 9; encoding/csv allocated a string per cell, and
// the first version of this reader still copied every cell.
//
// encoding/csv's rules, as they apply to the raw bytes:
//   - "\r\n" at a line end is "\n"; a '\r' just before the end of input is
//     dropped; empty lines between records are skipped.
//   - A cell starting with '"' is quoted: it ends at a '"' followed by ',',
//     by the end of the line, or by the end of input (or at the end of
//     input itself). Inside, `""` is one quote, a '"' followed by anything
//     else is kept as it is (LazyQuotes), and newlines are part of the cell.
//   - Any other cell runs to the next ',' or the end of the line; a '"' in
//     it is an ordinary byte.
//
// Lines are bounded by MaxLineBytes (an error names the line), and so is a
// whole record, so memory stays bounded on hostile input.
type csvScanner struct {
	r    io.Reader
	buf  []byte
	pos  int // where the next record (or empty line) starts
	end  int // buf[:end] holds data
	eof  bool
	rerr error // a read error other than io.EOF, reported once buf is used up
	line int   // lines before pos

	// the current record
	recLine int        // its first line (1-based)
	nf      int        // its number of cells
	fields  []fieldPos // the first cells (up to what scan was asked for)
	scratch []byte     // decoded quoted cells
	recPos  int        // where it starts in buf
	recEnd  int        // where the next one starts
	le0     int        // where the line after its first one starts
	recs    [][]byte   // for read
	// unterminated: the last record read ends the input without a
	// newline (the file may have been cut inside it)
	unterminated bool
}

// fieldPos is one cell of the current record in buf.
type fieldPos struct {
	start, end int32 // the raw cell, or the inside of the quotes
	kind       uint8
}

const (
	cellRaw     = iota // buf[start:end] is the cell
	cellQuotes         // quoted on one line with `""` or a bare '"' inside: decode buf[start:end]
	cellTriple         // cellQuotes written `"""X"""` with no quote in X: buf[start:end] is `""X""`
	cellDecode         // quoted over several lines ("\r\n" inside is "\n"): decode buf[start:end]
	cellDecodeE        // cellDecode, and the cell runs to the end of input (a final '\r' is dropped)
)

// csvBlock is how much is read at once (a variable so tests can make
// records straddle blocks).
var csvBlock = 1 << 20

func newCSVScanner(r io.Reader) *csvScanner {
	return &csvScanner{r: r, buf: getBlock(&csvBlocks, csvBlock)}
}

// release gives the scanner's block back for the next rank's file; c is
// not used after.
func (c *csvScanner) release() {
	putBlock(&csvBlocks, c.buf, csvBlock)
	c.buf = nil
}

// csvBlocks and commBlocks keep the read blocks of finished files for the
// next rank's: a cluster of many small ranks would otherwise allocate (and
// collect) a 1 MiB block per file.
var csvBlocks, commBlocks sync.Pool

// getBlock returns a block of n bytes from pool, or a new one.
func getBlock(pool *sync.Pool, n int) []byte {
	if p, ok := pool.Get().(*[]byte); ok && len(*p) == n {
		return *p
	}
	return make([]byte, n)
}

// putBlock puts b back into pool when it has the block size n (a block
// grown for a long record is left to the collector).
func putBlock(pool *sync.Pool, b []byte, n int) {
	if len(b) == n {
		pool.Put(&b)
	}
}

type scanResult int

const (
	scanOK scanResult = iota
	scanMore
	scanEOF
)

// next locates the next record, recording the first upto cells. It
// returns io.EOF at the end of input.
func (c *csvScanner) next(upto int) error {
	c.pos = c.recEnd
	for {
		switch c.scan(upto) {
		case scanOK:
			if c.recEnd-c.recPos > MaxLineBytes {
				if err := c.checkLines(c.recPos, c.recEnd, c.recLine); err != nil {
					return err
				}
			}
			return nil
		case scanEOF:
			if c.rerr != nil {
				return c.rerr
			}
			return io.EOF
		}
		if err := c.checkLines(c.pos, c.end, c.line+1); err != nil {
			return err
		}
		if c.rerr != nil {
			return c.rerr
		}
		c.fill()
	}
}

// checkLines fails when a line of buf[from:to] (the first is line
// number first; the last one may be unfinished) is longer than
// MaxLineBytes, or when the record there spans lines and is longer than
// that itself, whether or not it is complete (so the outcome does not
// depend on where blocks end).
func (c *csvScanner) checkLines(from, to, first int) error {
	line := first
	lines := 0
	for i := from; i < to; {
		j := bytes.IndexByte(c.buf[i:to], '\n')
		if j < 0 {
			j = to - i
		}
		if j > MaxLineBytes {
			return fmt.Errorf("%w: line %d is longer than %d MiB", errLineTooLong, line, MaxLineBytes>>20)
		}
		i += j + 1
		line++
		lines++
	}
	if lines > 1 && to-from > MaxLineBytes {
		return fmt.Errorf("%w: the record starting at line %d is longer than %d MiB", errLineTooLong, first, MaxLineBytes>>20)
	}
	return nil
}

// fill moves the unread data to the front of buf, grows buf when it is
// full, and reads until it is full again.
func (c *csvScanner) fill() {
	if c.pos > 0 {
		c.end = copy(c.buf, c.buf[c.pos:c.end])
		c.pos = 0
	}
	if c.end == len(c.buf) {
		nb := make([]byte, 2*len(c.buf))
		copy(nb, c.buf[:c.end])
		c.buf = nb
	}
	// fill the buffer: a record is scanned again from its start after
	// each fill, so reading little at a time (a reader that returns a few
	// bytes per call) would be quadratic
	for c.end < len(c.buf) {
		n, err := c.r.Read(c.buf[c.end:])
		c.end += n
		if err == io.EOF {
			c.eof = true
			return
		}
		if err != nil {
			// the records complete before the error are still read; the
			// unfinished one is not (as a line cut by an error was not)
			c.rerr = err
			return
		}
	}
}

// scan locates the record at c.pos in buf[:c.end]. scanMore means the
// data ends before the record does (and more may come). Map: skip empty
// lines; find the line's end; per cell up to upto: a quoted cell (the
// profiler's `"""X"""` shape in one search, doubled quotes, a cell that
// spans lines), else unquoted cells whose commas are found 8 bytes at a
// time; past upto, commas are only counted; then the record's last cell.
// Kept long on purpose: the kernel_details cell pattern stays one tight
// loop (docs/architecture.md, "Kept on purpose").
func (c *csvScanner) scan(upto int) scanResult {
	buf := c.buf[:c.end]
	eof := c.eof
	i := c.pos
	line := c.line
	// skip empty lines
	for {
		if i >= len(buf) {
			if eof {
				c.pos, c.line = i, line
				return scanEOF
			}
			return scanMore
		}
		if buf[i] == '\n' {
			i++
			line++
			continue
		}
		if buf[i] == '\r' {
			if i+1 < len(buf) {
				if buf[i+1] == '\n' {
					i += 2
					line++
					continue
				}
				break
			}
			if eof { // a lone '\r' at the end of input is dropped
				i++
				continue
			}
			return scanMore
		}
		break
	}
	// the skipped lines are consumed even if the record needs more data
	c.pos, c.line = i, line
	c.recPos = i
	c.fields = c.fields[:0]
	c.scratch = c.scratch[:0]
	nf := 0
	// the current line: ce is where its content ends (before "\r\n", "\n",
	// or a '\r' at the end of input), le where the next line starts
	ce, le, ok := lineEnd(buf, i, eof)
	if !ok {
		return scanMore
	}
	c.le0 = le
fields:
	for {
		if nf >= upto {
			// cells nobody reads: count the commas, minding quoted cells
			atStart := true
			for {
				seg := buf[i:ce]
				q := bytes.IndexByte(seg, '"')
				if q < 0 {
					nf += bytes.Count(seg, comma) + 1
					c.finish(nf, le, line)
					return scanOK
				}
				nf += bytes.Count(seg[:q], comma)
				if (q == 0 && atStart) || (q > 0 && seg[q-1] == ',') {
					i += q
					break
				}
				i += q + 1
				atStart = false
			}
		}
		if i < ce && buf[i] == '"' {
			// a quoted cell: find the quote that ends it
			start := i + 1
			if start+1 < ce && buf[start] == '"' && buf[start+1] == '"' {
				// `"""X"""` then ',' (how the profiler writes shapes): the
				// steps of the loop below, `""`, the next quote q, `""`
				// at q, ',' after it, with one search instead of three
				if q := bytes.IndexByte(buf[start+2:ce], '"'); q >= 0 {
					q += start + 2
					if q+3 < ce && buf[q+1] == '"' && buf[q+2] == '"' && buf[q+3] == ',' {
						if nf < upto {
							c.fields = append(c.fields, fieldPos{int32(start), int32(q + 2), cellTriple})
						}
						nf++
						i = q + 4
						continue
					}
				}
			}
			kind := uint8(cellRaw)
			j := start
			for {
				q := bytes.IndexByte(buf[j:], '"')
				if q < 0 {
					if !eof {
						return scanMore
					}
					// the cell runs to the end of input
					if nf < upto {
						c.fields = append(c.fields, fieldPos{int32(start), int32(len(buf)), cellDecodeE})
					}
					nf++
					c.finish(nf, len(buf), line)
					return scanOK
				}
				q += j
				// what follows the quote decides
				if q+1 >= len(buf) {
					if !eof {
						return scanMore
					}
					// `"` then the end of input: the cell ends
					return c.endQuoted(upto, nf, start, q, kind, len(buf), line, q > ce)
				}
				switch buf[q+1] {
				case '"':
					kind = cellQuotes
					j = q + 2
					continue
				case ',':
					if nf < upto {
						c.fields = append(c.fields, fieldPos{int32(start), int32(q), kind})
					}
					nf++
					i = q + 2
				case '\n':
					return c.endQuoted(upto, nf, start, q, kind, q+2, line, q > ce)
				case '\r':
					if q+2 >= len(buf) {
						if !eof {
							return scanMore
						}
						return c.endQuoted(upto, nf, start, q, kind, q+2, line, q > ce)
					}
					if buf[q+2] == '\n' {
						return c.endQuoted(upto, nf, start, q, kind, q+3, line, q > ce)
					}
					kind = cellQuotes // a bare quote
					j = q + 1
					continue
				default:
					kind = cellQuotes // a bare quote
					j = q + 1
					continue
				}
				break
			}
			if i-2 > ce {
				// the cell spanned lines ("\r\n" inside is "\n"), and
				// the record goes on on a later line
				if nf <= upto {
					c.fields[len(c.fields)-1].kind = cellDecode
				}
				ce, le, ok = lineEnd(buf, i-2, eof)
				if !ok {
					return scanMore
				}
			}
			continue
		}
		// unquoted cells: the commas of 8 bytes at a time (several short
		// cells per word), not a call to IndexByte per cell; the words
		// stay within the line, whose last bytes go one at a time
		const ones7f, highs, commas = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080, 0x2c2c2c2c2c2c2c2c
		fields := c.fields
		lineB := buf[:ce] // i < len(lineB) is i < ce, with no bounds check after
		j := i
		for ; j+8 <= len(lineB); j += 8 {
			x := binary.LittleEndian.Uint64(lineB[j:j+8]) ^ commas
			// 0x80 in exactly the bytes of x that are zero
			for m := ^((x&ones7f + ones7f) | x) & highs; m != 0; m &= m - 1 {
				k := j + bits.TrailingZeros64(m)>>3
				// nf < upto here: the loop leaves when it reaches upto
				fields = append(fields, fieldPos{int32(i), int32(k), cellRaw})
				nf++
				i = k + 1
				if nf >= upto || (i < len(lineB) && lineB[i] == '"') {
					c.fields = fields
					continue fields
				}
			}
		}
		// kept: the word loop's cell step again: it ends in continue fields, which a helper cannot do
		for ; j < len(lineB); j++ {
			if lineB[j] == ',' {
				fields = append(fields, fieldPos{int32(i), int32(j), cellRaw})
				nf++
				i = j + 1
				if nf >= upto || (i < len(lineB) && lineB[i] == '"') {
					c.fields = fields
					continue fields
				}
			}
		}
		// the last cell of the record
		if nf < upto {
			fields = append(fields, fieldPos{int32(i), int32(ce), cellRaw})
		}
		c.fields = fields
		nf++
		c.finish(nf, le, line)
		return scanOK
	}
}

var comma = []byte{','}

// endQuoted records a quoted cell closed by the quote at q that also ends
// the record, which goes on at next.
// spanned says the cell holds newlines ("\r\n" inside is "\n").
func (c *csvScanner) endQuoted(upto, nf, start, q int, kind uint8, next, line int, spanned bool) scanResult {
	if next > c.end {
		next = c.end
	}
	if spanned {
		kind = cellDecode
	}
	if nf < upto {
		c.fields = append(c.fields, fieldPos{int32(start), int32(q), kind})
	}
	c.finish(nf+1, next, line)
	return scanOK
}

func (c *csvScanner) finish(nf, next, line int) {
	c.nf = nf
	c.recEnd = next
	c.recLine = line + 1
	c.unterminated = c.eof && next >= c.end && next > c.recPos && c.buf[next-1] != '\n'
	if next == c.le0 {
		c.line = line + 1
		return
	}
	c.line = line + bytes.Count(c.buf[c.recPos:next], []byte{'\n'})
	if next >= c.end && c.eof && (next == c.recPos || c.buf[next-1] != '\n') {
		c.line++ // the last line, without a newline
	}
}

// lineEnd finds the end of the line holding buf[i]: ce is where its
// content ends, le where the next line starts. ok is false when the line
// is not complete and more input may come.
func lineEnd(buf []byte, i int, eof bool) (ce, le int, ok bool) {
	j := bytes.IndexByte(buf[i:], '\n')
	if j < 0 {
		if !eof {
			return 0, 0, false
		}
		ce = len(buf)
		if ce > i && buf[ce-1] == '\r' {
			ce--
		}
		return ce, len(buf), true
	}
	le = i + j + 1
	ce = i + j
	if ce > i && buf[ce-1] == '\r' {
		ce--
	}
	return ce, le, true
}

// cell returns the i-th cell of the current record (nil when the record
// has fewer cells, or i is beyond what scan recorded).
func (c *csvScanner) cell(i int) []byte {
	if i < 0 || i >= len(c.fields) {
		return nil
	}
	f := c.fields[i]
	raw := c.buf[f.start:f.end]
	if f.kind == cellRaw {
		return raw
	}
	n := len(c.scratch)
	if f.kind == cellQuotes || f.kind == cellTriple {
		for k := 0; ; {
			q := bytes.IndexByte(raw[k:], '"')
			if q < 0 {
				c.scratch = append(c.scratch, raw[k:]...)
				break
			}
			c.scratch = append(c.scratch, raw[k:k+q+1]...)
			k += q + 1
			if k < len(raw) && raw[k] == '"' {
				k++
			}
		}
		return c.scratch[n:len(c.scratch):len(c.scratch)]
	}
	for k := 0; k < len(raw); {
		b := raw[k]
		switch {
		case b == '"':
			c.scratch = append(c.scratch, '"')
			if k+1 < len(raw) && raw[k+1] == '"' {
				k += 2
			} else {
				k++
			}
			continue
		case b == '\r' && k+1 < len(raw) && raw[k+1] == '\n':
			k++
			continue
		case b == '\r' && k+1 == len(raw) && f.kind == cellDecodeE:
			k++
			continue
		}
		c.scratch = append(c.scratch, b)
		k++
	}
	return c.scratch[n:len(c.scratch):len(c.scratch)]
}

// rawCell returns the i-th cell when it is a plain slice of buf (ok),
// inline at the caller; cell decodes the others.
func (c *csvScanner) rawCell(i int) ([]byte, bool) {
	if uint(i) < uint(len(c.fields)) {
		if f := &c.fields[i]; f.kind == cellRaw {
			return c.buf[f.start:f.end], true
		}
	}
	return nil, false
}

// read returns the next record with every cell, and the line it starts
// on. Empty lines are skipped, as encoding/csv does.
func (c *csvScanner) read() ([][]byte, int, error) {
	if err := c.next(math.MaxInt); err != nil {
		return nil, 0, err
	}
	c.recs = c.recs[:0]
	for i := range c.fields {
		c.recs = append(c.recs, c.cell(i))
	}
	return c.recs, c.recLine, nil
}
