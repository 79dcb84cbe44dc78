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

// SetDefaultGC sets npuprof's GOGC for the process, unless GOGC is set in
// the environment (GOGC and GOMEMLIMIT there always win).
func SetDefaultGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

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
