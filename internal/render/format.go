package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/units"
)

// The formatting helpers every writer shares: units (Dur, Count, the
// percentages), metric values and changes (FormatValue, FormatDelta), the
// one sanitizer of text taken from traces (sanitize, through Safe for
// text outputs and cleanText for HTML) and first-line helpers.

// us converts nanoseconds to microseconds, the unit of every output.
func us(ns int64) float64 { return float64(ns) / 1000 }

// fptr is v for an optional number; nil for NaN and ±Inf, which JSON
// cannot carry.
func fptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Dur formats a duration given in µs for people: 812.5µs, 12.35ms, 1.204s
// (units.Dur, which the rules' texts use too).
func Dur(usv float64) string { return units.Dur(usv) }

// Count formats a token count compactly (14.70M, 52.3k, 812).
func Count(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// pct is part/whole as a percentage for the text outputs, "-" when whole
// is not positive.
func pct(part, whole float64) string { return percent(part, whole, "-") }

// pctText is pct for HTML, "–" when whole is not positive.
func pctText(part, whole float64) string { return percent(part, whole, "–") }

func percent(part, whole float64, none string) string {
	if whole <= 0 {
		return none
	}
	return fmt.Sprintf("%.1f%%", 100*part/whole)
}

// intText formats v rounded, with thousands separators: 1,234,567.
func intText(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// raw is v in the shortest form that reads back exactly.
func raw(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// isTime reports whether a metric is a time in µs.
func isTime(name string) bool { return strings.HasSuffix(name, "time_us") }

// aTime stands for any time metric (µs) where FormatValue, FormatDelta and
// goodBad format a duration that is no metric of its own: a step or a
// kernel's time.
const aTime = "x.time_us"

// FormatValue formats a metric value for people: µs durations, ratios as
// %, serving metrics in their units, counts as numbers.
func FormatValue(name string, v float64) string {
	switch {
	case strings.HasPrefix(name, "serving."):
		return ServingValue(name, v)
	case isTime(name) || strings.HasSuffix(name, "_us"):
		return Dur(v)
	case strings.HasSuffix(name, ".share"):
		return fmt.Sprintf("%.1f%%", v*100)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// FormatDelta formats a change: "+1.20ms (+12.3%)".
func FormatDelta(name string, delta float64, pct *float64) string {
	sign := "+"
	if delta < 0 {
		sign = "-"
	}
	var s string
	switch {
	case (strings.HasPrefix(name, "serving.") && (strings.HasSuffix(name, "_rate") || strings.HasSuffix(name, "_usage"))) || strings.HasSuffix(name, ".share"):
		s = fmt.Sprintf("%s%.1f pts", sign, math.Abs(delta)*100)
	default:
		s = sign + FormatValue(name, math.Abs(delta))
	}
	if delta == 0 {
		s = "0"
	}
	if pct != nil && delta != 0 {
		s += fmt.Sprintf(" (%s%%)", noNegativeZero(fmt.Sprintf("%+.1f", *pct)))
	}
	return noNegativeZero(s)
}

// noNegativeZero is s without its leading minus when its number rounds to
// zero ("-0.0µs" → "0.0µs"): a change too small to show has no direction.
func noNegativeZero(s string) string {
	num, _, _ := strings.Cut(s, " (")
	if strings.HasPrefix(num, "-") && !strings.ContainsAny(num, "123456789") {
		return s[1:]
	}
	return s
}

// sanitize is the one sanitizer of text taken from traces: control
// characters become spaces, a byte of invalid UTF-8 becomes invalid, and
// the text is capped at max runes (0: no cap), ending in "…" when cut.
func sanitize(s string, max int, invalid rune) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			r = invalid
		}
		if unicode.IsControl(r) {
			r = ' '
		}
		if max > 0 && n >= max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// Safe is sanitize for the terminal and the other text outputs: invalid
// UTF-8 becomes '?'.
func Safe(s string, maxLen int) string { return sanitize(s, maxLen, '?') }

// cleanText is sanitize for HTML: invalid UTF-8 becomes U+FFFD.
// html/template does the HTML escaping.
func cleanText(s string, max int) string { return sanitize(s, max, utf8.RuneError) }

// cleanBlock is cleanText for multi-line blocks (fixes, diffs): newlines
// and tabs are kept.
func cleanBlock(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = cleanText(strings.ReplaceAll(l, "\t", "    "), 0)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n ")
}

// FirstLine is s up to its first newline (an error's headline; the rest is
// detail or a stack).
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// joinInts joins integers with sep: joinInts([]int{1, 3}, ", ") is "1, 3".
func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// joinRuns joins ids with ", ", a run of three or more consecutive ones as
// first, dash, last: 0,1,2,3,5,7,8 is "0-3, 5, 7, 8" with dash "-".
func joinRuns(ids []int, dash string) string { return strings.Join(runParts(ids, dash), ", ") }

// runParts is ids as items, a run of three or more consecutive ones as
// first, dash, last: 0,1,2,3,5 is "0-3", "5".
func runParts(ids []int, dash string) []string {
	var parts []string
	for _, run := range units.Runs(ids) {
		switch run[1] - run[0] {
		case 0:
			parts = append(parts, strconv.Itoa(run[0]))
		case 1:
			parts = append(parts, strconv.Itoa(run[0]), strconv.Itoa(run[1]))
		default:
			parts = append(parts, strconv.Itoa(run[0])+dash+strconv.Itoa(run[1]))
		}
	}
	return parts
}
