package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"cudagraph_capture_size", "cudagraph_capture_sizes", 1},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
		{"采集", "采样", 1}, // runes, not bytes
		{"same", "same", 0},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
