// Package walkref is issue 7's reference loop: "a plain Go loop that only
// walks the bytes (string-aware, counting events)". It does nothing a
// parser needs (no keys, no numbers, no model) and is the yardstick the
// benchmarks compare npuprof with, so that a run on one machine can be
// related to the figures from another (docs/performance.md,
// "Calibration").
package walkref

import (
	"errors"
	"io"
)

// Events reads r in 1 MiB blocks and counts the top-level objects of a JSON
// array (the events of a trace_view.json): a '}' that brings the brace
// depth back to zero, outside strings, with backslash escapes honoured.
func Events(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	inStr, esc := false, false
	depth, events := 0, int64(0)
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if inStr {
				if esc {
					esc = false
				} else if c == '\\' {
					esc = true
				} else if c == '"' {
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					events++
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
	}
}
