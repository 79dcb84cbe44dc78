// Command npuprof turns Huawei Ascend NPU profiler output into measured
// findings and the exact fix. See `npuprof --help`.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/pipeline"
)

func main() {
	pipeline.SetDefaultGC()
	stop := startProfiles(os.Getenv("NPUPROF_CPUPROFILE"), os.Getenv("NPUPROF_MEMPROFILE"), os.Stderr)
	io := newStreams(os.Stdin, os.Stdout, os.Stderr)
	io.asciiUnits = !utf8Locale(os.Getenv) // only the process's own locale; tests run Main
	io.lang = lang.FromLocale(os.Getenv)
	io.width, io.errWidth = termWidth(os.Getenv, os.Stdout), termWidth(func(string) string { return "" }, os.Stderr)
	io.colour = useColour(os.Getenv, os.Stdout)
	code := runMain(io, os.Args[1:])
	stop()
	os.Exit(code)
}

// startProfiles writes a CPU profile of the whole run to cpuFile and a heap
// profile at its end to memFile (either may be empty), for `go tool pprof`:
// how docs/performance.md's profiles are taken. It returns the function
// that finishes them.
//
// Without memFile no allocation is sampled for a heap profile: the runtime
// records a stack trace per sampled allocation (one per 512 KiB
// allocated), ~50 k instructions each, for a profile nothing writes.
func startProfiles(cpuFile, memFile string, stderr io.Writer) func() {
	if memFile == "" {
		runtime.MemProfileRate = 0
	}
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

// utf8Locale reports whether the character set of the locale (LC_ALL,
// else LC_CTYPE, else LANG, as POSIX orders them) is UTF-8. None set is
// the C locale: not UTF-8.
func utf8Locale(getenv func(string) string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}
