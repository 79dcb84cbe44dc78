package pipeline

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/traceview"
)

// The heap floor is made with npuprof's GOGC, and not when the environment
// sets GOGC or GOMEMLIMIT (the floor would count against the limit); the
// trace reader's collections are set in every case.
func TestSetDefaultGCFloor(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old); heapFloor = nil; traceview.Collect = nil })
	for _, c := range []struct {
		gogc, limit string
		floor       int
		percent     int
	}{
		{"", "", heapFloorBytes, gcPercent},
		{"", "1GiB", 0, gcPercent},
		{"80", "", 0, 100},
	} {
		heapFloor, traceview.Collect = nil, nil
		debug.SetGCPercent(100)
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.limit)
		SetDefaultGC()
		require.Len(t, heapFloor, c.floor, "GOGC=%q GOMEMLIMIT=%q", c.gogc, c.limit)
		require.Equal(t, c.percent, debug.SetGCPercent(100), "GOGC=%q GOMEMLIMIT=%q", c.gogc, c.limit)
		require.NotNil(t, traceview.Collect, "GOGC=%q GOMEMLIMIT=%q", c.gogc, c.limit)
	}
}
