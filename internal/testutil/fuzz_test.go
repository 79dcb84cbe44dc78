package testutil

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var reFuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)

// Every Fuzz function in the repository is listed in the Makefile's
// FUZZ_TARGETS (so `make fuzz` and `make fuzz-long` run it), and every
// listed target exists. A parser's fuzz target added without its line in
// the Makefile fails here.
func TestFuzzTargetsListed(t *testing.T) {
	root := RepoRoot()
	var found []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, m := range reFuzzFunc.FindAllStringSubmatch(string(b), -1) {
			found = append(found, "./"+filepath.ToSlash(rel)+":"+m[1])
		}
		return nil
	}))
	sort.Strings(found)
	require.NotEmpty(t, found)

	listed := makefileFuzzTargets(t)
	sort.Strings(listed)
	require.Equal(t, found, listed, "Makefile FUZZ_TARGETS must list every Fuzz function as ./pkg/dir:FuzzName")

	st, err := os.Stat(filepath.Join(root, "scripts", "fuzz.sh"))
	require.NoError(t, err)
	require.NotZero(t, st.Mode()&0o111, "scripts/fuzz.sh must be executable")
}

// makefileFuzzTargets is the Makefile's FUZZ_TARGETS list, in its order.
func makefileFuzzTargets(t *testing.T) []string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(RepoRoot(), "Makefile"))
	require.NoError(t, err)
	var listed []string
	in := false
	for _, line := range strings.Split(string(mk), "\n") {
		if strings.HasPrefix(line, "FUZZ_TARGETS") {
			in = true
			line = line[strings.Index(line, "=")+1:]
		}
		if !in {
			continue
		}
		for _, f := range strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), "\\")) {
			listed = append(listed, f)
		}
		if !strings.HasSuffix(strings.TrimSpace(line), "\\") {
			break
		}
	}
	return listed
}

// FUZZ_ONLY names targets exactly: FuzzRead is the trace reader's target
// alone (not every FuzzRead... prefix), a name two packages share needs
// its package, and a name that matches nothing is an error, not a run of
// nothing.
func TestFuzzOnlyMatchesExactly(t *testing.T) {
	targets := makefileFuzzTargets(t)
	sel := func(only string) (string, error) {
		cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "fuzz.sh"), append([]string{"-"}, targets...)...)
		cmd.Env = append(os.Environ(), "FUZZ_LIST=1", "FUZZ_ONLY="+only)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for only, want := range map[string]string{
		"FuzzRead":                               "./internal/parser/traceview:FuzzRead\n",
		"vllmserve:FuzzReadLog":                  "./internal/inputs/vllmserve:FuzzReadLog\n",
		"internal/inputs/expertload:FuzzReadLog": "./internal/inputs/expertload:FuzzReadLog\n",
		"FuzzReadDB FuzzRead":                    "./internal/parser/sqlitedb:FuzzReadDB\n./internal/parser/traceview:FuzzRead\n",
		"":                                       strings.Join(targets, "\n") + "\n",
	} {
		out, err := sel(only)
		require.NoError(t, err, "FUZZ_ONLY=%q: %s", only, out)
		require.Equal(t, want, out, "FUZZ_ONLY=%q", only)
	}
	for only, msg := range map[string]string{
		"FuzzReadLog":  "FUZZ_ONLY=FuzzReadLog is in 2 packages; name one: expertload:FuzzReadLog vllmserve:FuzzReadLog",
		"FuzzRea":      "FUZZ_ONLY=FuzzRea names no fuzz target",
		"ead:FuzzRead": "FUZZ_ONLY=ead:FuzzRead names no fuzz target",
	} {
		out, err := sel(only)
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "FUZZ_ONLY=%q: %s", only, out)
		require.Equal(t, 2, exit.ExitCode())
		require.Contains(t, out, msg)
	}
}
