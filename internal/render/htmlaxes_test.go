package render

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTimeUnit(t *testing.T) {
	for _, c := range []struct {
		max        float64
		unit, form string
	}{{0, "µs", "fn:us"}, {9999, "µs", "fn:us"}, {1e4, "ms", "fn:ms"}, {9.9e6, "ms", "fn:ms"}, {1e7, "s", "fn:s"}} {
		u, f := timeUnit(c.max)
		require.Equal(t, [2]string{c.unit, c.form}, [2]string{u, f}, "max %g µs", c.max)
	}
}

// stackMax adds a stack's bars and takes unstacked series alone; gaps
// ("-", null) and negative parts add nothing.
func TestStackMax(t *testing.T) {
	series := []map[string]any{
		{"stack": "w", "data": []any{map[string]any{"value": 3.0}, 5.0, "-"}},
		{"stack": "w", "data": []any{4.0, map[string]any{"value": "-"}, nil}},
		{"data": []any{6.5, -20.0}},
	}
	require.Equal(t, 7.0, stackMax(series))
	require.Equal(t, 6.5, stackMax(series[2:]))
	require.Zero(t, stackMax(nil))
}

// A merged box's tooltip names what it is made of, largest first.
func TestTimelineComposition(t *testing.T) {
	require.Equal(t, ": compute 3.20ms (97.3%), EVENT_WAIT 89.0µs (2.7%)", composition([]int64{3_200_000, 0, 0, 89_000, 0, 0, 0}))
	require.Equal(t, "", composition(nil), "a document written before the kinds")
}
