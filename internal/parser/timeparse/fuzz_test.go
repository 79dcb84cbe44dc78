package timeparse

import (
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

var plainDecimal = regexp.MustCompile(`^[+-]?[0-9]*(\.[0-9]*)?$`)

// exactNanos rounds a plain decimal number of µs to ns, half away from
// zero, with exact rational arithmetic: the reference MicrosToNanos must
// match digit for digit.
func exactNanos(s string) (*big.Int, bool) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, false
	}
	r.Mul(r, big.NewRat(1000, 1))
	neg := r.Sign() < 0
	r.Abs(r)
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if neg {
		q.Neg(q)
	}
	return q, true
}

// FuzzMicrosToNanos checks MicrosToNanos against exact rational arithmetic
// for every plain decimal, and that nothing panics on anything else.
func FuzzMicrosToNanos(f *testing.F) {
	for _, s := range []string{"1736408883704643.212", "145.57", "0.45077999999999996", "79000", "-1.5",
		"\"12.5\t\"", "1e-05", "9223372036854775.807", "9223372036854775807", ".5", "-.0005", "", "+", "1.2.3", "\t12\t", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := MicrosStringToNanos(s)
		_, _ = ParseInt([]byte(s))
		txt := string(trim([]byte(s)))
		if !plainDecimal.MatchString(txt) || strings.Trim(txt, "+-.") == "" {
			return
		}
		want, exact := exactNanos(strings.TrimSuffix(strings.TrimPrefix(txt, "+"), "."))
		if !exact {
			return
		}
		if !ok {
			// refused: only when the value does not fit comfortably in int64
			if want.IsInt64() && math.Abs(float64(want.Int64())) < 9e18 {
				t.Fatalf("%q: refused, but it is %v ns", s, want)
			}
			return
		}
		if !want.IsInt64() || want.Int64() != ns {
			t.Fatalf("%q: got %d ns, want %v", s, ns, want)
		}
	})
}
