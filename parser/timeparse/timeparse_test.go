package timeparse

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMicrosToNanos(t *testing.T) {
	for in, want := range map[string]int64{
		"1736408883704643.212":     1736408883704643212,
		"\"1736408883704643.212\"": 1736408883704643212,
		"1736408883704643.212\t":   1736408883704643212,
		"1736408883973810":         1736408883973810000,
		"145.57":                   145570,
		"0.45077999999999996":      451,
		"0.60003125":               600,
		"0.0005":                   1,
		"79000":                    79000000,
		"-1.5":                     -1500,
		"1e-05":                    0,
		"2.5E+3":                   2500000,
		".5":                       500,
	} {
		got, ok := MicrosToNanos([]byte(in))
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "N/A", "abc", "1.2.3", "-", "99999999999999999999999"} {
		_, ok := MicrosToNanos([]byte(bad))
		require.False(t, ok, bad)
	}
}

// TestMaxWholeMicros: MaxWholeMicros is exactly the edge MicrosToNanos
// keeps (the trace reader's fast path relies on it).
func TestMaxWholeMicros(t *testing.T) {
	edge := strconv.FormatInt(MaxWholeMicros, 10)
	if ns, ok := MicrosToNanos([]byte(edge + ".999")); !ok || ns != MaxWholeMicros*1000+999 {
		t.Fatalf("%s.999: %d, %v", edge, ns, ok)
	}
	above := strconv.FormatInt(MaxWholeMicros+1, 10)
	if ns, ok := MicrosToNanos([]byte(above)); ok {
		t.Fatalf("%s accepted as %d", above, ns)
	}
}
