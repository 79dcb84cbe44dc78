// Package testutil holds helpers shared by npuprof's tests.
package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// SamplesDir returns the folder of real profiler samples: $NPUPROF_SAMPLES,
// else ../shared/formats/samples next to the repository. The test is
// skipped, with a message, only when that folder is absent.
func SamplesDir(t testing.TB) string {
	t.Helper()
	d := os.Getenv("NPUPROF_SAMPLES")
	if d == "" {
		_, file, _, _ := runtime.Caller(0)
		d = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "formats", "samples")
	}
	if _, err := os.Stat(d); err != nil {
		Skip(t, "the tests on real profiler samples", fmt.Sprintf("not found at %s (set NPUPROF_SAMPLES to their folder): %v", d, err))
	}
	return d
}

// Sample returns a path under the samples folder.
func Sample(t testing.TB, rel string) string {
	return filepath.Join(SamplesDir(t), filepath.FromSlash(rel))
}
