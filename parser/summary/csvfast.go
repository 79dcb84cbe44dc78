package summary

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// csvReader reads CSV records the way encoding/csv does with LazyQuotes
// and FieldsPerRecord = -1 (the settings npuprof uses for the profiler's
// CSVs), without allocating per record: fields are byte slices into one
// reused buffer, valid until the next call. kernel_details.csv is tens of
// MB with a quoted `Input Shapes` cell on every row; encoding/csv allocated
// a string per cell.
type csvReader struct {
	br     *bufio.Reader
	line   int // lines read so far
	rec    []byte
	ends   []int
	fields [][]byte
}

func newCSVReader(r io.Reader) *csvReader {
	return &csvReader{br: bufio.NewReaderSize(r, 1<<16)}
}

// readLine returns the next line with "\r\n" turned into "\n"; the slice
// is valid until the next read. It returns io.EOF when nothing is left.
func (c *csvReader) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = c.br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if len(line) > 0 && err == io.EOF {
		err = nil
		// a last line without a newline
		if line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
	}
	if err != nil {
		return nil, err
	}
	c.line++
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, nil
}

// lenNL is 1 when b ends with '\n'.
func lenNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

// read returns the next record and the line it starts on. Empty lines are
// skipped, as encoding/csv does.
func (c *csvReader) read() ([][]byte, int, error) {
	var line []byte
	var err error
	for {
		line, err = c.readLine()
		if err != nil {
			return nil, 0, err
		}
		if len(line) != lenNL(line) {
			break
		}
	}
	start := c.line
	c.rec, c.ends = c.rec[:0], c.ends[:0]
	pos := 0
	for {
		if pos >= len(line)-lenNL(line) || line[pos] != '"' {
			// unquoted field: up to the next comma or the end of line
			rest := line[pos:]
			i := bytes.IndexByte(rest, ',')
			if i < 0 {
				c.rec = append(c.rec, rest[:len(rest)-lenNL(rest)]...)
				c.ends = append(c.ends, len(c.rec))
				break
			}
			c.rec = append(c.rec, rest[:i]...)
			c.ends = append(c.ends, len(c.rec))
			pos += i + 1
			continue
		}
		// quoted field
		pos++
		done := false
		for !done {
			rest := line[pos:]
			i := bytes.IndexByte(rest, '"')
			if i < 0 {
				// the field goes on on the next line
				c.rec = append(c.rec, rest...)
				line, err = c.readLine()
				if err != nil {
					// end of input inside quotes: the field ends here
					c.ends = append(c.ends, len(c.rec))
					return c.split(), start, nil
				}
				pos = 0
				continue
			}
			c.rec = append(c.rec, rest[:i]...)
			pos += i + 1
			switch {
			case pos < len(line) && line[pos] == '"':
				c.rec = append(c.rec, '"') // "" is one quote
				pos++
			case pos < len(line) && line[pos] == ',':
				pos++
				c.ends = append(c.ends, len(c.rec))
				done = true
			case pos >= len(line)-lenNL(line):
				c.ends = append(c.ends, len(c.rec))
				return c.split(), start, nil
			default:
				c.rec = append(c.rec, '"') // a stray quote is kept (LazyQuotes)
			}
		}
	}
	return c.split(), start, nil
}

func (c *csvReader) split() [][]byte {
	c.fields = c.fields[:0]
	prev := 0
	for _, e := range c.ends {
		c.fields = append(c.fields, c.rec[prev:e])
		prev = e
	}
	return c.fields
}
