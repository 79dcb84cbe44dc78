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

// Any power-of-ten unit keeps every digit of its decimal text (epoch
// milliseconds with microseconds, as MS Service Profiler writes them).
func TestToNanosKeepsEveryDigit(t *testing.T) {
	for _, c := range []struct {
		in   string
		unit int64
		want int64
	}{
		{"1763613072123.456", 1_000_000, 1763613072123456000},
		{"1763613072123456", 1000, 1763613072123456000},
		{"12.3456789", 1_000_000, 12345679},
		{"12.3456784", 1_000_000, 12345678},
		{"0.0005", 1000, 1},
		{"-1.5", 1_000_000, -1500000},
		{"\"38\"", 1_000_000, 38000000},
		{"1e3", 1_000_000, 1000000000},
		{"7", 1, 7},
	} {
		got, ok := ToNanos([]byte(c.in), c.unit)
		require.True(t, ok, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{"", "x", "1.2.3", "99999999999999999999", "-", "1e400"} {
		_, ok := ToNanos([]byte(bad), 1_000_000)
		require.False(t, ok, bad)
	}
}
