package testutil

import (
	"testing"

	"github.com/npuprof/npuprof/internal/tracegen"
)

// Scenario returns tracegen's scenario of that name (tracegen.Lookup);
// tb fails when there is none.
func Scenario(tb testing.TB, name string) tracegen.Scenario {
	tb.Helper()
	s, ok := tracegen.Lookup(name)
	if !ok {
		tb.Fatalf("no tracegen scenario %q", name)
	}
	return s
}

// Generate writes s as torch_npu text into a new temporary folder and
// returns the folder with s's ground truth.
func Generate(tb testing.TB, s tracegen.Scenario) (string, *tracegen.Truth) {
	tb.Helper()
	return GenerateLayout(tb, s, tracegen.LayoutTorchNPUText)
}

// GenerateLayout is Generate in layout lay (tracegen.GenerateLayout).
func GenerateLayout(tb testing.TB, s tracegen.Scenario, lay tracegen.Layout) (string, *tracegen.Truth) {
	tb.Helper()
	dir := tb.TempDir()
	truth, err := tracegen.GenerateLayout(dir, s, lay)
	if err != nil {
		tb.Fatalf("generating scenario %s as %s: %v", s.Name, lay, err)
	}
	return dir, truth
}
