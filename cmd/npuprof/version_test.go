package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/buildinfo"
	"github.com/npuprof/npuprof/parser/parquetio"
)

// `npuprof --version` and `npuprof version` print the same line: the
// module version and the revision from the build information.
func TestVersionFlagAndCommand(t *testing.T) {
	code, flagOut, errs := run("--version")
	require.Equal(t, ExitOK, code, errs)
	code, cmdOut, errs := run("version")
	require.Equal(t, ExitOK, code, errs)
	require.Equal(t, cmdOut, flagOut)
	require.Equal(t, buildinfo.Get().String()+"\n", cmdOut)
	require.Regexp(t, `^npuprof \S+ \(revision \S+\)\n$`, cmdOut)
}

// `make build` gives a binary that names the checkout's revision, whether
// Go stamps it (a clone) or the Makefile does (a git worktree).
func TestMakeBuildNamesTheRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds npuprof")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to stamp", err)
	}
	bin := t.TempDir()
	out, err := exec.Command("make", "-C", root, "build", "BIN="+bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	got, err := exec.Command(filepath.Join(bin, "npuprof"), "--version").Output()
	require.NoError(t, err)
	re := regexp.MustCompile(`^npuprof (\S+) \(revision ([0-9a-f]{40})(-modified)?\)\n$`)
	m := re.FindStringSubmatch(string(got))
	require.NotNil(t, m, "npuprof --version printed %q", got)
	require.Equal(t, strings.TrimSpace(string(head)), m[2])
	require.NotEqual(t, buildinfo.Unknown, m[1])
}

// An export names the npuprof that wrote it in every file's metadata and
// in its manifest.
func TestExportNamesTheTool(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "traces", "ep-fc1-cumsum")
	out := filepath.Join(t.TempDir(), "pq")
	code, _, errs := run("export", in, "-o", out)
	require.Equal(t, ExitOK, code, errs)
	f, err := os.Open(parquetio.PartFile(out, parquetio.Tables[0], 0))
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	pf, err := parquet.OpenFile(f, st.Size())
	require.NoError(t, err)
	v, ok := pf.Lookup("npuprof.version")
	require.True(t, ok)
	require.Equal(t, buildinfo.Get().Version, v)
	r, ok := pf.Lookup("npuprof.revision")
	require.True(t, ok)
	require.Equal(t, buildinfo.Get().Revision, r)

	b, err := os.ReadFile(filepath.Join(out, parquetio.ManifestDir, "export-0-7.json"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.Equal(t, buildinfo.Get().Version, m["npuprof_version"])
	require.Equal(t, buildinfo.Get().Revision, m["npuprof_revision"])
}
