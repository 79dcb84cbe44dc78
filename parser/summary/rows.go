package summary

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
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
