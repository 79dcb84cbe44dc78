package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/parser"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// listing records every entry under dir with its size, mode and mtime.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		out[p] = fmt.Sprintf("%d %v %s", info.Size(), info.Mode(), info.ModTime().Format(time.RFC3339Nano))
		return nil
	}))
	return out
}

// chmodTree sets every file to fileMode and every folder to dirMode.
func chmodTree(t *testing.T, dir string, fileMode, dirMode os.FileMode) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return os.Chmod(p, dirMode)
		}
		return os.Chmod(p, fileMode)
	}))
}

// npuprof never writes into the input: analyze works on a read-only copy,
// and the folder's listing (names, sizes, modes, mtimes) is the same
// after text, JSON and -o runs. (Run as root, chmod does not stop writes,
// which is why the listing is compared.)
func TestInputIsReadOnly(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, testutil.Tiny())
	require.NoError(t, err)
	chmodTree(t, dir, 0o444, 0o555)
	t.Cleanup(func() { chmodTree(t, dir, 0o644, 0o755) })
	before := listing(t, dir)

	outDir := t.TempDir()
	t.Chdir(outDir) // a relative -o lands here, never in the input
	code, stdout, errs := run("analyze", dir)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, stdout, "2 rank(s)")
	code, _, errs = run("analyze", dir, "--format", "json", "-o", "analysis.json")
	require.Equal(t, ExitOK, code, errs)
	code, _, errs = run("analyze", filepath.Join(brokenDir, "truncated-mid-event"), "--format", "json", "-o", "partial.json")
	require.Equal(t, ExitOK, code, errs)
	_, err = os.Stat(filepath.Join(outDir, "analysis.json"))
	require.NoError(t, err)

	require.Equal(t, before, listing(t, dir), "npuprof changed the input folder")
	ents, err := os.ReadDir(outDir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"analysis.json", "partial.json"}, names, "no temporary files left behind")
}

// Two runs on the same input give identical bytes, whatever the number of
// workers, for every generated scenario (8 ranks each), in JSON and text.
func TestDeterministicOutput(t *testing.T) {
	for _, sc := range tracegen.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			sc.Layers, sc.Steps = 2, 2
			dir := t.TempDir()
			_, err := tracegen.Generate(dir, sc)
			require.NoError(t, err)
			var first string
			for i, workers := range []string{"1", "4", "8", "4"} {
				code, out, errs := run("analyze", dir, "--format", "json", "--workers", workers)
				require.Equal(t, ExitOK, code, errs)
				if i == 0 {
					first = out
					var doc results.Document
					require.NoError(t, json.Unmarshal([]byte(out), &doc))
					require.Len(t, doc.Ranks, 8)
					continue
				}
				require.Equal(t, first, out, "--workers %s gave different JSON bytes", workers)
			}
			_, text1, _ := run("analyze", dir, "--workers", "2")
			_, text2, _ := run("analyze", dir, "--workers", "8")
			require.Equal(t, text1, text2)
		})
	}
}

// Exit codes, one table: 0 ok, 2 usage or input error, 3 internal error
// (1, findings at --fail-on, belongs to `check`).
func TestExitCodeTable(t *testing.T) {
	good := filepath.Join(testutil.RepoRoot(), "testdata", "traces", "ep-fc1-cumsum")
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"ok", []string{"analyze", good}, ExitOK},
		{"ok json", []string{"analyze", good, "--format", "json"}, ExitOK},
		{"partial input is still ok", []string{"analyze", filepath.Join(brokenDir, "truncated-mid-event")}, ExitOK},
		{"no such path", []string{"analyze", "/no/such/profile"}, ExitUsage},
		{"no profile", []string{"analyze", filepath.Join(brokenDir, "no-profile-folder")}, ExitUsage},
		{"not a trace", []string{"analyze", filepath.Join(brokenDir, "not-json.json")}, ExitUsage},
		{"bad flag", []string{"analyze", good, "--bogus"}, ExitUsage},
		{"bad format", []string{"analyze", good, "--format", "yaml"}, ExitUsage},
		{"missing argument", []string{"analyze"}, ExitUsage},
		{"unknown command", []string{"analyse", good}, ExitUsage},
		{"cannot write -o", []string{"analyze", good, "-o", "/no/such/dir/out.json"}, ExitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := run(c.args...)
			require.Equal(t, c.code, code, errs)
			if c.code != ExitOK {
				require.Equal(t, 1, strings.Count(errs, "\n"), "one line on stderr: %q", errs)
				require.True(t, strings.HasPrefix(errs, "npuprof: "), errs)
			}
		})
	}
}

// A panic inside a pass is recovered by the runner, named with the pass,
// shown in the output (which is still written, other passes measured), and
// gives exit 3.
func TestPassPanicIsExit3(t *testing.T) {
	boom := &analysis.Pass{
		Name: "boom",
		Doc:  "panics, to test that a failing pass gives exit 3",
		Run: func(ctx *analysis.Context) (any, error) {
			var m map[string]int
			m["x"]++ // nil map write: a real runtime panic
			return nil, nil
		},
	}
	saved := analysis.Passes
	analysis.Passes = append(slices.Clone(saved), boom)
	t.Cleanup(func() { analysis.Passes = saved })

	path := filepath.Join(brokenDir, "duplicated-events")
	code, out, errs := run("analyze", path)
	require.Equal(t, ExitInternal, code)
	require.Equal(t, "npuprof: 1 analysis pass(es) failed: pass boom on rank 0: internal error: panic: assignment to entry in nil map\n", errs)
	require.Contains(t, out, "ERROR: pass boom on rank 0: internal error: panic: assignment to entry in nil map (ranks 0)")
	require.Contains(t, out, "\nMeasured (", "the rest of the summary is still written")

	code, out, _ = run("analyze", path, "--format", "json")
	require.Equal(t, ExitInternal, code)
	doc, err := results.Read(strings.NewReader(out), "out")
	require.NoError(t, err)
	require.Len(t, doc.Errors, 1)
	require.Equal(t, "boom", doc.Errors[0].Pass)
	require.Equal(t, 0, doc.Errors[0].Rank)
	require.True(t, strings.HasPrefix(doc.Errors[0].Message, "internal error: panic: assignment to entry in nil map\n"), doc.Errors[0].Message)
	require.Contains(t, doc.Ranks[0].Unavailable["pass.boom"], "internal error: panic")
	require.Equal(t, 4.0, doc.Ranks[0].Metrics["kernel.compute.count"], "other passes still measured")

	// saved with its detail, the document renders with its failure, exit 3
	full := filepath.Join(t.TempDir(), "full.json")
	code, text, _ := run("analyze", path, "-q", "--format", "json-full="+full)
	require.Equal(t, ExitInternal, code)
	code, again, errs := run("analyze", full, "-q")
	require.Equal(t, ExitInternal, code)
	require.Equal(t, text, again)
	require.Equal(t, "npuprof: 1 analysis pass(es) failed: pass boom on rank 0: internal error: panic: assignment to entry in nil map\n", errs)
}

// A panic while reading a rank is recovered, named with the rank's path,
// reported as an error of the pseudo-pass "parse", and gives exit 3 after
// the output (the other ranks, measured) is written. When no rank is left,
// the error itself is exit 3, never a usage error.
func TestReaderPanicIsExit3(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, testutil.Tiny())
	require.NoError(t, err)
	t.Cleanup(func() { parser.TestHookParseRank = nil })
	parser.TestHookParseRank = func(src parser.Source) {
		if strings.Contains(src.Root, "_rank1_") {
			panic("reader bug")
		}
	}
	code, out, errs := run("analyze", dir, "--format", "json")
	require.Equal(t, ExitInternal, code)
	require.True(t, strings.HasPrefix(errs, "npuprof: 1 analysis pass(es) failed: pass parse on rank -1: internal error: panic while reading "), errs)
	require.Contains(t, errs, "_rank1_")
	doc, err := results.Read(strings.NewReader(out), "out")
	require.NoError(t, err)
	require.Len(t, doc.Ranks, 1, "rank 0 is still analyzed")
	require.NotEmpty(t, doc.Ranks[0].Metrics)
	require.Len(t, doc.Errors, 1)
	require.Equal(t, "parse", doc.Errors[0].Pass)
	require.Equal(t, -1, doc.Errors[0].Rank)
	require.Contains(t, doc.Errors[0].Message, ": reader bug\n")

	parser.TestHookParseRank = func(parser.Source) { panic("reader bug") }
	code, out, errs = run("analyze", dir)
	require.Equal(t, ExitInternal, code)
	require.Empty(t, out)
	require.True(t, strings.HasPrefix(errs, "npuprof: internal error: panic while reading "), errs)
	require.Equal(t, 1, strings.Count(errs, "\n"), "the stack stays out of the terminal: %q", errs)
}
