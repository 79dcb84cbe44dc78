package traceview

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// lowerFrom finds what a binary search finds, from any starting position:
// before, at or past the answer, near it or more than its walk away.
func TestLowerFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		l := make([]int64, rng.IntN(80))
		for i := range l {
			l[i] = rng.Int64N(60)
		}
		slices.Sort(l)
		v := rng.Int64N(70) - 5
		pos := rng.IntN(len(l) + 3)
		want, _ := slices.BinarySearch(l, v)
		if got := lowerFrom(l, pos, v); got != want {
			t.Fatalf("lowerFrom(%v, %d, %d) = %d, want %d", l, pos, v, got, want)
		}
	}
}
