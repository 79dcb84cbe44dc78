package traceview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// scanner pulls one top-level JSON object at a time out of a stream that is
// a JSON array of objects (Chrome trace). It never holds more than one
// block plus the event being read, and tracks the byte offset of what it
// returns so a truncated file can be reported precisely.
type scanner struct {
	r      io.Reader
	buf    []byte
	pos    int   // next unread byte in buf
	end    int   // valid bytes in buf
	base   int64 // file offset of buf[0]
	eof    bool
	rerr   error
	maxEvt int

	started bool // saw the opening '['
	closed  bool // saw the closing ']'
	wrapped bool // the array is the value of "traceEvents" inside an object
}

// blockSize is the first read buffer's size (it grows for bigger events).
// A variable so the fuzz target can shrink it and exercise every refill.
var blockSize = 1 << 20

// MaxEventBytes is the largest single event the reader accepts. A bigger
// event (no profiler writes one; a corrupt or hostile file might) is
// skipped with a warning naming its byte offset, so memory stays bounded
// by this plus one read block. A variable so tests can lower it.
var MaxEventBytes = 64 << 20

var (
	errTruncated  = errors.New("truncated")
	errNotTrace   = errors.New("not a JSON trace array")
	errEventLarge = errors.New("event too large")
)

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, blockSize), maxEvt: MaxEventBytes}
}

// fill reads more data, keeping buf[keep:end]; it returns false at EOF.
func (s *scanner) fill(keep int) bool {
	if s.eof {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end = n
	}
	if s.end == len(s.buf) {
		nb := make([]byte, len(s.buf)*2)
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// offset returns the file offset of the next unread byte.
func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// skipSpace advances past whitespace (and commas when comma is true).
func (s *scanner) skipSpace(comma bool) bool {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if isSpace(c) || (comma && c == ',') {
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
func (s *scanner) start() error {
	if !s.skipSpace(false) {
		return errNotTrace
	}
	// UTF-8 BOM
	if s.end-s.pos >= 3 && s.buf[s.pos] == 0xEF && s.buf[s.pos+1] == 0xBB && s.buf[s.pos+2] == 0xBF {
		s.pos += 3
		if !s.skipSpace(false) {
			return errNotTrace
		}
	}
	switch s.buf[s.pos] {
	case '[':
		s.pos++
		s.started = true
		return nil
	case '{':
		// Kineto-style {"traceEvents": [...]}: find the array.
		for {
			i := bytes.Index(s.buf[s.pos:s.end], []byte(`"traceEvents"`))
			if i >= 0 {
				s.pos += i + len(`"traceEvents"`)
				if !s.skipSpace(false) || s.buf[s.pos] != ':' {
					return errNotTrace
				}
				s.pos++
				if !s.skipSpace(false) || s.buf[s.pos] != '[' {
					return errNotTrace
				}
				s.pos++
				s.started, s.wrapped = true, true
				return nil
			}
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

// next returns the bytes of the next event object (valid until the next
// call) and its file offset. It returns io.EOF after the closing ']',
// errTruncated when the input ends inside an event or before ']', and
// errEventLarge (with the event's offset) after skipping an event larger
// than maxEvt bytes, which is never held in memory whole.
func (s *scanner) next() ([]byte, int64, error) {
	if !s.skipSpace(true) {
		if s.rerr != nil {
			return nil, s.offset(), s.rerr
		}
		return nil, s.offset(), errTruncated
	}
	c := s.buf[s.pos]
	if c == ']' {
		s.pos++
		s.closed = true
		return nil, s.offset(), io.EOF
	}
	if c != '{' {
		return nil, s.offset(), fmt.Errorf("expected '{' or ']' at byte %d, found %q", s.offset(), c)
	}
	evOff := s.offset()
	begin := s.pos
	i := s.pos
	depth := 0
	inStr := false
	skipping := false // the event outgrew maxEvt: scan to its end, keep nothing
	for {
		for i < s.end {
			c := s.buf[i]
			if inStr {
				switch c {
				case '\\':
					i++ // skip the escaped byte (may run past end; handled below)
				case '"':
					inStr = false
				}
				i++
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
					i++
					s.pos = i
					if skipping || i-begin > s.maxEvt {
						return nil, evOff, errEventLarge
					}
					return s.buf[begin:i], evOff, nil
				}
			}
			i++
		}
		// need more data: keep the event from begin, or nothing when
		// skipping (i may sit one past end after an escape)
		if !skipping && s.end-begin >= s.maxEvt {
			skipping = true
		}
		if skipping {
			begin = min(i, s.end)
		}
		rel := i - begin
		s.pos = begin
		if !s.fill(begin) {
			if s.rerr != nil {
				return nil, s.offset(), s.rerr
			}
			return nil, evOff, errTruncated
		}
		begin = s.pos
		i = begin + rel
	}
}

// --- field-level parsing of one event object ---

// objIter walks the key/value pairs of one JSON object held in b.
type objIter struct {
	b   []byte
	i   int
	err error
}

func (it *objIter) init(b []byte) bool {
	it.b, it.i, it.err = b, 0, nil
	it.ws()
	if it.i >= len(b) || b[it.i] != '{' {
		it.err = errors.New("not an object")
		return false
	}
	it.i++
	return true
}

func (it *objIter) ws() {
	for it.i < len(it.b) && isSpace(it.b[it.i]) {
		it.i++
	}
}

// nextKey returns the next raw key (without quotes, escapes left as-is) and
// positions the iterator at the value. ok is false at the end.
func (it *objIter) nextKey() (key []byte, ok bool) {
	it.ws()
	if it.i < len(it.b) && it.b[it.i] == ',' {
		it.i++
		it.ws()
	}
	if it.i >= len(it.b) || it.b[it.i] == '}' {
		return nil, false
	}
	if it.b[it.i] != '"' {
		it.err = fmt.Errorf("expected key at %d", it.i)
		return nil, false
	}
	k, end := scanString(it.b, it.i)
	if end < 0 {
		it.err = errors.New("unterminated key")
		return nil, false
	}
	it.i = end
	it.ws()
	if it.i >= len(it.b) || it.b[it.i] != ':' {
		it.err = errors.New("expected ':'")
		return nil, false
	}
	it.i++
	it.ws()
	return k, true
}

// value returns the raw bytes of the current value and advances past it.
func (it *objIter) value() []byte {
	start := it.i
	end := skipValue(it.b, it.i)
	if end < 0 {
		it.err = errors.New("bad value")
		it.i = len(it.b)
		return nil
	}
	it.i = end
	return it.b[start:end]
}

// scanString returns the content of the string starting at b[i]=='"' and
// the index after its closing quote (-1 if unterminated).
func scanString(b []byte, i int) ([]byte, int) {
	j := i + 1
	for j < len(b) {
		switch b[j] {
		case '\\':
			j += 2
			continue
		case '"':
			return b[i+1 : j], j + 1
		}
		j++
	}
	return nil, -1
}

// skipValue returns the index just after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		_, e := scanString(b, i)
		return e
	case '{', '[':
		depth := 0
		inStr := false
		for j := i; j < len(b); j++ {
			c := b[j]
			if inStr {
				if c == '\\' {
					j++
				} else if c == '"' {
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
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if c == ',' || c == '}' || c == ']' || isSpace(c) {
				break
			}
			j++
		}
		if j == i {
			return -1
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
