// Package timeparse converts the profiler's decimal microsecond text into
// int64 nanoseconds without going through float64, so epoch timestamps
// (1736408883704643.212 µs) keep every digit.
package timeparse

import (
	"math"
	"strconv"
)

// MaxWholeMicros is the largest integer part MicrosToNanos accepts: it
// refuses a longer one before multiplying, so that the nanoseconds with
// any three decimals and rounding always fit an int64. Fast paths that
// parse the common spellings themselves hand anything above it to
// MicrosToNanos.
const MaxWholeMicros = (math.MaxInt64/1000-9)/10*10 + 9

// MicrosToNanos parses decimal microseconds ("1736408883704643.212",
// "145.57", "0.45077999999999996", "79000", "-1.5") into nanoseconds,
// rounding half away from zero at the fourth decimal: ToNanos in µs.
func MicrosToNanos(b []byte) (ns int64, ok bool) { return ToNanos(b, 1000) }

// ToNanos parses decimal text in a unit of unitNs nanoseconds (a power of
// ten: 1 ns, 1000 µs, 1e6 ms, 1e9 s) into nanoseconds without going
// through float64 ("1763613072123.456" ms keeps every digit), rounding
// half away from zero below the nanosecond. Surrounding whitespace, TABs
// and one pair of double quotes are ignored. Exponent forms ("1e-05") fall
// back to float parsing, which is exact enough for small values (up to
// 9e15 ns, 104 days). ok is false when the text is not a number or
// overflows.
func ToNanos(b []byte, unitNs int64) (ns int64, ok bool) {
	b = trim(b)
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	fracDigits := 0
	for u := unitNs; u > 1; u /= 10 {
		fracDigits++
	}
	// the largest integer part whose nanoseconds, with any decimals and
	// rounding, fit an int64
	maxIP := (math.MaxInt64/unitNs - 9) / 10
	var ip int64
	i := 0
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if ip > maxIP {
			return 0, false
		}
		ip = ip*10 + int64(b[i]-'0')
		digits++
	}
	var frac int64
	fd := 0
	round := false
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			switch {
			case fd < fracDigits:
				frac = frac*10 + int64(b[i]-'0')
			case fd == fracDigits:
				round = b[i] >= '5'
			}
			fd++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) {
		if b[i] == 'e' || b[i] == 'E' {
			return floatFallback(b, neg, unitNs)
		}
		return 0, false
	}
	for k := fd; k < fracDigits; k++ {
		frac *= 10
	}
	ns = ip*unitNs + frac
	if round {
		ns++
	}
	if neg {
		ns = -ns
	}
	return ns, true
}

func floatFallback(b []byte, neg bool, unitNs int64) (int64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f)*float64(unitNs) > 9e15 {
		return 0, false
	}
	ns := int64(math.Round(f * float64(unitNs)))
	if neg {
		ns = -ns
	}
	return ns, true
}

// LooksNumeric reports whether b (after trimming, like MicrosToNanos) is
// made only of a sign, digits, '.', and an exponent: text that failed to
// parse is then out of range rather than not a number.
func LooksNumeric(b []byte) bool {
	b = trim(b)
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	digits := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+':
		default:
			return false
		}
	}
	return digits > 0
}

// MicrosStringToNanos is MicrosToNanos for a string.
func MicrosStringToNanos(s string) (int64, bool) { return MicrosToNanos([]byte(s)) }

// trim drops surrounding whitespace and one pair of double quotes (and
// the whitespace inside them). It loops rather than recursing, so a hostile
// cell of a million quotes costs time, not stack.
func trim(b []byte) []byte {
	b = trimSpace(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = trimSpace(b[1 : len(b)-1])
	}
	return b
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 {
		c := b[len(b)-1]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			b = b[:len(b)-1]
			continue
		}
		break
	}
	return b
}

// NanosToMicros converts ns to float µs for output.
func NanosToMicros(ns int64) float64 { return float64(ns) / 1000 }

// ParseInt parses a decimal integer cell, ignoring whitespace and quotes.
func ParseInt(b []byte) (int64, bool) {
	b = trim(b)
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		// allow "12.0"
		if ns, ok := MicrosToNanos(b); ok && ns%1000 == 0 {
			return ns / 1000, true
		}
		return 0, false
	}
	return v, true
}
