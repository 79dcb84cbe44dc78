package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/buildinfo"
	"github.com/npuprof/npuprof/internal/golden"
	"github.com/stretchr/testify/require"
)

// The golden outputs pin every output of every command on the committed
// inputs byte for byte: the terminal summary (analyze), the JSON document
// (analyze --format json), check's text, JUnit and SARIF, the HTML report's
// chart data, and diff's text, JSON and HTML chart data. Rewrite them with
//
//	go test ./cmd/npuprof -run Golden -update
//
// and read the change in `git diff testdata/golden` before committing it.
//
// The commands run in-process from the repository root, so every path in
// an output is the relative one a user types there (testdata/...). Two
// things are normalised (goldenNormalise): JUnit's time attributes (wall
// times) read time="T", and npuprof's version and revision (the JSON
// document's tool, SARIF, JUnit) read "devel" and "unknown", what a test
// binary's build information gives (internal/buildinfo), whatever build
// ran the test. Only the HTML pages are reduced to their data blob (the
// JSON inside <script id="npuprof-charts">, one chart a line), so a style
// or script edit does not show as a data change.

// goldenCase is one input, named after the case, with extra flags.
type goldenCase struct {
	name string
	path string
	args []string
}

var goldenCases = []goldenCase{
	{"ep-fc1-cumsum", "testdata/traces/ep-fc1-cumsum", nil},
	{"ep-fc1-cumsum-deploy", "testdata/traces/ep-fc1-cumsum", []string{"--deploy", "testdata/deploy/field-report-1.sh"}},
	// every output in Chinese: the findings' texts and the fixed labels
	{"ep-fc1-cumsum-deploy-zh", "testdata/traces/ep-fc1-cumsum", []string{"--deploy", "testdata/deploy/field-report-1.sh", "--lang", "zh"}},
	{"truncated-mid-event", "testdata/broken/truncated-mid-event", nil},
	{"ep-fc1-cumsum-db", "testdata/traces/ep-fc1-cumsum-db", nil},
	{"no-collectives", "testdata/traces/no-collectives", nil},
	{"clean-2ranks", "testdata/traces/clean-2ranks", nil},
	// an excerpt of a real torch.profiler (Kineto) trace of torch_npu
	{"kineto-torchnpu-excerpt", "internal/parser/traceview/testdata/kineto/msprof_3466812.excerpt.pt.trace.json", nil},
}

// goldenDiffs are the diff cases: BEFORE and AFTER by case name, and a
// --lang (the golden's name ends in it).
var goldenDiffs = [][3]string{
	{"ep-fc1-cumsum", "clean-2ranks", ""},
	{"ep-fc1-cumsum", "truncated-mid-event", ""},
	// every output of the diff in Chinese
	{"ep-fc1-cumsum", "clean-2ranks", "zh"},
}

// goldenDir is testdata/golden, relative to the repository root.
const goldenDir = "testdata/golden"

func TestGoldenOutputs(t *testing.T) {
	t.Chdir("../..")
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			goldenAnalyze(t, c)
			goldenCheck(t, c)
			goldenReport(t, c)
		})
	}
}

func TestGoldenDiff(t *testing.T) {
	t.Chdir("../..")
	paths := map[string]string{}
	for _, c := range goldenCases {
		paths[c.name] = c.path
	}
	for _, d := range goldenDiffs {
		name := d[0] + "_vs_" + d[1]
		var extra []string
		if d[2] != "" {
			name += "-" + d[2]
			extra = []string{"--lang", d[2]}
		}
		t.Run(name, func(t *testing.T) {
			before, after := paths[d[0]], paths[d[1]]
			html := filepath.Join(t.TempDir(), "diff.html")
			out, errs := goldenRun(t, ExitOK, append([]string{"diff", before, after, "-q", "--html", html}, extra...)...)
			golden.Check(t, goldenFile(name, "diff.txt"), []byte(out))
			goldenStderr(t, errs)
			out, errs = goldenRun(t, ExitOK, append([]string{"diff", before, after, "-q", "--format", "json"}, extra...)...)
			golden.Check(t, goldenFile(name, "diff.json"), []byte(out))
			goldenStderr(t, errs)
			golden.Check(t, goldenFile(name, "diff-html-data.json"), htmlData(t, html))
		})
	}
}

// goldenAnalyze pins analyze's terminal summary and JSON document.
func goldenAnalyze(t *testing.T, c goldenCase) {
	out, errs := goldenRun(t, ExitOK, append([]string{"analyze", c.path, "-q"}, c.args...)...)
	golden.Check(t, goldenFile(c.name, "analyze.txt"), []byte(out))
	goldenStderr(t, errs)
	// the summary with each section's table
	out, errs = goldenRun(t, ExitOK, append([]string{"analyze", c.path, "-q", "--detail", "tables"}, c.args...)...)
	golden.Check(t, goldenFile(c.name, "analyze-tables.txt"), []byte(out))
	goldenStderr(t, errs)
	out, errs = goldenRun(t, ExitOK, append([]string{"analyze", c.path, "-q", "--format", "json"}, c.args...)...)
	golden.Check(t, goldenFile(c.name, "json"), goldenNormalise([]byte(out)))
	goldenStderr(t, errs)
}

// goldenCheck pins check's text (with its exit code and its one-line
// verdict on standard error, which the file ends with), JUnit and SARIF.
func goldenCheck(t *testing.T, c goldenCase) {
	goldenCheckAs(t, c.name, c.path, c.args, func(b []byte) []byte { return b })
}

// goldenCheckAs is goldenCheck with every output passed through norm.
func goldenCheckAs(t *testing.T, name, path string, extra []string, norm func([]byte) []byte) {
	dir := t.TempDir()
	junit, sarif := filepath.Join(dir, "check.xml"), filepath.Join(dir, "check.sarif")
	var out, errb bytes.Buffer
	args := append([]string{"check", path, "-q", "--junit", junit, "--sarif", sarif}, extra...)
	code := Main(args, strings.NewReader(""), &out, &errb)
	require.Contains(t, []int{ExitOK, ExitFindings}, code, errb.String())
	text := out.String() + "--- exit code " + strconv.Itoa(code) + ", standard error:\n" + errb.String()
	golden.Check(t, goldenFile(name, "check.txt"), norm([]byte(text)))
	golden.Check(t, goldenFile(name, "junit.xml"), goldenNormalise(norm(readFile(t, junit))))
	golden.Check(t, goldenFile(name, "sarif"), goldenNormalise(norm(readFile(t, sarif))))
}

// TestGoldenBaseline pins check --baseline (the budget, the comparison
// under the text, baseline_diff in the JSON) and a diff whose BEFORE is a
// saved document, against clean-2ranks saved by analyze --format json.
// The saved document is written to a temporary folder, whose path the
// budget's evidence prints: that path alone is replaced by $BASELINE_DIR.
func TestGoldenBaseline(t *testing.T) {
	t.Chdir("../..")
	// the folder's path has a fixed length, so that the summary wraps the
	// line quoting it at the same place whatever the temporary folder
	dir := t.TempDir()
	dir = filepath.Join(dir, strings.Repeat("x", max(1, 60-len(dir))))
	require.NoError(t, os.Mkdir(dir, 0o755))
	base := filepath.Join(dir, "clean-2ranks.json")
	goldenRun(t, ExitOK, "analyze", "testdata/traces/clean-2ranks", "-q", "--format", "json", "-o", base)
	norm := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(dir), []byte("$BASELINE_DIR")) }
	const name = "ep-fc1-cumsum-baseline-clean-2ranks"
	args := []string{"--baseline", base, "--budget", "hccl.total.time_us <= baseline * 1.05"}
	goldenCheckAs(t, name, "testdata/traces/ep-fc1-cumsum", args, norm)
	var out, errb bytes.Buffer
	code := Main(append([]string{"check", "testdata/traces/ep-fc1-cumsum", "-q", "--format", "json"}, args...), strings.NewReader(""), &out, &errb)
	require.Equal(t, ExitFindings, code, errb.String())
	golden.Check(t, goldenFile(name, "json"), goldenNormalise(norm(out.Bytes())))

	text, errs := goldenRun(t, ExitOK, "diff", base, "testdata/traces/ep-fc1-cumsum", "-q")
	goldenStderr(t, errs)
	golden.Check(t, goldenFile("saved-clean-2ranks_vs_ep-fc1-cumsum", "diff.txt"), norm([]byte(text)))
}

// goldenReport pins the HTML report's data blob.
func goldenReport(t *testing.T, c goldenCase) {
	html := filepath.Join(t.TempDir(), "report.html")
	_, errs := goldenRun(t, ExitOK, append([]string{"report", c.path, "-q", "-o", html}, c.args...)...)
	goldenStderr(t, errs)
	golden.Check(t, goldenFile(c.name, "report-data.json"), htmlData(t, html))
}

// goldenRun runs npuprof in-process and requires the exit code.
func goldenRun(t *testing.T, want int, args ...string) (stdout, stderr string) {
	t.Helper()
	code, out, errs := run(args...)
	require.Equal(t, want, code, "%v: %s", args, errs)
	return out, errs
}

// goldenStderr requires a quiet standard error (-q): every warning is in
// the outputs themselves.
func goldenStderr(t *testing.T, errs string) {
	t.Helper()
	require.Empty(t, errs)
}

func goldenFile(name, kind string) string {
	return filepath.Join(goldenDir, name+"."+kind)
}

// reJUnitTime is a JUnit time attribute.
var reJUnitTime = regexp.MustCompile(` time="[0-9.]+"`)

// goldenNormalise replaces what differs from run to run or build to build:
// JUnit's times, and the version and revision when the test binary's build
// information has them.
func goldenNormalise(b []byte) []byte {
	b = reJUnitTime.ReplaceAll(b, []byte(` time="T"`))
	for _, q := range [][2]string{{tool.Version, buildinfo.Devel}, {tool.Revision, buildinfo.Unknown}} {
		if q[0] != q[1] {
			b = bytes.ReplaceAll(b, []byte(`"`+q[0]+`"`), []byte(`"`+q[1]+`"`))
		}
	}
	return b
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// htmlData returns the chart data of the HTML page at path: the JSON text
// of its <script type="application/json" id="npuprof-charts"> element, an
// array written here one element per line (each element's bytes as the
// page holds them), so a change shows as the charts it touches.
func htmlData(t *testing.T, path string) []byte {
	t.Helper()
	const open = `<script type="application/json" id="npuprof-charts">`
	page := string(readFile(t, path))
	i := strings.Index(page, open)
	require.GreaterOrEqual(t, i, 0, "no chart data in %s", path)
	rest := page[i+len(open):]
	j := strings.Index(rest, "</script>")
	require.GreaterOrEqual(t, j, 0)
	var charts []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(rest[:j]), &charts))
	var b bytes.Buffer
	b.WriteString("[\n")
	for k, c := range charts {
		if k > 0 {
			b.WriteString(",\n")
		}
		b.Write(c)
	}
	b.WriteString("\n]\n")
	return b.Bytes()
}

// TestGoldenSavedRenders pins that a document saved with --format
// json-full renders as the profile does: `npuprof analyze saved.json`
// prints the golden terminal summary, `npuprof report saved.json` writes
// the very bytes `npuprof report DIR` writes, `--format json` of the
// saved document is the profile's JSON document, and `npuprof check
// saved.json` writes the golden check text, JUnit and SARIF.
func TestGoldenSavedRenders(t *testing.T) {
	t.Chdir("../..")
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			saved := filepath.Join(dir, "saved.json")
			text, errs := goldenRun(t, ExitOK, append([]string{"analyze", c.path, "-q", "--format", "json-full=" + saved}, c.args...)...)
			goldenStderr(t, errs)
			golden.Check(t, goldenFile(c.name, "analyze.txt"), []byte(text))

			again, errs := goldenRun(t, ExitOK, "analyze", saved, "-q")
			goldenStderr(t, errs)
			require.Equal(t, text, again, "analyze saved.json prints what analyze DIR prints")
			tables, _ := goldenRun(t, ExitOK, "analyze", saved, "-q", "--detail", "tables")
			golden.Check(t, goldenFile(c.name, "analyze-tables.txt"), []byte(tables))

			fromDir, fromSaved := filepath.Join(dir, "dir.html"), filepath.Join(dir, "saved.html")
			goldenRun(t, ExitOK, append([]string{"report", c.path, "-q", "-o", fromDir}, c.args...)...)
			goldenRun(t, ExitOK, "report", saved, "-q", "-o", fromSaved)
			require.True(t, bytes.Equal(readFile(t, fromDir), readFile(t, fromSaved)), "report saved.json writes what report DIR writes")

			js, _ := goldenRun(t, ExitOK, append([]string{"analyze", c.path, "-q", "--format", "json"}, c.args...)...)
			savedJS, _ := goldenRun(t, ExitOK, "analyze", saved, "-q", "--format", "json")
			require.Equal(t, js, savedJS, "the saved document's contract is the profile's")

			// check gates the saved findings: the profile's text, JUnit and SARIF
			goldenCheckAs(t, c.name, saved, c.args, func(b []byte) []byte { return b })
		})
	}
}

// A document saved without its detail (--format json) still writes its
// JSON, JUnit and SARIF, and says what to do for the summary and the
// report.
func TestSavedContractNeedsDetail(t *testing.T) {
	t.Chdir("../..")
	saved := filepath.Join(t.TempDir(), "saved.json")
	goldenRun(t, ExitOK, "analyze", "testdata/traces/clean-2ranks", "-q", "--format", "json", "-o", saved)
	_, errs := goldenRun(t, ExitUsage, "analyze", saved, "-q")
	require.Contains(t, errs, "the document has no detail")
	require.Contains(t, errs, "--format json-full")
	js, errs := goldenRun(t, ExitOK, "analyze", saved, "-q", "--format", "json")
	require.Empty(t, errs)
	require.Equal(t, string(readFile(t, saved)), js)
}
