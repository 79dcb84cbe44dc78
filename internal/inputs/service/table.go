package service

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/npuprof/npuprof/internal/infile"
	"strings"
)

// column is one header cell: its base name, lower case, without the unit
// suffix ("start_time(ms)" is start_time in ms), and the unit.
type column struct {
	base string
	unit int64
}

// parseHeader splits a header cell into base name and unit.
func parseHeader(h string) column {
	h = strings.TrimPrefix(h, "\ufeff") // a byte-order mark before the first cell
	h = strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimSpace(h), `"`)))
	c := column{base: h}
	if i := strings.LastIndexByte(h, '('); i > 0 && strings.HasSuffix(h, ")") {
		switch h[i+1 : len(h)-1] {
		case "microsecond", "us", "μs", "µs":
			c.unit = unitMicros
		case "ms", "millisecond":
			c.unit = unitMillis
		case "s", "second":
			c.unit = unitSecond
		default:
			return c
		}
		c.base = strings.TrimSpace(h[:i])
	}
	return c
}

// sink takes one table's rows: header maps the columns (an error when
// the table lacks what makes it that table) and row reads one row's
// cells, reporting false when a cell does not parse.
type sink interface {
	header(cols []column) error
	row(cells [][]byte) bool
	// grow reserves room for n more rows.
	grow(n int)
}

// splitCSV splits one CSV line into cells (double-quoted cells may hold
// commas and doubled quotes), reusing cells and buf; ok is false when a
// quote is left open.
func splitCSV(line []byte, cells [][]byte, buf []byte) ([][]byte, []byte, bool) {
	cells = cells[:0]
	buf = buf[:0]
	for i := 0; ; {
		if i < len(line) && line[i] == '"' {
			start := len(buf)
			i++
			closed := false
			for i < len(line) {
				c := line[i]
				if c == '"' {
					if i+1 < len(line) && line[i+1] == '"' {
						buf = append(buf, '"')
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				buf = append(buf, c)
				i++
			}
			if !closed {
				return cells, buf, false
			}
			// an unquoted copy in buf: a later append may move buf, but
			// the bytes this cell points to are never written again
			cells = append(cells, buf[start:len(buf):len(buf)])
			for i < len(line) && line[i] != ',' {
				i++
			}
		} else {
			j := bytes.IndexByte(line[i:], ',')
			if j < 0 {
				cells = append(cells, line[i:])
				break
			}
			cells = append(cells, line[i:i+j])
			i += j
		}
		if i >= len(line) {
			break
		}
		i++ // the comma
		if i == len(line) {
			cells = append(cells, line[i:])
			break
		}
	}
	return cells, buf, true
}

// countLines counts the newlines of a file (to size the columns once).
func countLines(path string) int {
	f, err := infile.Open(path, infile.Profile, infile.Opts{Root: filepath.Dir(path)})
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	n := 0
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			return n
		}
	}
}

// readCSV reads a CSV table into s; the issue says what was not read.
func readCSV(path, name string, s sink) (issue, error) {
	f, err := infile.Open(path, infile.Profile, infile.Opts{Root: filepath.Dir(path)})
	if err != nil {
		return issue{}, err
	}
	defer f.Close()
	s.grow(countLines(path))
	return scanCSV(f, name, s)
}

// issue is what of one table was not read.
type issue struct {
	cut          bool
	bad          int
	firstBadLine int
}

func (is *issue) badRow(line int) {
	if is.bad == 0 {
		is.firstBadLine = line
	}
	is.bad++
}

// errNoHeader: the file is empty or its header lacks the table's columns:
// nothing of it is read.
var errNoHeader = errors.New("no header line")

// scanCSV reads a CSV table from r. A last line without its newline is a
// row cut short: dropped, and the issue says the file was cut. A quoted
// cell left open or a row with fewer cells than the header is a bad row,
// skipped and counted.
func scanCSV(r io.Reader, name string, s sink) (issue, error) {
	var is issue
	br := bufio.NewReaderSize(r, 256<<10)
	var cells [][]byte
	var buf, long []byte
	lineNo := 0
	readLine := func() ([]byte, bool, error) {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		line = bytes.TrimRight(line, "\r\n")
		return line, complete, nil
	}
	line, complete, err := readLine()
	if err != nil {
		return is, fmt.Errorf("%s: %w", name, err)
	}
	lineNo++
	if len(line) == 0 {
		return is, fmt.Errorf("%s: %w", name, errNoHeader)
	}
	var ok bool
	if cells, buf, ok = splitCSV(line, cells, buf); !ok || !complete {
		return issue{cut: !complete}, fmt.Errorf("%s: %w", name, errNoHeader)
	}
	cols := make([]column, len(cells))
	for i, c := range cells {
		cols[i] = parseHeader(string(c))
	}
	if err := s.header(cols); err != nil {
		return is, fmt.Errorf("%s: %w: %w", name, errNoHeader, err)
	}
	for {
		line, complete, err := readLine()
		if err != nil {
			return is, fmt.Errorf("%s: %w", name, err)
		}
		lineNo++
		if len(line) == 0 {
			if !complete {
				break // end of file
			}
			continue
		}
		if !complete {
			is.cut = true
			break
		}
		cells, buf, ok = splitCSV(line, cells, buf)
		if !ok || len(cells) < len(cols) || !s.row(cells) {
			is.badRow(lineNo)
		}
	}
	return is, nil
}
