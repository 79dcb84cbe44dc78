package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/timeparse"
)

// ReadCommunication reads communication.json ({step: {collective|p2p:
// {"op@hash": {"Communication Time Info": {...}, ...}}}}) as a stream: only
// the "Communication Time Info" numbers are kept, and everything else (the
// bandwidth tables are most of the file) is skipped without being decoded.
// Ops come out ordered by step, kind and name; a key repeated in one object
// keeps its last value, as a JSON object decode would.
func ReadCommunication(r io.Reader, file string) ([]model.CommOpInfo, error) {
	t := &tok{r: limit(r, MaxCommunicationBytes), buf: make([]byte, 64<<10)}
	fail := func(err error) ([]model.CommOpInfo, error) {
		return nil, fmt.Errorf("%s: expected communication.json ({step: {collective|p2p: {op@group: ...}}}): %w", file, err)
	}
	type keyed struct {
		key string
		ci  model.CommOpInfo
		bad bool // a time that is not a finite number
	}
	var out []keyed
	err := t.object(func(step string) error {
		return t.object(func(kind string) error {
			return t.object(func(key string) error {
				if key == "Total Op Info" {
					return t.skip()
				}
				op, hash := key, ""
				if i := strings.LastIndexByte(key, '@'); i >= 0 {
					op, hash = key[:i], key[i+1:]
				}
				ci := model.CommOpInfo{Step: step, Kind: kind, Op: op, GroupHash: hash}
				bad := false
				err := t.object(func(k string) error {
					if k != "Communication Time Info" {
						return t.skip()
					}
					ci = model.CommOpInfo{Step: step, Kind: kind, Op: op, GroupHash: hash}
					bad = false
					return t.object(func(f string) error {
						v, err := t.scalar()
						if err != nil {
							return err
						}
						num := func() float64 {
							x, err := strconv.ParseFloat(string(v), 64)
							if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
								bad = true
							}
							return x
						}
						switch f {
						case "Start Timestamp(us)":
							ci.Start, _ = timeparse.MicrosToNanos(v)
						case "Elapse Time(ms)":
							ci.ElapseMs = num()
						case "Transit Time(ms)":
							ci.TransitMs = num()
						case "Wait Time(ms)":
							ci.WaitMs = num()
						case "Synchronization Time(ms)":
							ci.SyncMs = num()
						case "Idle Time(ms)":
							ci.IdleMs = num()
						}
						return nil
					})
				})
				if err != nil {
					return err
				}
				out = append(out, keyed{key, ci, bad})
				return nil
			})
		})
	})
	if err != nil {
		return fail(err)
	}
	slices.SortStableFunc(out, func(a, b keyed) int {
		if c := strings.Compare(a.ci.Step, b.ci.Step); c != 0 {
			return c
		}
		if c := strings.Compare(a.ci.Kind, b.ci.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	// a key repeated in one object: the last one wins
	kept := make([]model.CommOpInfo, 0, len(out))
	skipped, firstBad := 0, ""
	for i, o := range out {
		if i+1 < len(out) && out[i+1].ci.Step == o.ci.Step && out[i+1].ci.Kind == o.ci.Kind && out[i+1].key == o.key {
			continue
		}
		if o.bad {
			if skipped == 0 {
				firstBad = o.ci.Step + "/" + o.ci.Kind + "/" + o.key
			}
			skipped++
			continue
		}
		kept = append(kept, o.ci)
	}
	if len(kept) == 0 {
		kept = nil
	}
	if skipped > 0 {
		// the rest is returned with the error, which callers turn into a warning
		return kept, fmt.Errorf("%s: skipped %d op(s) with a time out of range (first %q)", file, skipped, clip(firstBad, 120))
	}
	return kept, nil
}

// tok is a small pull tokenizer over a stream, for JSON files whose shape
// is known: it reads objects member by member and skips what it is not
// asked for without building values.
type tok struct {
	r        io.Reader
	buf      []byte
	pos, end int
	off      int64 // file offset of buf[0]
	eof      bool
	err      error
	scratch  []byte
	names    map[string]string
}

func (t *tok) fill() bool {
	if t.eof {
		return false
	}
	t.off += int64(t.end)
	t.pos, t.end = 0, 0
	for {
		n, err := t.r.Read(t.buf)
		t.end = n
		if err != nil {
			t.eof = true
			if err != io.EOF {
				t.err = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

func (t *tok) errAt(format string, args ...any) error {
	if t.err != nil {
		return t.err
	}
	return fmt.Errorf("at byte %d: %s", t.off+int64(t.pos), fmt.Sprintf(format, args...))
}

// eof is the error for input that ends inside the document.
func (t *tok) unexpectedEOF() error {
	if t.err != nil {
		return t.err
	}
	return io.ErrUnexpectedEOF
}

// peek returns the next byte that is not whitespace, without consuming it.
func (t *tok) peek() (byte, bool) {
	for {
		for t.pos < t.end {
			c := t.buf[t.pos]
			if c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				t.pos++
				continue
			}
			return c, true
		}
		if !t.fill() {
			return 0, false
		}
	}
}

func (t *tok) expect(c byte) error {
	got, ok := t.peek()
	if !ok {
		return t.unexpectedEOF()
	}
	if got != c {
		return t.errAt("expected %q, found %q", c, got)
	}
	t.pos++
	return nil
}

// str reads a string (the opening quote is next) and returns its text.
// Names repeat (steps, kinds, op names), so they are interned.
func (t *tok) str() (string, error) {
	if err := t.expect('"'); err != nil {
		return "", err
	}
	t.scratch = t.scratch[:0]
	esc := false
	for {
		if t.pos >= t.end && !t.fill() {
			return "", t.unexpectedEOF()
		}
		b := t.buf[t.pos:t.end]
		i := quoteOrBackslash(b)
		if i < 0 {
			t.scratch = append(t.scratch, b...)
			t.pos = t.end
			continue
		}
		t.scratch = append(t.scratch, b[:i]...)
		t.pos += i + 1
		if b[i] == '"' {
			break
		}
		// an escape: keep it raw, resolve below
		esc = true
		t.scratch = append(t.scratch, '\\')
		if t.pos >= t.end && !t.fill() {
			return "", t.unexpectedEOF()
		}
		t.scratch = append(t.scratch, t.buf[t.pos])
		t.pos++
	}
	if s, ok := t.names[string(t.scratch)]; ok {
		return s, nil
	}
	s := string(t.scratch)
	if esc {
		var u string
		if err := json.Unmarshal(append(append([]byte{'"'}, t.scratch...), '"'), &u); err == nil {
			s = u
		}
	}
	if t.names == nil {
		t.names = map[string]string{}
	}
	t.names[string(t.scratch)] = s
	return s, nil
}

// object reads an object, calling member for each key; member must consume
// the value. A null object is empty.
func (t *tok) object(member func(key string) error) error {
	c, ok := t.peek()
	if !ok {
		return t.unexpectedEOF()
	}
	if c == 'n' {
		_, err := t.scalar()
		return err
	}
	if err := t.expect('{'); err != nil {
		return err
	}
	if c, ok := t.peek(); ok && c == '}' {
		t.pos++
		return nil
	}
	for {
		k, err := t.str()
		if err != nil {
			return err
		}
		if err := t.expect(':'); err != nil {
			return err
		}
		if err := member(k); err != nil {
			return err
		}
		c, ok := t.peek()
		if !ok {
			return t.unexpectedEOF()
		}
		t.pos++
		switch c {
		case ',':
			continue
		case '}':
			return nil
		default:
			return t.errAt("expected ',' or '}', found %q", c)
		}
	}
}

// scalar reads a number, literal or string value and returns its text
// (string content without quotes).
func (t *tok) scalar() ([]byte, error) {
	c, ok := t.peek()
	if !ok {
		return nil, t.unexpectedEOF()
	}
	switch c {
	case '"':
		s, err := t.str()
		return []byte(s), err
	case '{', '[':
		return nil, t.skip()
	}
	t.scratch = t.scratch[:0]
	for {
		if t.pos >= t.end && !t.fill() {
			break
		}
		c := t.buf[t.pos]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			break
		}
		t.scratch = append(t.scratch, c)
		t.pos++
	}
	if len(t.scratch) == 0 {
		return nil, t.errAt("expected a value, found %q", c)
	}
	return t.scratch, nil
}

// skip consumes one value of any kind without decoding it.
func (t *tok) skip() error {
	c, ok := t.peek()
	if !ok {
		return t.unexpectedEOF()
	}
	if c != '{' && c != '[' {
		_, err := t.scalar()
		return err
	}
	depth := 0
	inStr := false
	for {
		if t.pos >= t.end && !t.fill() {
			return t.unexpectedEOF()
		}
		b := t.buf[t.pos:t.end]
		for i := 0; i < len(b); i++ {
			c := b[i]
			if inStr {
				j := quoteOrBackslash(b[i:])
				if j < 0 {
					i = len(b)
					break
				}
				i += j
				if b[i] == '\\' {
					if i+1 >= len(b) {
						// the escaped byte is in the next block
						t.pos += i + 1
						if !t.fill() {
							return t.unexpectedEOF()
						}
						t.pos++
						b = t.buf[t.pos:t.end]
						i = -1
						continue
					}
					i++
					continue
				}
				inStr = false
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
					t.pos += i + 1
					return nil
				}
			}
		}
		t.pos = t.end
	}
}

// quoteOrBackslash is bytes.IndexAny(b, `"\`), but with two IndexByte
// scans (vectorised) instead of IndexAny's byte loop.
func quoteOrBackslash(b []byte) int {
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		return bytes.IndexByte(b, '\\')
	}
	if e := bytes.IndexByte(b[:q], '\\'); e >= 0 {
		return e
	}
	return q
}
