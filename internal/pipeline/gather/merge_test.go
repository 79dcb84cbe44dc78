package gather

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
)

// Exports finds the export folders of several paths, a glob (the shell's
// or npuprof's) and a folder of exports, each once, in order; anything
// else among the paths is not a merge.
func TestExports(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, export bool) string {
		d := filepath.Join(root, rel)
		if export {
			require.NoError(t, os.MkdirAll(filepath.Join(d, parquetio.ManifestDir), 0o755))
		} else {
			require.NoError(t, os.MkdirAll(d, 0o755))
		}
		return d
	}
	a, b, c := mk("all/node0.pq", true), mk("all/node1.pq", true), mk("all/node2.pq", true)
	capture := mk("capture/rank0_ascend_pt", false)

	got, ok := Exports([]string{a, c})
	require.True(t, ok)
	require.Equal(t, []string{a, c}, got)

	got, ok = Exports([]string{filepath.Join(root, "all", "node*.pq"), b})
	require.True(t, ok)
	require.Equal(t, []string{a, b, c}, got, "a glob, each folder once")

	got, ok = Exports([]string{filepath.Join(root, "all")})
	require.True(t, ok)
	require.Equal(t, []string{a, b, c}, got, "a folder of exports")

	for _, paths := range [][]string{
		{filepath.Dir(capture)},                  // a capture
		{a, filepath.Dir(capture)},               // an export beside a capture
		{filepath.Join(root, "nothing*")},        // a glob of nothing
		{filepath.Join(root, "no", "such", "x")}, // no such path
	} {
		_, ok := Exports(paths)
		require.False(t, ok, "%v", paths)
	}
}
