package testutil

import (
	"io/fs"
	"os"
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

	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
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
	sort.Strings(listed)
	require.Equal(t, found, listed, "Makefile FUZZ_TARGETS must list every Fuzz function as ./pkg/dir:FuzzName")

	st, err := os.Stat(filepath.Join(root, "scripts", "fuzz.sh"))
	require.NoError(t, err)
	require.NotZero(t, st.Mode()&0o111, "scripts/fuzz.sh must be executable")
}
