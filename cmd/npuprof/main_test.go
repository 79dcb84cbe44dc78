package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAnalyzeTextAndJSON(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1")
	code, out, errs := run("analyze", dir, "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	for _, s := range []string{"2 rank(s)", "Time breakdown", "Collectives by type and group", "allreduce", "EVENT_WAIT by stream", "Top compute kernels"} {
		require.Contains(t, out, s)
	}
	require.Empty(t, errs)

	code, out, errs = run("analyze", dir, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Equal(t, "npuprof.analysis/v1", doc["schema"])
	ranks := doc["ranks"].([]any)
	require.Len(t, ranks, 2)
	m := ranks[0].(map[string]any)["metrics"].(map[string]any)
	require.InDelta(t, 105991.878, m["hccl.total.time_us"], 0.01)
	require.Equal(t, 10.0, m["event_wait.count"])
	require.NotNil(t, doc["findings"])

	// two runs give identical bytes
	_, out2, _ := run("analyze", dir, "--format", "json")
	require.Equal(t, out, out2)
}

func TestAnalyzeOutputFile(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	outFile := filepath.Join(t.TempDir(), "a.json")
	code, out, errs := run("analyze", dir, "--format", "json", "-o", outFile)
	require.Equal(t, ExitOK, code, errs)
	require.Empty(t, out)
	b, err := os.ReadFile(outFile)
	require.NoError(t, err)
	require.Contains(t, string(b), `"schema": "npuprof.analysis/v1"`)
}

func TestExitCodes(t *testing.T) {
	code, _, errs := run("analyze", "/no/such/dir")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, 1, strings.Count(errs, "\n"), errs)
	require.Contains(t, errs, "/no/such/dir")

	empty := t.TempDir()
	code, _, errs = run("analyze", empty)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "no profile found")

	code, _, _ = run("analyze", "--bogus-flag", empty)
	require.Equal(t, ExitUsage, code)
	code, _, _ = run("analyze")
	require.Equal(t, ExitUsage, code)
	code, _, _ = run("analyze", empty, "--format", "yaml")
	require.Equal(t, ExitUsage, code)
	code, out, _ := run("--help")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "Exit codes")
}

// A missing or extra argument names what the command expects and where
// to read more, with exit code 2.
func TestArgumentErrorsNameTheArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze"}, "analyze: expected PATH, got no argument; see 'npuprof analyze --help'"},
		{[]string{"export", "a", "b"}, `export: expected PATH, got 2 arguments ("a" "b")`},
		// several PATHs are export folders merged: anything else says so
		{[]string{"check", "a", "b"}, "a b: several paths are analyzed together only when each is an npuprof export folder"},
		{[]string{"diff", "before.json"}, `diff: expected BEFORE and AFTER, got 1 argument ("before.json")`},
		{[]string{"export"}, "export: expected PATH, got no argument"},
		{[]string{"report"}, "report: expected PATH, got no argument"},
		{[]string{"rules", "explain"}, "rules explain: expected ID, got no argument; see 'npuprof rules explain --help'"},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, nil, &out, &errb)
		require.Equal(t, ExitUsage, code, c.args)
		require.Contains(t, errb.String(), c.want, c.args)
	}
}
