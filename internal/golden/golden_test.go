package golden

import (
	"strings"
	"testing"
)

// The first differing line is named with both sides; a file that only
// gains or loses lines at its end differs at the first missing line.
func TestFirstDiff(t *testing.T) {
	got := firstDiff([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	if got != "line 2:\n  golden: b\n  output: B" {
		t.Fatalf("%q", got)
	}
	got = firstDiff([]byte("a\n"), []byte("a\nextra\n"))
	if !strings.HasPrefix(got, "line 2:\n  golden: \n  output: extra") {
		t.Fatalf("%q", got)
	}
}
