package main

import (
	"bytes"
	"encoding/json"
	"html/template"
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

// The facts of --deploy and --fact are in the report's header with their
// sources, as the terminal lists them; the profile's own facts are not
// listed twice.
func TestReportHTMLDeployFacts(t *testing.T) {
	sample := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1")
	var out, errb bytes.Buffer
	code := Main([]string{"report", sample, "-q", "--deploy", fieldScript, "--fact", "concurrency=25"}, nil, &out, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	html := out.String()
	// field-report-1.sh: vllm serve ... --tensor-parallel-size 16 (line 16)
	require.Contains(t, html, "field-report-1.sh:16 (")
	require.Contains(t, html, "--fact concurrency=25")

	var txt bytes.Buffer
	code = Main([]string{"analyze", sample, "-q", "--deploy", fieldScript, "--fact", "concurrency=25", "--detail", "tables"}, nil, &txt, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	// every fact the terminal lists from the script or --fact is in the HTML
	n := 0
	for _, line := range strings.Split(txt.String(), "\n") {
		i := strings.LastIndex(line, "  (")
		if !strings.HasPrefix(line, "  ") || i < 0 || !strings.Contains(line, " = ") {
			continue
		}
		src := strings.TrimSuffix(line[i+3:], ")")
		if !strings.Contains(src, "field-report-1.sh:") && !strings.HasPrefix(src, "--fact ") {
			continue
		}
		name := strings.TrimSpace(line[:strings.Index(line, " = ")])
		require.Contains(t, html, ">"+name+"<", "fact %s", name)
		n++
	}
	require.Greater(t, n, 3, "the script gives several facts")
	require.NotContains(t, html, "profile: parallel_group_info", "profile facts are drawn by the report itself")
}

// The text summary and the JSON document carry every fix as one diff
// against --deploy (deploy_diff); the HTML report showed only each
// finding's own diff, which cannot all be applied when two touch the same
// line. It now shows the combined one, line for line the JSON's.
func TestReportHTMLDeployDiff(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"report", demo, "-q", "--deploy", fieldScript}, nil, &out, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	page := out.String()
	code, js, stderr := run("analyze", demo, "-q", "--deploy", fieldScript, "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var doc struct {
		DeployDiff string `json:"deploy_diff"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &doc))
	require.NotEmpty(t, doc.DeployDiff)
	i := strings.Index(page, `id="deploy-diff"`)
	require.Positive(t, i, "the combined diff block")
	block := page[i:]
	block = block[:strings.Index(block, "</pre>")]
	for _, l := range strings.Split(strings.TrimRight(doc.DeployDiff, "\n"), "\n") {
		require.Contains(t, block, strings.ReplaceAll(template.HTMLEscapeString(l), "+", "&#43;"))
	}
}
