package rulefmt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"v0.13.0rc1", "v0.13.0rc2", -1}, {"v0.13.0rc2", "v0.13.0", -1}, {"0.14.0rc1", "v0.13.0", 1}, {"v0.13.0", "0.13.0", 0}} {
		got, err := CompareVersions(c.a, c.b)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%s vs %s", c.a, c.b)
	}
	ok, err := InRange("v0.20.0", ">=v0.13.0rc2 <v0.25.1rc1")
	require.NoError(t, err)
	require.True(t, ok)
	_, err = CompareVersions("latest", "v0.13.0")
	require.Error(t, err)
}

func TestClosest(t *testing.T) {
	require.Equal(t, []string{"hccl.allgather.time_us"}, Closest("hccl.allgathr.time_us", MetricNames(), 1))
	for _, n := range []string{"hccl.allgather.time_us", "hccl.group.ep.count", "hccl.per_layer.reducescatter.count",
		"event_wait.stream.2.time_us", "skew.moe.gmm.max_rank", "decode.batch.observed"} {
		_, ok := LookupMetric(n)
		require.True(t, ok, n)
	}
	for _, n := range []string{"hccl.allgather.time", "skew.nothing", "event_wait.stream.x.time_us", "moe.cumsum"} {
		_, ok := LookupMetric(n)
		require.False(t, ok, n)
	}
}
