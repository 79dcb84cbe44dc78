package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// An output file that cannot be written (-o, --html, --junit, --sarif) is a
// usage error that says why, in the user's words: the folder it goes into
// does not exist, or it names a folder. It used to print the temporary
// file npuprof writes first ("open nd/.npuprof-850393512: no such file or
// directory", "rename ./.npuprof-3082202424 .: file exists") and only after
// the whole profile had been parsed and analyzed; it is now refused before
// any input is read.
func TestUnwritableOutputSaysWhyBeforeReading(t *testing.T) {
	// a folder with no profile in it: read, it would be refused as that,
	// so the output's refusal shows it came first
	in := t.TempDir()
	t.Chdir(t.TempDir())
	experts := "load.csv"
	require.NoError(t, os.WriteFile(experts, []byte("layer,expert,tokens\n0,0,10\n0,1,20\n0,2,5\n0,3,7\n"), 0o644))
	require.NoError(t, os.Mkdir("taken", 0o755))
	require.NoError(t, os.WriteFile("file.json", []byte("{}"), 0o644))
	for _, c := range []struct {
		args []string
		file string
		want string
	}{
		{[]string{"analyze", in, "-o", "nd/out.json"}, "nd/out.json", "folder nd does not exist"},
		{[]string{"analyze", in, "--html", "nd/r.html"}, "nd/r.html", "folder nd does not exist"},
		{[]string{"analyze", in, "-o", "."}, ".", "it is a folder"},
		{[]string{"analyze", in, "-o", "taken/"}, "taken/", "it is a folder"},
		{[]string{"analyze", in, "-o", "file.json/x.json"}, "file.json/x.json", "file.json is not a folder"},
		{[]string{"report", in, "-o", "taken"}, "taken", "it is a folder"},
		{[]string{"check", in, "--junit", "nd/j.xml"}, "nd/j.xml", "folder nd does not exist"},
		{[]string{"check", in, "--sarif", "nd/s.sarif"}, "nd/s.sarif", "folder nd does not exist"},
		{[]string{"check", in, "-o", "nd/c.json"}, "nd/c.json", "folder nd does not exist"},
		{[]string{"diff", in, in, "-o", "nd/d.txt"}, "nd/d.txt", "folder nd does not exist"},
		{[]string{"diff", in, in, "--html", "taken"}, "taken", "it is a folder"},
		{[]string{"eplb", "plan", "--experts", experts, "--ep-size", "4", "-o", "nd/map.json"}, "nd/map.json", "folder nd does not exist"},
	} {
		args := c.args
		if args[0] != "eplb" {
			args = append(args, "-q")
		}
		code, _, errs := run(args...)
		require.Equal(t, ExitUsage, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, "cannot write "+c.file+": "+c.want, c.args)
		require.NotContains(t, errs, ".npuprof-", "%v: the temporary file is ours, not the user's", c.args)
	}
	require.NoDirExists(t, "nd")
}

// A warning names its file once, in the terminal and in the HTML report:
// the readers' errors already start with the file, and the summary printed
// "warning: FILE: FILE: empty file, expected a step_trace_time.csv header".
func TestWarningNamesItsFileOnce(t *testing.T) {
	out, root := testutil.GenerateTiny(t)
	for _, name := range []string{"trace_view.json", "step_trace_time.csv"} {
		require.NoError(t, os.WriteFile(filepath.Join(out, name), nil, 0o644))
	}
	html := filepath.Join(t.TempDir(), "r.html")
	code, stdout, errs := run("analyze", root, "-q", "--html", html, "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	for _, name := range []string{"trace_view.json", "step_trace_time.csv"} {
		p := filepath.Join(out, name)
		requireText(t, stdout, "warning: "+p+": ", name)
		require.NotContains(t, stdout, p+": "+p, name)
		require.NotContains(t, string(page), p+": "+p, name)
	}
	requireText(t, stdout, "warning: "+filepath.Join(out, "step_trace_time.csv")+": empty file")
}

// An output file that is one of the command's inputs is refused before
// anything is written: "npuprof analyze trace_view.json -o trace_view.json"
// used to replace a 750 KB trace with its own 6 KB summary, and
// "npuprof diff before.json after.json -o before.json" the saved baseline.
func TestOutputNeverOverwritesAnInput(t *testing.T) {
	out, root := testutil.GenerateTiny(t)
	trace := filepath.Join(out, "trace_view.json")
	before, err := os.ReadFile(trace)
	require.NoError(t, err)
	saved := filepath.Join(t.TempDir(), "before.json")
	code, _, errs := run("analyze", root, "-q", "--format", "json", "-o", saved)
	require.Equal(t, ExitOK, code, errs)
	savedBytes, err := os.ReadFile(saved)
	require.NoError(t, err)
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(rulesFile, []byte("rules: []\n"), 0o644))
	t.Chdir(out)
	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"analyze", trace, "-o", trace}, trace},
		{[]string{"analyze", "trace_view.json", "-o", "./trace_view.json"}, "./trace_view.json"},
		{[]string{"analyze", "trace_view.json", "--html", trace}, trace},
		{[]string{"report", "trace_view.json", "-o", "trace_view.json"}, "trace_view.json"},
		{[]string{"check", "trace_view.json", "--junit", "trace_view.json"}, "trace_view.json"},
		{[]string{"check", root, "--baseline", saved, "-o", saved}, saved},
		{[]string{"analyze", root, "--rules", rulesFile, "-o", rulesFile}, rulesFile},
		{[]string{"diff", saved, root, "-o", saved}, saved},
		{[]string{"diff", root, saved, "--html", saved}, saved},
	} {
		code, _, errs := run(append(c.args, "-q")...)
		require.Equal(t, ExitUsage, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, "cannot write "+c.out+": it is an input", c.args)
	}
	got, err := os.ReadFile(trace)
	require.NoError(t, err)
	require.Equal(t, before, got, "the trace is untouched")
	got, err = os.ReadFile(saved)
	require.NoError(t, err)
	require.Equal(t, savedBytes, got, "the saved document is untouched")
}

// An output that exists and is not a regular file is written in place,
// never replaced: writeOutput wrote a temporary file and renamed it over
// the target, so "-o /dev/null" (docs/performance.md, scripts/bench.sh)
// run as root replaced the /dev/null device with a regular file for the
// whole machine, "-o fifo" replaced the FIFO its reader was waiting on,
// and "-o link.json" replaced the symlink instead of writing its file. A
// FIFO stands for /dev/null here: a regression must not break the machine
// running the test.
func TestOutputWritesThroughDevicesAndSymlinks(t *testing.T) {
	in, err := filepath.Abs(demo)
	require.NoError(t, err)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	code, _, errs := run("analyze", in, "-q", "--format", "json", "-o", fifo)
	require.Equal(t, ExitOK, code, errs)
	select {
	case b := <-got:
		require.Contains(t, string(b), `"schema": "npuprof.analysis/v1"`, "the reader of the FIFO got the document")
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was written into the FIFO")
	}
	st, err := os.Lstat(fifo)
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "the FIFO is still a FIFO")

	target := filepath.Join(dir, "reports", "analysis.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "latest.json")
	require.NoError(t, os.Symlink(filepath.Join("reports", "analysis.json"), link))
	code, _, errs = run("analyze", in, "-q", "--format", "json", "-o", link)
	require.Equal(t, ExitOK, code, errs)
	st, err = os.Lstat(link)
	require.NoError(t, err)
	require.Equal(t, os.ModeSymlink, st.Mode().Type(), "the symlink is still a symlink")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Contains(t, string(b), `"schema": "npuprof.analysis/v1"`, "the file it points to was written")
}

// A finding whose rule estimates no saving (env-hygiene has no saving
// expression) says so; it used to print "est. saving 0.0µs" in the
// terminal and "estimated saving: 0.0µs per rank" in JUnit, a 0 for
// something never measured.
func TestFindingWithoutSavingEstimateSaysSo(t *testing.T) {
	_, root := testutil.GenerateTiny(t)
	meta := filepath.Join(root, "profiler_metadata.json")
	b, err := os.ReadFile(meta)
	require.NoError(t, err)
	var md map[string]any
	require.NoError(t, json.Unmarshal(b, &md))
	md["ENV_VARIABLES"].(map[string]any)["OMP_NUM_THREADS"] = "8"
	b, err = json.Marshal(md)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(meta, b, 0o644))

	junit := filepath.Join(t.TempDir(), "j.xml")
	code, out, errs := run("check", root, "-q", "--fail-on", "low", "--junit", junit)
	require.Equal(t, ExitFindings, code, errs)
	require.Contains(t, out, "(env-hygiene, no saving estimated)")
	require.NotContains(t, out, "env-hygiene, est. saving 0.0")
	x, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(x), "estimated saving: no estimate&#xA;")
	require.NotContains(t, string(x), "estimated saving: 0.0µs")
}

// Two outputs cannot share standard output: "--format json --html -" wrote
// the HTML right after the JSON document, and neither could be read.
func TestOnlyOneOutputOnStdout(t *testing.T) {
	in, err := filepath.Abs(demo)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"analyze", in, "--format", "json", "--html", "-"},
		{"analyze", in, "-o", "-", "--html", "-"},
		{"check", in, "--junit", "-"},
		{"check", in, "-o", "report.txt", "--junit", "-", "--sarif", "-"},
		{"diff", in, in, "--html", "-"},
	} {
		code, out, errs := run(append(args, "-q")...)
		require.Equal(t, ExitUsage, code, "%v: %s", args, errs)
		require.Contains(t, errs, "standard output", args)
		require.Empty(t, out, args)
	}
	// one of them on standard output, the other in a file: fine
	html := filepath.Join(t.TempDir(), "r.html")
	code, out, errs := run("analyze", in, "-q", "--format", "json", "--html", html)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, `"schema": "npuprof.analysis/v1"`)
	code, out, errs = run("analyze", in, "-q", "-o", html, "--html", "-")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "<html")
}

// An input file flag (--deploy, --vllm-log, --vllm-bench, --baseline,
// --rules, diff's --vllm-log-before/after) that names nothing or a folder is
// refused before the profile is read, with the flag, the path and what was
// expected. These were found only after the whole profile was parsed and
// analyzed, and said "--vllm-log: g: line 1: read g: is a directory".
func TestInputFileFlagsCheckedFirst(t *testing.T) {
	// a folder with no profile in it: read, it would be refused as that,
	// so the flag's refusal shows it came first
	in := t.TempDir()
	t.Chdir(t.TempDir())
	require.NoError(t, os.Mkdir("folder", 0o755))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", in, "--deploy", "serve.sh"}, "--deploy serve.sh: no such file"},
		{[]string{"analyze", in, "--deploy", "folder"}, "--deploy folder: is a folder; expected a FILE"},
		{[]string{"report", in, "--vllm-log", "folder"}, "--vllm-log folder: is a folder; expected a FILE"},
		{[]string{"check", in, "--vllm-bench", "bench.json"}, "--vllm-bench bench.json: no such file"},
		{[]string{"check", in, "--baseline", "folder"}, "--baseline folder: is a folder; expected a FILE"},
		{[]string{"check", in, "--rules", "folder"}, "--rules folder: is a folder; expected a FILE"},
		{[]string{"diff", in, in, "--vllm-log-after", "after.log"}, "--vllm-log-after after.log: no such file"},
	} {
		code, _, errs := run(append(c.args, "-q")...)
		require.Equal(t, ExitUsage, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, c.want, c.args)
	}
}

// Two outputs into one file: the second silently replaced the first.
func TestTwoOutputsIntoOneFile(t *testing.T) {
	in, err := filepath.Abs(demo)
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"analyze", in, "-o", "out.txt", "--html", "./out.txt"},
		{"check", in, "--junit", "ci.xml", "--sarif", "ci.xml"},
		{"diff", in, in, "-o", "d", "--html", "d"},
	} {
		code, _, errs := run(append(args, "-q")...)
		require.Equal(t, ExitUsage, code, "%v: %s", args, errs)
		require.Contains(t, errs, "both name the same file", args)
	}
	require.NoFileExists(t, "out.txt")
}

// --format repeats, NAME=FILE writing one more output: one run writes
// what separate runs write, and --html, --junit and --sarif are its
// aliases.
func TestFormatRepeatsWithFiles(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.")
	const trace = "testdata/traces/ep-fc1-cumsum"
	text, errs := goldenRun(t, ExitOK, "analyze", trace, "-q", "--format", "text", "--format", "json="+in+"json",
		"--format", "html="+in+"html", "--format", "junit="+in+"xml", "--format", "sarif="+in+"sarif")
	require.Empty(t, errs)
	want, _ := goldenRun(t, ExitOK, "analyze", trace, "-q")
	require.Equal(t, want, text)
	js, _ := goldenRun(t, ExitOK, "analyze", trace, "-q", "--format", "json")
	require.Equal(t, js, string(readFile(t, in+"json")))
	alias := filepath.Join(dir, "alias.html")
	goldenRun(t, ExitOK, "analyze", trace, "-q", "--format", "json", "--html", alias)
	require.Equal(t, readFile(t, alias), readFile(t, in+"html"))
	sarif, _ := goldenRun(t, ExitOK, "analyze", trace, "-q", "--format", "sarif")
	require.Equal(t, sarif, string(readFile(t, in+"sarif")))
	require.Contains(t, string(readFile(t, in+"xml")), `<testsuite name="npuprof check `+trace+`"`)

	_, errs = goldenRun(t, ExitUsage, "analyze", trace, "-q", "--format", "text", "--format", "json")
	require.Contains(t, errs, "only one output goes to -o")
	_, errs = goldenRun(t, ExitUsage, "analyze", trace, "-q", "--format", "json=")
	require.Contains(t, errs, "expected a FILE after =")
	_, errs = goldenRun(t, ExitUsage, "analyze", trace, "-q", "--format", "yaml=x")
	require.Contains(t, errs, `--format "yaml": expected text, json, json-full, html, junit or sarif`)
	_, errs = goldenRun(t, ExitUsage, "analyze", trace, "-q", "--format", "json=-")
	require.Contains(t, errs, "the text output (-o) and --format json=- would both write to standard output")
}
