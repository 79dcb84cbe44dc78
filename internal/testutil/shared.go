package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The shared formats folder (shared/formats: the real profiler samples
// under samples/, the SARIF and JUnit schemas) lives beside the
// repository, outside it: ../shared/formats from a clone, further up from
// a git worktree kept in a folder of its own (../../shared/formats from
// /work/wt/NAME). SharedFile finds a file in it.

// SharedFile returns the path of rel (slash-separated) in the shared
// formats folder: under the parent of $NPUPROF_SAMPLES (samples/ is in
// that folder) when it is set, else in the first shared/formats found
// walking up from the repository. When no such file exists it returns ""
// and the places looked, for the one-line reason of a skip.
func SharedFile(rel string) (path, looked string) {
	var tried []string
	if d := os.Getenv("NPUPROF_SAMPLES"); d != "" {
		p := filepath.Join(filepath.Dir(filepath.Clean(d)), filepath.FromSlash(rel))
		if exists(p) {
			return p, ""
		}
		tried = append(tried, p+" (beside $NPUPROF_SAMPLES)")
	}
	_, file, _, _ := runtime.Caller(0)
	p, walked := findUp(filepath.Join(filepath.Dir(file), "..", ".."), filepath.Join("shared", "formats", filepath.FromSlash(rel)))
	if p != "" {
		return p, ""
	}
	return "", strings.Join(append(tried, walked), ", ")
}

// findUp looks for rel in dir and each folder above it, and returns the
// first that exists, or "" and what was looked for.
func findUp(dir, rel string) (string, string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", filepath.Join(dir, rel)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if p := filepath.Join(d, rel); exists(p) {
			return p, ""
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", rel + " in " + dir + " or any folder above it"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Skipped records that part of t was not run, saying why in one line, in
// t's log and in $NPUPROF_SKIP_LOG (what names the check left out, the
// same for every test, as Skip's); the rest of t goes on.
func Skipped(t testing.TB, what, why string) {
	t.Helper()
	logSkip(what, why)
	t.Log(what + " not run: " + oneLine(why))
}
