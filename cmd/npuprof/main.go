// Command npuprof turns Huawei Ascend NPU profiler output into measured
// findings and the exact fix. See `npuprof --help`.
package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is npuprof's default GOGC. Most of npuprof's heap is the
// long-lived model of the ranks being parsed, so the default 100 (the heap
// may grow to twice the live data before a collection) mostly buys
// garbage: measured on a 200 MB rank (docs/performance.md), GOGC=50 lowers
// peak RSS by 13% at no measurable CPU cost, and 30 costs 20% more CPU.
// GOGC and GOMEMLIMIT in the environment still win.
const gcPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
