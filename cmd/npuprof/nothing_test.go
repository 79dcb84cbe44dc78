package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// check never passes on nothing: a JSON array of one object is a trace
// with no device data, and a capture that lost its device data must not
// turn CI green. check exits 2 naming what is missing; analyze says it on
// one line instead of one per metric.
func TestCheckRefusesNothing(t *testing.T) {
	arr := filepath.Join(t.TempDir(), "arr.json")
	require.NoError(t, os.WriteFile(arr, []byte(`[{"name":"x"}]`), 0o644))
	code, out, errs := run("check", arr)
	require.Equal(t, ExitUsage, code, "%s%s", out, errs)
	require.Empty(t, out)
	require.Equal(t, "npuprof: "+arr+": nothing to check: no rank has device data (rank 0: "+arr+" has no device tasks (no \"Ascend Hardware\" or HCCL process slices))\n", errs)

	// in Chinese under --lang zh
	code, _, errs = run("check", arr, "--lang", "zh")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "npuprof: "+arr+"：没有可检查的内容：没有任何 rank 有 device 数据（")

	code, out, errs = run("analyze", arr)
	require.Equal(t, ExitOK, code, errs)
	requireText(t, out, "  nothing measured on the device: "+arr+" has no device tasks (no \"Ascend Hardware\" or HCCL process slices) (ranks 0)\n")
	require.NotContains(t, out, "kernel.compute.count:")
	require.NotContains(t, out, "PASS")

	// a profile with device data is gated as before
	_, root := testutil.GenerateTiny(t)
	code, out, errs = run("check", root)
	require.Equal(t, ExitFindings, code, "%s%s", out, errs)
	require.Contains(t, out, "at or above high: FAIL\n")
}

// A FIFO where the trace should be is refused at once (exit 2, one line),
// whether the folder or the file is given: npuprof never opens it.
func TestFIFORefused(t *testing.T) {
	out, root := testutil.GenerateTiny(t)
	trace := filepath.Join(out, "trace_view.json")
	require.NoError(t, os.Remove(trace))
	require.NoError(t, syscall.Mkfifo(trace, 0o644))
	for _, path := range []string{root, out, trace} {
		done := make(chan [3]string, 1)
		go func() {
			code, o, e := run("analyze", path)
			done <- [3]string{string(rune('0' + code)), o, e}
		}()
		select {
		case r := <-done:
			require.Equal(t, "2", r[0], path)
			require.Empty(t, r[1])
			require.Equal(t, 1, strings.Count(r[2], "\n"), r[2])
			require.Contains(t, r[2], trace+" is a named pipe (FIFO), not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatalf("analyze %s blocked on a FIFO", path)
		}
	}
}
