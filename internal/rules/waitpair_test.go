package rules

import (
	"fmt"
	"testing"

	"github.com/npuprof/npuprof/internal/tracegen"

	"github.com/stretchr/testify/require"
)

// event-wait-skew names what the compute stream waits for, from the wait
// pairing, and claims the ledger's waits with the stream awaited: on the
// A3 system, the MatMulV2 kernels of side stream 3.
func TestEventWaitSkewNamesTheStream(t *testing.T) {
	f := finding(evaluate(t, builtin(t), analyzed(t, "a3-tp4dp4-rc1"), nil), "event-wait-skew")
	require.NotNil(t, f)
	require.Regexp(t, `it waits for MatMulV2 kernels on side stream 3, [0-9.]+% of its waits`, f.Title)
	require.NotEmpty(t, f.LedgerEntries)
	top := f.LedgerEntries[0]
	require.Equal(t, "stream_wait", top.Cause)
	require.NotNil(t, top.Stream)
	require.Equal(t, 3, *top.Stream)
	require.Equal(t, "stream 3 MatMulV2", top.Entry)
	require.Len(t, top.StepsUs, 4)
}

// On the A3 system event-wait-skew fires on every seed (its share is the
// ledger's per-step waits of the critical rank, far from its threshold),
// naming the stream it waits for; host-bound-free, on a graph-captured
// decode, never.
func TestA3EventWaitSkewEverySeed(t *testing.T) {
	base, ok := tracegen.Lookup("a3-tp4dp4-rc1")
	require.True(t, ok)
	for _, seed := range []int64{1, 2, 3, 5, 8} {
		sc := base
		sc.Seed = seed
		sc.Name = fmt.Sprintf("%s-seed%d", base.Name, seed)
		rep := evaluate(t, builtin(t), analyzedScenario(t, sc), nil)
		f := finding(rep, "event-wait-skew")
		require.NotNil(t, f, "seed %d: %+v", seed, status(rep, "event-wait-skew"))
		require.NotEmpty(t, f.LedgerEntries, "seed %d", seed)
		require.Equal(t, "stream_wait", f.LedgerEntries[0].Cause, "seed %d", seed)
		require.NotNil(t, f.LedgerEntries[0].Stream, "seed %d: names the stream awaited", seed)
		require.Nil(t, finding(rep, "host-bound-free"), "seed %d", seed)
	}
}
