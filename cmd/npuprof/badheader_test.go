package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A kernel_details.csv whose header npuprof does not know is not read;
// the metrics that need its input shapes say so, with the file's problem,
// and do not send the user to capture with record_shapes=True (the
// capture may well have them).
func TestUnknownKernelHeaderIsTheReasonShapesAreMissing(t *testing.T) {
	t.Chdir("../..")
	src := "testdata/traces/ep-fc1-cumsum/dp0_pp0_tp0_dcp0_ep0_rank0_2900007_20250109081617431_ascend_pt"
	rank := filepath.Join(t.TempDir(), filepath.Base(src))
	require.NoError(t, os.CopyFS(rank, os.DirFS(src)))
	csv := filepath.Join(rank, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
	require.NoError(t, os.WriteFile(csv, []byte("Foo,Bar,Baz\n1,2,3\n"), 0o644))

	code, out, errs := run("analyze", rank, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Ranks []struct{ Unavailable map[string]string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Ranks, 1)
	for _, m := range []string{"decode.batch.observed", "moe.gmm.tokens"} {
		why := doc.Ranks[0].Unavailable[m]
		require.Contains(t, why, "they are recorded in kernel_details.csv, which was not read: ", m)
		require.Contains(t, why, `unknown header: no "Name" column`, m)
		require.NotContains(t, why, "record_shapes", m)
	}
}

// diff takes a profile or a saved document: a file that is neither says
// both, not only that it is not a trace.
func TestDiffOfAFileThatIsNeither(t *testing.T) {
	t.Chdir("../..")
	notDoc := filepath.Join(t.TempDir(), "baseline.json")
	require.NoError(t, os.WriteFile(notDoc, []byte(`{"a": 1}`), 0o644))
	code, _, errs := run("diff", notDoc, "testdata/traces/clean-2ranks", "-q")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, notDoc+": not a trace")
	require.Contains(t, errs, `; nor a document saved by npuprof analyze --format json (no "schema": "npuprof.analysis/v1")`)
	require.Equal(t, 1, strings.Count(errs, "\n"), errs)
}
