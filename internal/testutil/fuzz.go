package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/npuprof/npuprof/internal/tracegen"
)

// RepoRoot returns the repository's root folder (where go.mod is).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// SeedLimit caps one seed: bigger files are added as their first SeedLimit
// bytes (a truncated input is a good seed too) so fuzzing stays fast.
const SeedLimit = 16 << 10

// AddSeedFiles adds every file matching the glob patterns (relative to the
// repository root, e.g. "testdata/broken/*/*.csv") to the fuzz corpus, cut
// to SeedLimit bytes. It returns how many seeds were added; patterns that
// match nothing are fine (a corpus folder may not exist yet).
func AddSeedFiles(f *testing.F, patterns ...string) int {
	f.Helper()
	root := RepoRoot()
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			f.Fatalf("bad seed pattern %q: %v", p, err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	n := 0
	for _, file := range files {
		st, err := os.Stat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatalf("reading seed %s: %v", file, err)
		}
		if len(b) > SeedLimit {
			b = b[:SeedLimit]
		}
		f.Add(b)
		n++
	}
	return n
}

// Tiny is a small generated capture used to seed fuzz targets: 2 ranks,
// one MoE layer, two ProfilerSteps, every pitfall of the generator on.
func Tiny() tracegen.Scenario {
	s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
	s.Name, s.Ranks, s.Layers, s.Steps = "tiny", 2, 1, 2
	return s
}

// GenerateTiny writes Tiny() under a fresh temporary folder and returns
// the folder of rank 0's ASCEND_PROFILER_OUTPUT and of its *_ascend_pt root.
func GenerateTiny(tb testing.TB) (output, root string) {
	tb.Helper()
	dir := tb.TempDir()
	truth, err := tracegen.Generate(dir, Tiny())
	if err != nil {
		tb.Fatalf("tracegen: %v", err)
	}
	root = filepath.Join(dir, truth.Ranks[0].Dir)
	return filepath.Join(root, tracegen.OutputDir), root
}

// AddGeneratedSeeds adds rank 0's files of GenerateTiny whose names match
// the glob pattern (e.g. "kernel_details.csv", "profiler_*.json"), looked
// for in both the rank root and its ASCEND_PROFILER_OUTPUT.
func AddGeneratedSeeds(f *testing.F, pattern string) int {
	f.Helper()
	out, root := GenerateTiny(f)
	n := 0
	for _, d := range []string{root, out} {
		m, _ := filepath.Glob(filepath.Join(d, pattern))
		sort.Strings(m)
		for _, file := range m {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) > SeedLimit {
				b = b[:SeedLimit]
			}
			f.Add(b)
			n++
		}
	}
	return n
}

// HangLimit is how long one fuzz input may take before Watchdog calls it
// a hang.
const HangLimit = 10 * time.Second

// Watchdog turns a hang into a crash the fuzz engine records: unless stop
// is called within HangLimit, it panics on another goroutine, which kills
// the fuzz worker, so `go test -fuzz` saves the input under
// testdata/fuzz/<Target>/ (Go's fuzzer otherwise waits on a stuck input
// until -fuzztime ends and reports PASS). Use: defer testutil.Watchdog(data)().
func Watchdog(data []byte) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(HangLimit):
			panic(fmt.Sprintf("hang: one input took over %v (%d bytes, starting %q)", HangLimit, len(data), data[:min(len(data), 200)]))
		}
	}()
	return func() { close(done) }
}
