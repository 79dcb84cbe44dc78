package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The median of an even count is the midpoint of the two middle values
// (the lower one made a 4-rank capture's two heavier ranks outliers with
// MAD 0), and so is the MAD.
func TestMidpointMedian(t *testing.T) {
	m, mad := robust([]float64{10, 1, 3, 2})
	require.Equal(t, 2.5, m)
	// deviations 0.5, 0.5, 1.5, 7.5
	require.Equal(t, 1.0, mad)
	m, mad = robust([]float64{5, 1, 3})
	require.Equal(t, 3.0, m)
	require.Equal(t, 2.0, mad)
	// two stages of two ranks each: no rank stands out against the
	// median of the four
	m, mad = robust([]float64{100, 100, 150, 150})
	require.Equal(t, 125.0, m)
	require.Equal(t, 25.0, mad)
	require.Less(t, zscore(150, m, mad), SlowZ)
	require.Zero(t, medianOf(nil))
}

// One AI CPU test serves every metric: the core decides when known, else
// the kernel implementation the name names, else nothing does.
func TestOnAICPU(t *testing.T) {
	for _, c := range []struct {
		core, name string
		on, known  bool
	}{
		{"AI_CPU", "aclnnCumsum_CumsumAiCore_Cumsum", true, true},
		{"AI_VECTOR_CORE", "aclnnCumsum_CumsumAiCpu_Cumsum", false, true},
		{"N/A", "aclnnCumsum_CumsumAiCpu_Cumsum", true, true},
		{"", "aclnnInplaceRelu_ReluAiCore_Relu", false, true},
		{"N/A", "trans_TransData_0", false, false},
		{"UNKNOWN", "Cumsum", false, false},
	} {
		on, known := OnAICPU(c.core, c.name)
		require.Equal(t, c.on, on, "%s %s", c.core, c.name)
		require.Equal(t, c.known, known, "%s %s", c.core, c.name)
	}
}
