package pipeline

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
)

// TuneGCFor lowers GOGC only for an npuprof Parquet export, and restores
// the previous setting.
func TestTuneGCForReadBack(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: TuneGCFor leaves the collector alone")
	}
	prev := debug.SetGCPercent(77)
	defer debug.SetGCPercent(prev)
	restore := TuneGCFor(t.TempDir()) // not an export
	require.Equal(t, 77, debug.SetGCPercent(77))
	restore()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, parquetio.ManifestDir), 0o755))
	restore = TuneGCFor(dir)
	require.Equal(t, readBackGCPercent, debug.SetGCPercent(readBackGCPercent))
	restore()
	require.Equal(t, 77, debug.SetGCPercent(77))
}

// TuneGCAfterLoad lowers GOGC for what follows the load and restores the
// previous setting.
func TestTuneGCAfterLoad(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: TuneGCAfterLoad leaves the collector alone")
	}
	prev := debug.SetGCPercent(77)
	defer debug.SetGCPercent(prev)
	restore := TuneGCAfterLoad()
	require.Equal(t, afterLoadGCPercent, debug.SetGCPercent(afterLoadGCPercent))
	restore()
	require.Equal(t, 77, debug.SetGCPercent(77))
}
