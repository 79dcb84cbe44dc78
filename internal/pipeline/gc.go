package pipeline

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/parser/traceview"
)

// gcPercent is npuprof's default GOGC. Most of npuprof's heap is the
// long-lived model of the ranks being parsed, so the default 100 (the heap
// may grow to twice the live data before a collection) mostly buys
// garbage: measured on a 200 MB rank (docs/performance.md), GOGC=50 lowers
// peak RSS by 13% at no measurable CPU cost, and 30 costs 20% more CPU.
const gcPercent = 50

// readBackGCPercent is the GOGC of parsing and analyzing an npuprof Parquet
// export (`npuprof analyze OUTDIR`). Reading Parquet back makes almost no
// garbage (the model's arrays are filled in place), so its heap is the
// model plus the passes' results and the collector's headroom over them;
// a lower GOGC buys memory there for little CPU (docs/performance.md,
// "The Parquet read-back"). The JSON path keeps gcPercent: it makes
// garbage at every event.
const readBackGCPercent = 35

// SetDefaultGC sets the trace reader's collections around a large rank's
// arrays (traceview.Collect, whatever the environment sets), and
// npuprof's GOGC for the process and its heap floor, unless GOGC is set
// in the environment (GOGC and GOMEMLIMIT there always win; with
// GOMEMLIMIT set there is no floor, which would count against the
// limit).
func SetDefaultGC() {
	traceview.Collect = collect
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	if os.Getenv("GOMEMLIMIT") == "" {
		heapFloor = make([]byte, heapFloorBytes)
	}
	gcBase.Store(gcPercent)
	armHeadroomCap()
}

// bigHeapHeadroom is the most the heap may grow past the live heap
// before a collection once the live heap is large: GOGC is lowered
// (gcPercentFor) so that the goal is at most this much over it. A large
// rank's model is mostly arrays without pointers (the tasks, the ops),
// which the collector does not scan, so a cycle over it costs little;
// at GOGC=50 the headroom over a 100 MB model was 50 MB of peak RSS;
// 16 MiB rather than 24: 7 MiB less at 1 GB for 1.5% more instructions
// (docs/performance.md, "GC").
const bigHeapHeadroom = 16 << 20

// minGCPercent bounds that lowering, so a heap of many GB still gets a
// tenth of itself as headroom: no run of back-to-back collections.
const minGCPercent = 10

// gcBase is the GOGC the policy asks for (gcPercent, readBackGCPercent,
// afterLoadGCPercent), before the headroom cap; 0 when the cap is not
// armed (GOGC set in the environment, or SetDefaultGC not called).
var gcBase atomic.Int32

// gcPercentFor is the GOGC for a live heap of live bytes under the
// policy's base: base while base's headroom is at most bigHeapHeadroom,
// else the percent that gives bigHeapHeadroom, never under minGCPercent.
func gcPercentFor(live int64, base int) int {
	if live <= 0 || live*int64(base) <= 100*bigHeapHeadroom {
		return base
	}
	return max(int(100*bigHeapHeadroom/live), min(base, minGCPercent))
}

// setGCBase makes base the policy's GOGC and returns the previous base;
// with the cap armed, the collector gets base capped for the last live
// heap.
func setGCBase(base int) (old int) {
	if gcBase.Load() == 0 {
		return debug.SetGCPercent(base)
	}
	old = int(gcBase.Swap(int32(base)))
	applyGC(base)
	return old
}

// limitMargin is what the memory limit allows past the heap goal while
// the headroom is capped: the collector's metadata, the goroutines'
// stacks and the free pages not yet returned. Every MiB of it was a MiB
// of a 1 GB rank's peak RSS (12 MiB: 130 MiB; 4 MiB: 125 MiB, +2% CPU).
const limitMargin = 4 << 20

// ownLimit: the memory limit is npuprof's to set (GOMEMLIMIT is not set
// in the environment).
var ownLimit = os.Getenv("GOMEMLIMIT") == ""

// applyGC sets GOGC to gcPercentFor the last live heap under base and,
// while that caps the headroom, a memory limit just past the heap goal
// (none otherwise). The limit is what returns freed pages to the system:
// a large rank's heap is fragmented (its logs are freed a 64 KiB chunk
// at a time, its arrays are allocated whole), and without it the
// runtime kept ~20 MB of free pages past the goal at 1 GB. It follows
// the live heap after every collection, always a goal's headroom above
// it, so it never holds the collector under the live heap.
func applyGC(base int) {
	live := liveHeap()
	pct := gcPercentFor(live, base)
	debug.SetGCPercent(pct)
	if !ownLimit {
		return
	}
	if pct < base {
		debug.SetMemoryLimit(live + live*int64(pct)/100 + limitMargin)
	} else {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// collect is the trace reader's collection (traceview.Collect): a cycle,
// then the policy's GOGC and limit for the live heap it left, at once.
// The cleanup that applies them after every cycle runs a little later,
// and misses a cycle that starts while it re-arms (its sentinel is then
// allocated marked): at 1 GB the goal stayed the one of the cycle before
// (89 MB for 70 MB live, where the collection left 57), and the tasks'
// loop peaked 10 MB higher.
func collect() {
	runtime.GC()
	if base := gcBase.Load(); base > 0 {
		applyGC(int(base))
	}
}

// liveHeap is the heap the last collection marked live, bytes.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// gcSentinel is the object armHeadroomCap watches: 24 bytes with a
// pointer, so it is never batched with others in a tiny block (whose
// other objects would keep it, and the cap, waiting for a later
// collection).
type gcSentinel struct {
	_ *int
	_ [16]byte
}

// armHeadroomCap sets GOGC (and the memory limit, applyGC) after every
// collection for the live heap it left: a cleanup on an object nothing
// references runs once the collection that found it unreachable is done,
// and arms the next.
func armHeadroomCap() {
	p := new(gcSentinel)
	runtime.AddCleanup(p, func(int) {
		if base := gcBase.Load(); base > 0 {
			applyGC(int(base))
		}
		armHeadroomCap()
	}, 0)
}

// heapFloorBytes is the heap floor: an allocation that is never written,
// so the kernel never backs it with memory, but that the collector counts
// as live. The runtime's smallest heap goal is 4 MiB × GOGC/100 (2 MiB at
// gcPercent, 1 MiB at afterLoadGCPercent), so a run whose live heap is a
// few MB (ranks of many small events read two at a time) was collected
// every 1–2 MB allocated: 59 cycles for 94 layers × 8 ranks. With the
// floor the goal is (live + 8 MiB) × (1 + GOGC/100): 20 cycles there,
// 13% less CPU (twelve paired runs), for at most 8 MiB × GOGC/100 more
// garbage before a collection (docs/performance.md, "GC").
const heapFloorBytes = 8 << 20

// heapFloor holds the floor for the life of the process.
var heapFloor []byte

// TuneGCFor lowers GOGC to readBackGCPercent while path, an npuprof Parquet
// export, is loaded and analyzed, unless GOGC is set in the environment.
// It returns the function that restores the previous setting.
func TuneGCFor(path string) (restore func()) {
	if os.Getenv("GOGC") != "" || !parquetio.IsExport(path) {
		return func() {}
	}
	old := setGCBase(readBackGCPercent)
	return func() { setGCBase(old) }
}

// afterLoadGCPercent is GOGC once the ranks are loaded and analyzed: what
// follows (the rules, the plan, the document) keeps the ranks' results and
// makes short-lived copies (the plan's transformed replay timelines), so
// the heap goal over the results is headroom for those copies alone; it
// costs little CPU, the ranks' reading being done (docs/performance.md,
// "GC").
const afterLoadGCPercent = 25

// TuneGCAfterLoad lowers GOGC to afterLoadGCPercent for what follows the
// load, unless GOGC is set in the environment. It returns the function
// that restores the previous setting.
func TuneGCAfterLoad() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := setGCBase(afterLoadGCPercent)
	return func() { setGCBase(old) }
}
