package pipeline

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// The heap floor is made with npuprof's GOGC, and not when the environment
// sets GOGC or GOMEMLIMIT (the floor would count against the limit).
func TestSetDefaultGCFloor(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old); heapFloor = nil })
	for _, c := range []struct {
		gogc, limit string
		floor       int
		percent     int
	}{
		{"", "", heapFloorBytes, gcPercent},
		{"", "1GiB", 0, gcPercent},
		{"80", "", 0, 100},
	} {
		heapFloor = nil
		debug.SetGCPercent(100)
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.limit)
		SetDefaultGC()
		require.Len(t, heapFloor, c.floor, "GOGC=%q GOMEMLIMIT=%q", c.gogc, c.limit)
		require.Equal(t, c.percent, debug.SetGCPercent(100), "GOGC=%q GOMEMLIMIT=%q", c.gogc, c.limit)
	}
}
