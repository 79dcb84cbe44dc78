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
