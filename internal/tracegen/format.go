package tracegen

import (
	"math"
	"strconv"
)

// appendTS appends ns as microseconds with exactly three decimals
// ("1736408883704643.212"), the text form of trace_view `ts` and of CSV
// start cells (docs/formats.md#times-and-cells).
func appendTS(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendUs appends ns as microseconds the way Python prints a float
// rounded to 3 decimals: trailing zeros trimmed, at least one decimal
// ("31.25", "145.0", "0.02").
func appendUs(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	b = append(b, '.')
	switch {
	case f == 0:
		return append(b, '0')
	case f%100 == 0:
		return append(b, byte('0'+f/100))
	case f%10 == 0:
		return append(b, byte('0'+f/100), byte('0'+f/10%10))
	}
	return append(b, byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendDur appends a trace `dur`: like appendUs, but a zero duration is
// the integer 0 as in real files (`"dur": 0`).
func appendDur(b []byte, ns int64) []byte {
	if ns == 0 {
		return append(b, '0')
	}
	return appendUs(b, ns)
}

// usText is appendUs as a string.
func usText(ns int64) string { return string(appendUs(nil, ns)) }

// tsText is appendTS as a string.
func tsText(ns int64) string { return string(appendTS(nil, ns)) }

// pyFloat formats a float roughly like Python's repr (shortest round-trip).
func pyFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	if math.Abs(v) >= 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// round4 rounds to 4 decimals (msprof ratio precision).
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// csvCell quotes a CSV cell the way Python's csv module does (minimal
// quoting: only when it contains a comma, quote or line break).
func appendCSVCell(b []byte, s string) []byte {
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			need = true
			break
		}
	}
	if !need {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// quoted wraps a shape value in the literal double quotes msprof writes
// around Input/Output Shapes (`"25,4096;25,8"`).
func quoted(s string) string { return `"` + s + `"` }
