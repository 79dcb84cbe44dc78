package summary

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A profiler_metadata.json read again (another rank's copy) gives the same
// metadata as its first decode, and each caller its own maps and groups.
func TestMetadataRepeatedDecodedOnceCopiedToEach(t *testing.T) {
	file := func(groupRank string) string {
		return `{"ENV_VARIABLES": {"HCCL_BUFFSIZE": "512", "N": 3}, "parallel_group_info": {"c1": {"group_name": "tp", "group_rank": ` +
			groupRank + `, "global_ranks": [0, 1]}}, "user": {"x": 1}}`
	}
	a, err := ReadProfilerMetadata(strings.NewReader(file("0")), "a")
	require.NoError(t, err)
	b, err := ReadProfilerMetadata(strings.NewReader(file("0")), "b")
	require.NoError(t, err)
	require.Equal(t, a, b)
	c, err := ReadProfilerMetadata(strings.NewReader(file("1")), "c")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"HCCL_BUFFSIZE": "512", "N": "3"}, c.Env)
	require.Equal(t, 1, c.Groups[0].Rank)
	a.Env["N"], a.Other["user"], a.Groups[0].GlobalRanks[0] = "edited", "edited", 9
	require.Equal(t, "3", b.Env["N"])
	require.Equal(t, `{"x": 1}`, b.Other["user"])
	require.Equal(t, []int{0, 1}, b.Groups[0].GlobalRanks)
	d, err := ReadProfilerMetadata(strings.NewReader(file("0")), "d")
	require.NoError(t, err)
	require.Equal(t, "3", d.Env["N"])
	require.Equal(t, 0, d.Groups[0].GlobalRanks[0])
	require.Equal(t, "3", c.Env["N"])
}
