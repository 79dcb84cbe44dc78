package pipeline

import (
	"os"
	"runtime/debug"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
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

// SetDefaultGC sets npuprof's GOGC for the process and its heap floor,
// unless GOGC is set in the environment (GOGC and GOMEMLIMIT there always
// win; with GOMEMLIMIT set there is no floor, which would count against
// the limit).
func SetDefaultGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	if os.Getenv("GOMEMLIMIT") == "" {
		heapFloor = make([]byte, heapFloorBytes)
	}
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
	old := debug.SetGCPercent(readBackGCPercent)
	return func() { debug.SetGCPercent(old) }
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
	old := debug.SetGCPercent(afterLoadGCPercent)
	return func() { debug.SetGCPercent(old) }
}
