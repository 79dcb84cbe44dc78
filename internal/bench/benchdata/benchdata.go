// Package benchdata builds the synthetic traces npuprof's benchmarks read,
// and caches them on disk so `make bench` pays for generation once.
//
// Sizes come from NPUPROF_BENCH_SIZES (comma-separated, with an MB or GB
// suffix, e.g. "50MB,200MB,1GB"); the cache folder from
// NPUPROF_BENCH_CACHE (default: .cache/bench at the module root). Without
// NPUPROF_BENCH_SIZES, benchmarks use a small in-memory trace so that
// `go test -bench .` stays quick.
package benchdata

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/npuprof/npuprof/internal/tracegen"
)

// Scenario is the scenario benchmarks size up: EP + FLASHCOMM1 + AI_CPU
// Cumsum with ProfilerStep events, the richest trace tracegen writes.
const Scenario = "ep-fc1-cumsum-steps"

// The benchmark traces put the device processes' metadata before their
// slices, as every real torch_npu trace_view.json does
// (tracegen.Scenario.DeviceMetaFirst); CacheTag marks their cache folders.
const CacheTag = "metafirst"

// Size is one benchmark size.
type Size struct {
	Name  string // "50MB"
	Bytes int64
}

// Sizes returns the sizes named by NPUPROF_BENCH_SIZES, or nil.
func Sizes() ([]Size, error) {
	v := os.Getenv("NPUPROF_BENCH_SIZES")
	if v == "" {
		return nil, nil
	}
	var out []Size
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := ParseSize(f)
		if err != nil {
			return nil, err
		}
		out = append(out, Size{Name: f, Bytes: n})
	}
	return out, nil
}

// ParseSize reads "50MB", "1GB", "300KB" or a plain byte count (decimal
// units: 1MB = 1e6 bytes, like the file sizes `ls` prints).
func ParseSize(s string) (int64, error) {
	u := strings.ToUpper(s)
	mul := int64(1)
	for _, x := range []struct {
		suf string
		m   int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}} {
		if strings.HasSuffix(u, x.suf) {
			u, mul = strings.TrimSuffix(u, x.suf), x.m
			break
		}
	}
	n, err := strconv.ParseFloat(u, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q: expected e.g. 50MB, 1GB", s)
	}
	return int64(n * float64(mul)), nil
}

// CacheDir is where generated traces are kept.
func CacheDir() string {
	if d := os.Getenv("NPUPROF_BENCH_CACHE"); d != "" {
		return d
	}
	// the module root: walk up to go.mod
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".cache", "bench")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, ".cache", "bench")
		}
	}
}

var mu sync.Mutex

// RankDir returns a single-rank *_ascend_pt folder of about size bytes of
// trace_view.json (plus its CSVs and metadata), generating it on first use.
// The folder is named after the scenario and size, so a cached folder is
// reused across runs.
func RankDir(tb testing.TB, sz Size) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	dir := filepath.Join(CacheDir(), fmt.Sprintf("%s-%s-%s", Scenario, CacheTag, sz.Name))
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err != nil {
		s, ok := tracegen.Lookup(Scenario)
		if !ok {
			tb.Fatalf("no scenario %s", Scenario)
		}
		s.DeviceMetaFirst = true
		s, err := tracegen.SizedScenario(s, sz.Bytes)
		if err != nil {
			tb.Fatal(err)
		}
		os.RemoveAll(dir)
		if _, err := tracegen.GenerateRank(dir, s, 0); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	m, err := filepath.Glob(filepath.Join(dir, "*_ascend_pt"))
	if err != nil || len(m) != 1 {
		tb.Fatalf("%s: expected one *_ascend_pt folder, found %v", dir, m)
	}
	return m[0]
}

// TraceFile is the trace_view.json inside RankDir.
func TraceFile(tb testing.TB, sz Size) string {
	return filepath.Join(RankDir(tb, sz), tracegen.OutputDir, "trace_view.json")
}

var (
	smallOnce sync.Once
	small     []byte
	smallErr  error
)

// SmallTrace is a ~4 MB trace_view.json held in memory, for quick
// benchmarks when no sizes are requested.
func SmallTrace(tb testing.TB) []byte {
	tb.Helper()
	smallOnce.Do(func() {
		s, _ := tracegen.Lookup(Scenario)
		s.DeviceMetaFirst = true
		s, smallErr = tracegen.SizedScenario(s, 4e6)
		if smallErr != nil {
			return
		}
		var b bytes.Buffer
		_, smallErr = tracegen.WriteTrace(&b, s, 0)
		small = b.Bytes()
	})
	if smallErr != nil {
		tb.Fatal(smallErr)
	}
	return small
}

// CPUTime is the process's user+system CPU time. Benchmarks report MB/s of
// CPU time next to wall-clock MB/s: on a machine shared with other builds
// the wall clock measures the neighbours too.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU adds cpu-MB/s (bytes per op over CPU seconds per op) and
// cpu-ms/op to b, given the CPU time at the start of the timed loop.
func ReportCPU(b *testing.B, bytes int64, cpu0 time.Duration) {
	cpu := CPUTime() - cpu0
	if cpu <= 0 || b.N == 0 {
		return
	}
	per := cpu.Seconds() / float64(b.N)
	b.ReportMetric(float64(bytes)/per/1e6, "cpu-MB/s")
	b.ReportMetric(per*1e3, "cpu-ms/op")
}
