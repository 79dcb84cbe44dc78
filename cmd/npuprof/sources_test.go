package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
)

func analyzeDoc(t *testing.T, path string) *results.Document {
	t.Helper()
	code, out, errs := run("analyze", path, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	doc, err := results.Read(strings.NewReader(out), path)
	require.NoError(t, err)
	require.Len(t, doc.Ranks, 1)
	return doc
}

// Without a trace (or with one cut before its device metadata) the window
// and free time come from kernel_details.csv, which has no EVENT_WAIT
// task: the window is shorter than the timeline's. `sources` names the
// file, a warning on it says what it leaves out, and with a cut trace they
// are partial.
func TestKernelDetailsWindowIsSourced(t *testing.T) {
	out, root := testutil.GenerateTiny(t)
	full := analyzeDoc(t, root).Ranks[0]
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/trace_view.json", full.Sources.Get("device.window.time_us"))
	trace := filepath.Join(out, "trace_view.json")
	data, err := os.ReadFile(trace)
	require.NoError(t, err)

	require.NoError(t, os.Remove(trace))
	r := analyzeDoc(t, root).Ranks[0]
	win := r.Metrics["device.window.time_us"]
	require.LessOrEqual(t, win, full.Metrics["device.window.time_us"], "EVENT_WAIT tasks can only widen the timeline's window")
	require.Greater(t, win, 0.0)
	for _, m := range []string{"device.window.time_us", "overlap.free.time_us"} {
		require.Equal(t, "ASCEND_PROFILER_OUTPUT/kernel_details.csv", r.Sources.Get(m), m)
	}
	note := func(r results.RankDoc) bool {
		for _, w := range r.Warnings {
			if strings.HasSuffix(w.File, "kernel_details.csv") && strings.Contains(w.Message, "EVENT_WAIT and the other non-kernel tasks of the device timeline are not in it") {
				return true
			}
		}
		return false
	}
	require.True(t, note(r), "%v", r.Warnings)
	require.False(t, note(full))
	require.NotContains(t, r.PartialMetrics, "device.window.time_us", "a complete kernel_details.csv: sourced, not partial")

	// the trace cut before its device metadata (written after the slices)
	require.NoError(t, os.WriteFile(trace, data[:len(data)/2], 0o644))
	r = analyzeDoc(t, root).Ranks[0]
	require.True(t, r.Partial)
	require.Equal(t, win, r.Metrics["device.window.time_us"])
	require.Equal(t, []string{"device.window.time_us", "overlap.free.time_us"}, r.PartialMetrics)
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/kernel_details.csv", r.Sources.Get("overlap.free.time_us"))
	require.True(t, note(r))
}
