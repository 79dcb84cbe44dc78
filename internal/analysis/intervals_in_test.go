package analysis

import (
	"math/rand"
	"testing"
)

// TestLengthInMatchesClip: the copy-free LengthIn, IntersectLengthIn and
// UnionInto give what Clip, Length, IntersectLength and Union give, on
// random interval sets and windows (including windows that cut intervals,
// miss them all, or are empty).
func TestLengthInMatchesClip(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	randSet := func() []Interval {
		var iv []Interval
		for n := rng.Intn(30); n > 0; n-- {
			s := rng.Int63n(1000)
			iv = append(iv, Interval{s, s + rng.Int63n(80)})
		}
		return iv
	}
	var buf []Interval
	for k := 0; k < 5000; k++ {
		raw := randSet()
		a, b := Union(append([]Interval(nil), raw...)), Union(randSet())
		buf = UnionInto(buf[:0], append([]Interval(nil), raw...))
		if len(buf) != len(a) || (len(a) > 0 && (buf[0] != a[0] || buf[len(buf)-1] != a[len(a)-1])) || Length(buf) != Length(a) {
			t.Fatalf("UnionInto %v != Union %v", buf, a)
		}
		lo := rng.Int63n(1100) - 50
		hi := lo + rng.Int63n(600) - 20
		if got, want := LengthIn(a, lo, hi), Length(Clip(a, lo, hi)); got != want {
			t.Fatalf("LengthIn(%v, %d, %d) = %d, want %d", a, lo, hi, got, want)
		}
		if got, want := IntersectLengthIn(a, b, lo, hi), IntersectLength(Clip(a, lo, hi), Clip(b, lo, hi)); got != want {
			t.Fatalf("IntersectLengthIn(%v, %v, %d, %d) = %d, want %d", a, b, lo, hi, got, want)
		}
	}
}

// The copy-making versions LengthIn and IntersectLengthIn replaced, kept
// as the reference they are checked against.

// Length is the total length of disjoint intervals.
func Length(iv []Interval) int64 {
	var n int64
	for _, x := range iv {
		n += x.End - x.Start
	}
	return n
}

// IntersectLength is the length of the intersection of two sorted,
// disjoint interval lists.
func IntersectLength(a, b []Interval) int64 {
	var n int64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo := max(a[i].Start, b[j].Start)
		hi := min(a[i].End, b[j].End)
		if hi > lo {
			n += hi - lo
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return n
}

// Clip restricts sorted disjoint intervals to [lo, hi).
func Clip(iv []Interval, lo, hi int64) []Interval {
	var out []Interval
	for _, x := range iv {
		s, e := max(x.Start, lo), min(x.End, hi)
		if e > s {
			out = append(out, Interval{s, e})
		}
	}
	return out
}
