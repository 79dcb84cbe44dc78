package units

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDurScales(t *testing.T) {
	for _, c := range []struct {
		us   float64
		want string
	}{
		{0, "0.0µs"},
		{812.54, "812.5µs"},
		{-999.9, "-999.9µs"},
		{1000, "1.00ms"},
		{12345, "12.35ms"},
		{-12345, "-12.35ms"},
		{999_999, "1000.00ms"},
		{1_204_000, "1.204s"},
		{-3e6, "-3.000s"},
		{math.Inf(1), "+Infs"},
		{math.NaN(), "NaNs"},
	} {
		require.Equal(t, c.want, Dur(c.us), "Dur(%v)", c.us)
	}
}

func TestRuns(t *testing.T) {
	require.Equal(t, [][2]int{{0, 3}, {5, 5}, {7, 8}}, Runs([]int{7, 0, 2, 1, 5, 3, 8}))
	// a repeated id counts once, as the report's device list wants
	require.Equal(t, [][2]int{{1, 2}}, Runs([]int{2, 1, 1}))
	require.Empty(t, Runs(nil))
}
