// Command npuprof turns Huawei Ascend NPU profiler output into measured
// findings and the exact fix. See `npuprof --help`.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/npuprof/npuprof/parser/parquetio"
)

// gcPercent is npuprof's default GOGC. Most of npuprof's heap is the
// long-lived model of the ranks being parsed, so the default 100 (the heap
// may grow to twice the live data before a collection) mostly buys
// garbage: measured on a 200 MB rank (docs/performance.md), GOGC=50 lowers
// peak RSS by 13% at no measurable CPU cost, and 30 costs 20% more CPU.
// GOGC and GOMEMLIMIT in the environment still win.
const gcPercent = 50

// readBackGCPercent is the GOGC of parsing and analyzing an npuprof Parquet
// export (`npuprof analyze OUTDIR`). Reading Parquet back makes almost no
// garbage (the model's arrays are filled in place), so its heap is the
// model plus the passes' results and the collector's headroom over them;
// a lower GOGC buys memory there for little CPU: at 200 MB, 35 lowers peak
// RSS from 50.0 to 47.7 MiB (medians) for +7% instructions (callgrind:
// 810 M -> 868 M, about 20 ms; docs/performance.md, lesson 20).
// The JSON path keeps gcPercent: it makes garbage at every event.
const readBackGCPercent = 35

// tuneGCFor lowers GOGC to readBackGCPercent while path, an npuprof Parquet
// export, is loaded and analyzed, unless GOGC is set in the environment.
// It returns the function that restores the previous setting.
func tuneGCFor(path string) (restore func()) {
	if os.Getenv("GOGC") != "" || !parquetio.IsExport(path) {
		return func() {}
	}
	old := debug.SetGCPercent(readBackGCPercent)
	return func() { debug.SetGCPercent(old) }
}

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	stop := startProfiles(os.Getenv("NPUPROF_CPUPROFILE"), os.Getenv("NPUPROF_MEMPROFILE"), os.Stderr)
	code := Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// startProfiles writes a CPU profile of the whole run to cpuFile and a heap
// profile at its end to memFile (either may be empty), for `go tool pprof`:
// how docs/performance.md's profiles are taken. It returns the function
// that finishes them.
func startProfiles(cpuFile, memFile string, stderr io.Writer) func() {
	var cpu *os.File
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "npuprof: NPUPROF_CPUPROFILE: %v\n", err)
		} else {
			cpu = f
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if memFile != "" {
			f, err := os.Create(memFile)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(stderr, "npuprof: NPUPROF_MEMPROFILE: %v\n", err)
			}
		}
	}
}
