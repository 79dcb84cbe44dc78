package pipeline

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
)

// TuneGCFor lowers GOGC only for an npuprof Parquet export, and restores
// the previous setting.
func TestTuneGCForReadBack(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: TuneGCFor leaves the collector alone")
	}
	prev := debug.SetGCPercent(77)
	defer debug.SetGCPercent(prev)
	restore := TuneGCFor(t.TempDir()) // not an export
	require.Equal(t, 77, debug.SetGCPercent(77))
	restore()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, parquetio.ManifestDir), 0o755))
	restore = TuneGCFor(dir)
	require.Equal(t, readBackGCPercent, debug.SetGCPercent(readBackGCPercent))
	restore()
	require.Equal(t, 77, debug.SetGCPercent(77))
}

// TuneGCAfterLoad lowers GOGC for what follows the load and restores the
// previous setting.
func TestTuneGCAfterLoad(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: TuneGCAfterLoad leaves the collector alone")
	}
	prev := debug.SetGCPercent(77)
	defer debug.SetGCPercent(prev)
	restore := TuneGCAfterLoad()
	require.Equal(t, afterLoadGCPercent, debug.SetGCPercent(afterLoadGCPercent))
	restore()
	require.Equal(t, 77, debug.SetGCPercent(77))
}

// gcPercentFor keeps the policy's GOGC while its headroom is at most
// bigHeapHeadroom, gives bigHeapHeadroom over a larger live heap, and
// never goes under minGCPercent.
func TestGCPercentFor(t *testing.T) {
	h := int64(bigHeapHeadroom)
	for _, c := range []struct {
		live int64
		base int
		want int
	}{
		{0, gcPercent, gcPercent},
		{h, gcPercent, gcPercent},
		{2 * h, gcPercent, gcPercent},
		{4 * h, gcPercent, 25},
		{4 * h, afterLoadGCPercent, afterLoadGCPercent},
		{5 * h, afterLoadGCPercent, 20},
		{1000 * h, gcPercent, minGCPercent},
		{1000 * h, 5, 5},
	} {
		require.Equal(t, c.want, gcPercentFor(c.live, c.base), "live %d MiB, base %d", c.live>>20, c.base)
		// the goal's headroom is never more than the larger of the cap and the floor's share
		if p := gcPercentFor(c.live, c.base); p > minGCPercent && p < c.base {
			require.LessOrEqual(t, c.live*int64(p)/100, h)
		}
	}
}

// With the cap armed, a collection that leaves a large live heap lowers
// GOGC under the policy's base, and the base comes back once that heap
// is garbage.
func TestHeadroomCap(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the policy leaves the collector alone")
	}
	prev := debug.SetGCPercent(gcPercent)
	defer debug.SetGCPercent(prev)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer gcBase.Store(gcBase.Load())
	gcBase.Store(gcPercent)
	armHeadroomCap()
	// await collects until GOGC satisfies ok (the cleanup that sets it
	// runs after the collection, on its own goroutine)
	await := func(ok func(int) bool) int {
		t.Helper()
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		for range 200 {
			runtime.GC()
			time.Sleep(2 * time.Millisecond)
			metrics.Read(s)
			if p := int(s[0].Value.Uint64()); ok(p) {
				return p
			}
		}
		t.Fatalf("GOGC %d after 200 collections", s[0].Value.Uint64())
		return 0
	}
	big := make([]byte, 8*bigHeapHeadroom)
	for i := range big {
		big[i] = 1
	}
	p := await(func(p int) bool { return p < gcPercent })
	require.GreaterOrEqual(t, p, minGCPercent)
	// a limit just past the goal while the headroom is capped
	// (SetMemoryLimit(-1) reads it)
	if ownLimit {
		limit := debug.SetMemoryLimit(-1)
		require.Greater(t, limit, int64(len(big)))
		require.Less(t, limit, int64(len(big))+2*bigHeapHeadroom+limitMargin+64<<20)
	}
	runtime.KeepAlive(big)
	big = nil
	await(func(p int) bool { return p == gcPercent })
	if ownLimit {
		require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "no limit over a small heap")
	}
	// a new base is capped from the last live heap, and restored whole
	require.Equal(t, gcPercent, setGCBase(afterLoadGCPercent))
	require.Equal(t, afterLoadGCPercent, setGCBase(gcPercent))
}

// The trace reader's collection (collect) applies the policy for the
// live heap it leaves when it returns, without the cleanup (not armed
// here).
func TestCollectAppliesPolicy(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the policy leaves the collector alone")
	}
	prev := debug.SetGCPercent(gcPercent)
	defer debug.SetGCPercent(prev)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer gcBase.Store(gcBase.Load())
	gcBase.Store(gcPercent)
	big := make([]byte, 8*bigHeapHeadroom)
	for i := range big {
		big[i] = 1
	}
	collect()
	p := debug.SetGCPercent(gcPercent)
	require.Less(t, p, gcPercent, "GOGC over a large live heap")
	require.GreaterOrEqual(t, p, minGCPercent)
	runtime.KeepAlive(big)
	big = nil
	collect()
	require.Equal(t, gcPercent, debug.SetGCPercent(gcPercent), "GOGC over a small live heap")
}
