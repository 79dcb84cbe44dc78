package summary

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every rank of a group lists the same global ranks: two ranks' metadata
// share one copy of a long list (a cluster kept one per rank, N² ints for
// its world group), and a short list is kept as read.
func TestGroupRankListsShared(t *testing.T) {
	meta := func(rank int, n int) string {
		ranks := make([]string, n)
		for i := range ranks {
			ranks[i] = fmt.Sprint(i)
		}
		return fmt.Sprintf(`{"parallel_group_info": {"group_world": {"group_name": "dp", "group_rank": %d, "global_ranks": [%s]}}}`, rank, strings.Join(ranks, ", "))
	}
	a, err := ReadProfilerMetadata(strings.NewReader(meta(0, 64)), "a.json")
	require.NoError(t, err)
	b, err := ReadProfilerMetadata(strings.NewReader(meta(1, 64)), "b.json")
	require.NoError(t, err)
	require.Equal(t, 0, a.Groups[0].Rank)
	require.Equal(t, 1, b.Groups[0].Rank)
	require.Len(t, b.Groups[0].GlobalRanks, 64)
	require.Equal(t, 63, b.Groups[0].GlobalRanks[63])
	require.Same(t, &a.Groups[0].GlobalRanks[0], &b.Groups[0].GlobalRanks[0], "one copy of the list")
	c, err := ReadProfilerMetadata(strings.NewReader(meta(0, 8)), "c.json")
	require.NoError(t, err)
	d, err := ReadProfilerMetadata(strings.NewReader(meta(1, 8)), "d.json")
	require.NoError(t, err)
	require.Equal(t, c.Groups[0].GlobalRanks, d.Groups[0].GlobalRanks)
	require.NotSame(t, &c.Groups[0].GlobalRanks[0], &d.Groups[0].GlobalRanks[0], "short lists are not looked up")
}
