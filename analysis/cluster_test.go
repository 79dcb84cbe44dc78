package analysis

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/parser"
)

func TestRobustStatistics(t *testing.T) {
	m, mad := robust([]float64{1, 2, 3, 4, 100})
	require.Equal(t, 3.0, m)
	require.Equal(t, 1.0, mad)
	require.InDelta(t, (100-3)/1.4826, zscore(100, m, mad), 1e-9)
	// a max-min rule would flag 4 here; the robust rule flags only 100
	st := skewStat("computing", []rankValue{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 100}})
	out := outliers(st, []rankValue{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 100}}, -1, 0)
	require.Len(t, out, 1)
	require.Equal(t, 4, out[0].Rank)
	// identical ranks: nobody is slow
	st = skewStat("computing", []rankValue{{0, 5}, {1, 5}, {2, 5}})
	require.Empty(t, outliers(st, []rankValue{{0, 5}, {1, 5}, {2, 5}}, -1, 0))
	// an outlier smaller than the effect-size floor is not reported
	st = skewStat("free", []rankValue{{0, 100}, {1, 101}, {2, 100}, {3, 150}})
	require.Len(t, outliers(st, []rankValue{{0, 100}, {1, 101}, {2, 100}, {3, 150}}, -1, 0), 1)
	require.Empty(t, outliers(st, []rankValue{{0, 100}, {1, 101}, {2, 100}, {3, 150}}, -1, 60))
}

func TestReconcileNotes(t *testing.T) {
	ids := []parser.RankID{
		{Rank: 0, Path: "a", Steps: []int{2, 3}},
		{Rank: 1, Path: "b_old", DirTimestamp: "20250101000000000", Steps: []int{2, 3}},
		{Rank: 1, Path: "b_new", DirTimestamp: "20250102000000000", Steps: []int{2, 3}},
		{Rank: 4, Path: "e", Steps: []int{2}},
	}
	ranks, keep, notes := parser.Reconcile(ids)
	require.Equal(t, []int{0, 1, 1, 4}, ranks)
	require.Equal(t, []bool{true, false, true, true}, keep)
	all := strings.Join(notes, "\n")
	require.Contains(t, all, "rank 1 appears twice; kept the newest folder b_new, ignored b_old")
	require.Contains(t, all, "missing ranks: 2, 3")
	require.Contains(t, all, "ranks 0-1 have steps [2,3]; ranks 4 have steps [2]")
}
