package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

func TestReportAndAnalyzeHTML(t *testing.T) {
	sample := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1")
	dir := t.TempDir()

	var out, errb bytes.Buffer
	file := filepath.Join(dir, "report.html")
	code := Main([]string{"report", sample, "-o", file, "-q"}, nil, &out, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	require.Empty(t, out.String(), "the HTML goes to -o, not stdout")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "<!DOCTYPE html>"))
	require.Contains(t, string(b), `data-section="timeline"`)

	// analyze --html writes the same report beside its normal output
	out.Reset()
	errb.Reset()
	file2 := filepath.Join(dir, "analyze.html")
	code = Main([]string{"analyze", sample, "--format", "json", "--html", file2, "-q"}, nil, &out, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	require.Contains(t, out.String(), `"schema": "npuprof.analysis/v1"`)
	b2, err := os.ReadFile(file2)
	require.NoError(t, err)
	require.Equal(t, string(b), string(b2), "both commands write the same, byte-stable report")

	// without -o the report goes to stdout
	out.Reset()
	code = Main([]string{"report", sample, "-q"}, nil, &out, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	require.True(t, strings.HasPrefix(out.String(), "<!DOCTYPE html>"))

	// a missing profile is a usage error
	code = Main([]string{"report", filepath.Join(dir, "nope")}, nil, &out, &errb)
	require.Equal(t, ExitUsage, code)
}
