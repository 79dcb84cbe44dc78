package parser

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// Source.BytesRead counts what the readers take from the ranks' files:
// at least the whole trace of every rank, at most every file of the
// capture, and nothing stays registered once the ranks are read.
func TestBytesReadCounted(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 2, 2, 2
	dir, _ := testutil.Generate(t, sc)
	var traces, all int64
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		require.NoError(t, err)
		all += st.Size()
		if d.Name() == "trace_view.json" {
			traces += st.Size()
		}
		return nil
	}))
	require.Positive(t, traces)

	var n atomic.Int64
	require.Len(t, readAll(t, dir, &n), 2)
	require.GreaterOrEqual(t, n.Load(), traces)
	require.LessOrEqual(t, n.Load(), all)
	left := 0
	rankCounters.Range(func(any, any) bool { left++; return true })
	require.Zero(t, left, "counters are dropped with their rank")
}
