package summary

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// EachRow reads the records of a lenient CSV after its header, calling fn
// with each and its line. A record the CSV reader cannot parse is skipped
// and counted in issues ("unparsable CSV"); any other error, a line over
// MaxLineBytes included, ends the read and is returned naming file.
func EachRow(cr *csv.Reader, file string, issues *RowIssues, fn func(rec []string, line int)) error {
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && !errors.Is(err, errLineTooLong) {
				issues.Skip(pe.Line, "unparsable CSV")
				continue
			}
			return fmt.Errorf("%s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		fn(rec, line)
	}
}

// ErrUnknownHeader is returned when a CSV lacks the columns npuprof needs.
var ErrUnknownHeader = errors.New("unknown header")

// NeedColumns checks that idx (from ExactHeaderIndex or the loose
// matching) has each key of need. The error names the first one missing
// as the header would (its first alias in cols) and, with found, what the
// header held (HeaderFound).
func NeedColumns(file string, header []string, idx map[string]int, cols map[string][]string, found bool, need ...string) error {
	for _, k := range need {
		if _, ok := idx[k]; ok {
			continue
		}
		if !found {
			return fmt.Errorf("%s: %w: no %q column", file, ErrUnknownHeader, cols[k][0])
		}
		return fmt.Errorf("%s: %w: no %q column (%s)", file, ErrUnknownHeader, cols[k][0], HeaderFound(header, len(idx)))
	}
	return nil
}

// MaxLineBytes bounds one CSV line (a quoted cell may span lines; a whole
// record is bounded by this too). No profiler writes lines near it; a
// file that does is read up to that line and reported, so memory stays
// bounded. A variable so tests can lower it.
var MaxLineBytes = 16 << 20

var errLineTooLong = errors.New("line too long")

// lineLimit fails a read once a line grows beyond max bytes.
type lineLimit struct {
	r    io.Reader
	max  int
	cur  int // bytes since the last newline
	line int // 1-based line being read
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	// newline to newline with IndexByte (vectorised), not byte by byte
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		seg := n - i
		if j >= 0 {
			seg = j
		}
		if l.cur+seg > l.max {
			return i + (l.max - l.cur), fmt.Errorf("%w: line %d is longer than %d MiB", errLineTooLong, l.line, l.max>>20)
		}
		if j < 0 {
			l.cur += seg
			break
		}
		l.cur = 0
		l.line++
		i += j + 1
	}
	return n, err
}

// newCSV returns the lenient CSV reader every summary CSV uses: variable
// cell counts (checked per row against the header), lazy quotes, bounded
// line length; its lineLimit says where the input ended.
func newCSV(r io.Reader) (*csv.Reader, *lineLimit) {
	ll := &lineLimit{r: r, max: MaxLineBytes, line: 1}
	cr := csv.NewReader(ll)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	return cr, ll
}

// cutLine is the line the input read through l ended inside, without a
// newline (cut short?); 0 when it ended with one.
func (l *lineLimit) cutLine() int {
	if l.cur > 0 {
		return l.line
	}
	return 0
}

// LineTracker passes a reader through and says whether the input ended
// inside a line (without a final newline), as a cut file does.
type LineTracker struct {
	r    io.Reader
	line int // 1-based line being read
	cur  int // bytes since the last newline
}

// NewLineTracker tracks the lines read from r.
func NewLineTracker(r io.Reader) *LineTracker { return &LineTracker{r: r, line: 1} }

func (t *LineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if k := bytes.Count(p[:n], []byte{'\n'}); k > 0 {
		t.line += k
		t.cur = n - 1 - bytes.LastIndexByte(p[:n], '\n')
	} else {
		t.cur += n
	}
	return n, err
}

// CutLine is the line the input ended inside, without a newline; 0 when
// it ended with one (or was empty).
func (t *LineTracker) CutLine() int {
	if t.cur > 0 {
		return t.line
	}
	return 0
}

// CellCountOK accepts a row with exactly as many cells as the header, or
// with extra cells that are all empty (a trailing comma).
func CellCountOK(rec []string, n int) bool {
	if len(rec) < n {
		return false
	}
	for _, c := range rec[n:] {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// errTooLarge is returned by a limited reader past its limit.
var errTooLarge = errors.New("file too large")

type limited struct {
	r    io.Reader
	left int64
	max  int64
}

// limit returns r, failing with errTooLarge once more than max bytes are read.
func limit(r io.Reader, max int64) io.Reader { return &limited{r: r, left: max, max: max} }

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// is there more?
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%w: larger than the %d MiB npuprof reads", errTooLarge, l.max>>20)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
