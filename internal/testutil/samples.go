// Package testutil holds helpers shared by npuprof's tests.
package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// SamplesDir returns the folder of real profiler samples (FindSamples).
// The test is skipped, saying where it looked, only when that folder is
// absent.
func SamplesDir(t testing.TB) string {
	t.Helper()
	d, why := FindSamples()
	if d == "" {
		Skip(t, "the tests on real profiler samples", why)
	}
	return d
}

// FindSamples returns the folder of real profiler samples:
// $NPUPROF_SAMPLES, else samples/ of the shared formats folder beside the
// repository (SharedFile: from a clone or a worktree); "" and why (one
// line, where it looked) when it is absent.
func FindSamples() (dir, why string) {
	d := os.Getenv("NPUPROF_SAMPLES")
	if d == "" {
		p, looked := SharedFile("samples")
		if p == "" {
			return "", "not found: " + looked + " (set NPUPROF_SAMPLES to their folder)"
		}
		return p, ""
	}
	if _, err := os.Stat(d); err != nil {
		return "", fmt.Sprintf("not found at %s (set NPUPROF_SAMPLES to their folder): %v", d, err)
	}
	return d, ""
}

// Sample returns a path under the samples folder.
func Sample(t testing.TB, rel string) string {
	return filepath.Join(SamplesDir(t), filepath.FromSlash(rel))
}
