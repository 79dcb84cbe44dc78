package intern

import (
	"math/rand/v2"
	"testing"
)

// TestInternerMatchesMap checks internID against a map: the same string
// gives the same copy and number, a new one the next number, over strings
// of 0 to 24 bytes mostly of one letter, so that many share their first
// and last bytes (the short table's keys of two lengths can agree: the
// test fails if the table does not compare lengths) and both tables and
// the small-vocabulary scan are used.
func TestInternerMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 20; round++ {
		var in Strings
		want := map[string]uint32{}
		n := 3 + rng.IntN(3000) // some rounds stay in the small vocabulary
		for k := 0; k < 20000; k++ {
			b := make([]byte, rng.IntN(25))
			for i := range b {
				b[i] = "aaaa,"[rng.IntN(5)] // runs of one byte: keys of two lengths can agree
			}
			if rng.IntN(n) < len(want) && len(want) > 0 {
				// mostly strings met before, as in a real column
				for s := range want {
					b = []byte(s)
					break
				}
			}
			s, id := in.InternID(b)
			if s != string(b) {
				t.Fatalf("InternID(%q) returned %q", b, s)
			}
			if len(b) == 0 {
				if id != 0 {
					t.Fatalf("InternID(\"\") = %d, want 0", id)
				}
				continue
			}
			w, ok := want[string(b)]
			if !ok {
				w = uint32(len(want) + 1)
				want[string(b)] = w
			}
			if id != w {
				t.Fatalf("round %d: InternID(%q) = %d, want %d", round, b, id, w)
			}
		}
	}
}
