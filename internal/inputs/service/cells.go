package service

import (
	"math"
	"strconv"
	"time"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// Units of a column (the parenthesized suffix of its header), as the
// nanoseconds in one unit.
const (
	unitNone   = 0
	unitMicros = 1_000
	unitMillis = 1_000_000
	unitSecond = 1_000_000_000
)

// shanghai is the writer's fixed zone for datetime text: it formats epoch
// times with tz_convert('Asia/Shanghai'), UTC+8 without daylight saving.
var shanghai = time.FixedZone("Asia/Shanghai", 8*3600)

// trim drops surrounding spaces and one pair of double quotes.
func trim(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	return b
}

// absent reports whether a cell holds no value: empty, N/A, nan, None,
// <NA> (pandas writes each of these for a missing value).
func absent(b []byte) bool {
	b = trim(b)
	switch string(b) {
	case "", "N/A", "NA", "nan", "NaN", "None", "<NA>", "null", "NULL":
		return true
	}
	return false
}

// datetime parses the writer's local datetime text, "2025-11-20
// 10:11:12:123456" (strftime "%Y-%m-%d %H:%M:%S:%f"; a '.' before the
// fraction, a 'T' between date and time and a fraction of 0 to 9 digits
// are accepted too), into ns since the epoch.
func datetime(b []byte) (int64, bool) {
	b = trim(b)
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	var f [6]int
	var ok bool
	for i, r := range [6][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}} {
		if f[i], ok = num(b[r[0]:r[1]]); !ok {
			return 0, false
		}
	}
	if f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 60 {
		return 0, false
	}
	var nanos int64
	if rest := b[19:]; len(rest) > 0 {
		if rest[0] != ':' && rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return 0, false
		}
		fr, ok := num(rest[1:])
		if !ok {
			return 0, false
		}
		nanos = int64(fr)
		for k := len(rest) - 1; k < 9; k++ {
			nanos *= 10
		}
	}
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, shanghai)
	return t.Unix()*1e9 + nanos, true
}

// timeCell parses a time cell: datetime text, else a number in the
// column's unit (a unitless number is epoch ms, the unit of the writer's
// tables).
func timeCell(b []byte, unit int64) (int64, bool) {
	b = trim(b)
	if len(b) >= 19 && b[4] == '-' {
		return datetime(b)
	}
	if unit == unitNone {
		unit = unitMillis
	}
	return timeparse.ToNanos(b, unit)
}

// durCell parses a duration cell in the column's unit (a unitless one is
// ms, the unit of profiler.db's tables).
func durCell(b []byte, unit int64) (int64, bool) {
	if unit == unitNone {
		unit = unitMillis
	}
	return timeparse.ToNanos(b, unit)
}

// intCell parses a count ("12", "12.0", as pandas writes an integer column
// with missing values) into an int32.
func intCell(b []byte) (int32, bool) {
	b = trim(b)
	if n, err := strconv.ParseInt(string(b), 10, 32); err == nil {
		return int32(n), true
	}
	v, ok := timeparse.ToNanos(b, 1000)
	if !ok || v%1000 != 0 || v/1000 > math.MaxInt32 || v/1000 < math.MinInt32 {
		return 0, false
	}
	return int32(v / 1000), true
}

// floatCell parses a ratio.
func floatCell(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(trim(b)), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// optional cells: an absent cell is NoServiceValue (NaN), a present one
// that does not parse makes the row bad.
func optTime(b []byte, unit int64) (int64, bool) {
	if absent(b) {
		return model.NoServiceValue, true
	}
	return timeCell(b, unit)
}

func optDur(b []byte, unit int64) (int64, bool) {
	if absent(b) {
		return model.NoServiceValue, true
	}
	return durCell(b, unit)
}

func optInt(b []byte) (int32, bool) {
	if absent(b) {
		return model.NoServiceValue, true
	}
	return intCell(b)
}

func optFloat(b []byte) (float32, bool) {
	if absent(b) {
		return float32(math.NaN()), true
	}
	f, ok := floatCell(b)
	return float32(f), ok
}
