package lazyre

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The pattern compiles on the first call, once: a bad one panics then,
// not when it is declared.
func TestNew(t *testing.T) {
	re := New(`^rank(\d+)$`)
	require.Same(t, re(), re())
	require.Equal(t, []string{"rank7", "7"}, re().FindStringSubmatch("rank7"))
	bad := New(`(`)
	require.Panics(t, func() { bad() })
}
