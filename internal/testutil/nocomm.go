package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/npuprof/npuprof/internal/tracegen"
)

// hcclProcessName is how tracegen's trace_view.json names the HCCL
// process (its metadata comes after the device slices unless
// Scenario.DeviceMetaFirst).
var hcclProcessName = []byte(`"name": "process_name", "pid": `)

// CutCollectives turns one generated rank (root: its *_ascend_pt folder)
// into a capture without collective data, the way a real one loses it: its
// trace_view.json is cut just before the HCCL process metadata (a writer
// killed, a disk full), so the device tasks and ProfilerStep#N survive but
// the HCCL big ops cannot be identified, and its kernel_details.csv, whose
// HCCL rows would stand in for them, is removed. It returns the byte offset
// of the cut. The scenario must write the device metadata after the
// slices (DeviceMetaFirst false, tracegen's default).
func CutCollectives(tb testing.TB, root string) int {
	tb.Helper()
	out := filepath.Join(root, tracegen.OutputDir)
	trace := filepath.Join(out, "trace_view.json")
	data, err := os.ReadFile(trace)
	if err != nil {
		tb.Fatalf("CutCollectives: %v", err)
	}
	at := -1
	for off := 0; ; {
		i := bytes.Index(data[off:], hcclProcessName)
		if i < 0 {
			break
		}
		i += off
		// the event's args follow: {"name": "HCCL"}
		end := bytes.IndexByte(data[i:], '}')
		if end > 0 && bytes.Contains(data[i:i+end], []byte(`"name": "HCCL"`)) {
			// back to the event's opening brace
			at = bytes.LastIndexByte(data[:i], '{')
			break
		}
		off = i + len(hcclProcessName)
	}
	if at <= 0 {
		tb.Fatalf("CutCollectives: %s has no HCCL process_name metadata event", trace)
	}
	if err := os.WriteFile(trace, data[:at], 0o644); err != nil {
		tb.Fatalf("CutCollectives: %v", err)
	}
	if err := os.Remove(filepath.Join(out, "kernel_details.csv")); err != nil {
		tb.Fatalf("CutCollectives: %v", err)
	}
	return at
}

// NoCommCapture generates clean-steps (ProfilerStep#N) with the given
// number of ranks, 2 MoE layers and 3 steps under a fresh temporary folder,
// and makes its last rank lose its collective data (CutCollectives). It
// returns the folder, the generator's truth (the last rank's collectives
// in it are those the capture lost) and the byte offset of the cut.
func NoCommCapture(tb testing.TB, ranks int) (dir string, truth *tracegen.Truth, cut int) {
	tb.Helper()
	sc, _ := tracegen.Lookup("clean-steps")
	sc.Ranks, sc.Layers, sc.Steps = ranks, 2, 3
	dir = tb.TempDir()
	truth, err := tracegen.Generate(dir, sc)
	if err != nil {
		tb.Fatalf("tracegen: %v", err)
	}
	cut = CutCollectives(tb, filepath.Join(dir, truth.Ranks[ranks-1].Dir))
	return dir, truth, cut
}
