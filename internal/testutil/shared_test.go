package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shared formats folder is found from a clone (../shared/formats) and
// from a git worktree kept in a folder of its own (../../shared/formats
// from /work/wt/NAME); absent, the reason says where it looked.
func TestFindUpFromCloneAndWorktree(t *testing.T) {
	root := t.TempDir()
	xsd := filepath.Join(root, "shared", "formats", "junit-10.xsd")
	require.NoError(t, os.MkdirAll(filepath.Dir(xsd), 0o755))
	require.NoError(t, os.WriteFile(xsd, []byte("<xs:schema/>"), 0o644))
	rel := filepath.Join("shared", "formats", "junit-10.xsd")
	for _, repo := range []string{filepath.Join(root, "main"), filepath.Join(root, "wt", "qa")} {
		require.NoError(t, os.MkdirAll(repo, 0o755))
		p, looked := findUp(repo, rel)
		assert.Equal(t, xsd, p, repo)
		assert.Empty(t, looked)
	}
	p, looked := findUp(filepath.Join(root, "wt", "qa"), filepath.Join("shared", "formats", "sarif-schema-2.1.0.json"))
	assert.Empty(t, p)
	assert.Equal(t, filepath.Join("shared", "formats", "sarif-schema-2.1.0.json")+" in "+filepath.Join(root, "wt", "qa")+" or any folder above it", looked)
}

// $NPUPROF_SAMPLES's parent is the shared formats folder: a schema beside
// the samples is found there first.
func TestSharedFileBesideSamples(t *testing.T) {
	formats := filepath.Join(t.TempDir(), "formats")
	require.NoError(t, os.MkdirAll(filepath.Join(formats, "samples"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(formats, "only-here.xsd"), nil, 0o644))
	t.Setenv("NPUPROF_SAMPLES", filepath.Join(formats, "samples"))
	p, looked := SharedFile("only-here.xsd")
	assert.Equal(t, filepath.Join(formats, "only-here.xsd"), p)
	assert.Empty(t, looked)
	p, looked = SharedFile("nowhere.xsd")
	assert.Empty(t, p)
	assert.Contains(t, looked, filepath.Join(formats, "nowhere.xsd")+" (beside $NPUPROF_SAMPLES)")
	d, why := FindSamples()
	assert.Equal(t, filepath.Join(formats, "samples"), d)
	assert.Empty(t, why)
}

// A check left out says why in one line, in the test's log and in the
// skip log, and the test goes on.
func TestSkippedLogsOneLine(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(SkipLogEnv, log)
	Skipped(t, "the X validation", "no x.xsd:\nlooked in a, b")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "the X validation: no x.xsd: looked in a, b\n", string(b))
	assert.Equal(t, 1, strings.Count(string(b), "\n"))
}
