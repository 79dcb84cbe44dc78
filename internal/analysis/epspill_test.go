package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis/replay"
)

// A rank's EP load series wait in the spill file and read back as they
// were (a negative, a large value, an empty series left nil); a result
// with none writes nothing.
func TestEPLoadSeriesSpillReadsBack(t *testing.T) {
	s := replay.NewSpill()
	if s == nil {
		t.Skip("no spill file here")
	}
	want := EPLoadResult{Layers: []int64{5, -3, 1 << 40}, Dispatch: []int64{7}, Combine: []int64{0}, GlobalRanks: []int{0, 1}}
	r := want
	r.spillSeries(s)
	require.True(t, r.seriesAt.Spilled())
	require.Nil(t, r.Layers)
	require.Nil(t, r.Dispatch)
	r.readSeries()
	require.Equal(t, want, r)

	var none EPLoadResult
	none.spillSeries(s)
	require.False(t, none.seriesAt.Spilled())
}
