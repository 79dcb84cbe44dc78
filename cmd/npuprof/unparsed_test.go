package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A *_ascend_pt folder torch_npu collected but never parsed (FRAMEWORK/
// and raw PROF_*/device_*/data only) is a usage error that names the
// offline-analysis call with the folder's path, and npuprof runs nothing.
func TestUnparsedAscendPT(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "node1_3466812_20250109081622431_ascend_pt")
	for _, d := range []string{"FRAMEWORK", "PROF_000001_20250109081622431_ABCDEFGHIJKLMNOP/device_0/data", "PROF_000001_20250109081622431_ABCDEFGHIJKLMNOP/host/data"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, f := range []string{"FRAMEWORK/torch.op_range", "PROF_000001_20250109081622431_ABCDEFGHIJKLMNOP/device_0/data/ts_track.data.0.slice_0"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte{1, 2, 3}, 0o644))
	}
	before := listTree(t, dir)
	for _, path := range []string{dir, root} {
		code, _, errs := run("analyze", path, "-q")
		require.Equal(t, ExitUsage, code, errs)
		require.Contains(t, errs, "torch_npu collected this profile but never parsed it")
		require.Contains(t, errs, `python3 -c 'from torch_npu.profiler.profiler import analyse; analyse(profiler_path="`+dir+`")'`)
		require.Contains(t, errs, "npuprof never runs it itself")
	}
	require.Equal(t, before, listTree(t, dir), "the input is never written")
	// relative paths are filled in absolute
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(root))
	defer os.Chdir(wd)
	code, _, errs := run("analyze", filepath.Base(dir), "-q")
	require.Equal(t, ExitUsage, code, errs)
	abs, _ := filepath.EvalSymlinks(dir)
	require.True(t, strings.Contains(errs, `profiler_path="`+dir+`"`) || strings.Contains(errs, `profiler_path="`+abs+`"`), errs)
}

func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		out = append(out, p)
		return err
	}))
	return out
}
