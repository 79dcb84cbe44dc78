package rules

import "testing"

func TestMostCommonStream(t *testing.T) {
	v, n := mostCommon(map[int]float64{0: 2, 1: 2, 2: 5, 3: 2, 4: 5})
	if v != 2 || n != 3 {
		t.Fatalf("mostCommon = %v on %d ranks, want 2 on 3", v, n)
	}
	v, n = mostCommon(map[int]float64{0: 7, 1: 3})
	if v != 3 || n != 1 {
		t.Fatalf("tie: mostCommon = %v on %d ranks, want the smaller id 3 on 1", v, n)
	}
}
