package pipeline

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/stretchr/testify/require"
)

func fourRanks(t *testing.T, steps int) string {
	s := testutil.Tiny()
	s.Ranks, s.Steps = 4, steps
	dir, _ := testutil.Generate(t, s)
	return dir
}

// An export stopped partway into a reused folder (ranks 0-2 of the new
// capture moved, rank 3 still the old one's, no manifest of the new run)
// is refused on reading, naming the ranks, never read as a silent mix.
func TestExportCutShortIsRefused(t *testing.T) {
	a, b := fourRanks(t, 2), fourRanks(t, 3)
	out := t.TempDir()
	_, err := Export(context.Background(), a, out, ExportOptions{Workers: 1})
	require.NoError(t, err)
	_, err = Analyze(context.Background(), out, Options{Workers: 1})
	require.NoError(t, err, "a whole export reads back")

	killed := errors.New("killed")
	placeHook = func(rank int) error {
		if rank == 2 {
			return killed
		}
		return nil
	}
	defer func() { placeHook = nil }()
	_, err = Export(context.Background(), b, out, ExportOptions{Workers: 1})
	require.ErrorIs(t, err, killed)
	placeHook = nil

	_, err = Analyze(context.Background(), out, Options{Workers: 1})
	require.Error(t, err)
	require.Contains(t, err.Error(), "a mix of export runs, not read")
	require.Contains(t, err.Error(), "rank(s) 2 were being written when their export stopped")
	require.Contains(t, err.Error(), "rank(s) 0 (run ")
	require.NotContains(t, err.Error(), "3 (run", "rank 3 is still the first run's, which finished")
	entries, _ := filepath.Glob(filepath.Join(out, parquetio.ManifestDir, "staging-*"))
	require.Empty(t, entries, "no staging folder is left")

	// exporting again makes it whole
	_, err = Export(context.Background(), b, out, ExportOptions{Workers: 1})
	require.NoError(t, err)
	_, err = Analyze(context.Background(), out, Options{Workers: 1})
	require.NoError(t, err)
}

// Concurrent exports of one capture into one folder: each succeeds or
// says the folder is locked; what is left reads back whole.
func TestConcurrentExportsLockOrSucceed(t *testing.T) {
	a := fourRanks(t, 2)
	out := t.TempDir()
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = Export(context.Background(), a, out, ExportOptions{Workers: 1})
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			var le *parquetio.LockedError
			if err == nil {
				ok++
				continue
			}
			require.True(t, errors.As(err, &le), "%v", err)
			require.Contains(t, err.Error(), "is locked: another npuprof export")
		}
		require.GreaterOrEqual(t, ok, 1)
		res, err := Analyze(context.Background(), out, Options{Workers: 1})
		require.NoError(t, err)
		require.Len(t, res.Ranks, 4)
	}
	_, err := os.Stat(filepath.Join(out, parquetio.ManifestDir, "lock"))
	require.True(t, os.IsNotExist(err), "the lock is released")
}

// A stale lock (its process gone) is taken over.
func TestStaleExportLockTakenOver(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, parquetio.ManifestDir), 0o755))
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.NoError(t, os.WriteFile(filepath.Join(out, parquetio.ManifestDir, "lock"), []byte(itoa(cmd.Process.Pid)+"\n"), 0o644))
	_, err := Export(context.Background(), fourRanks(t, 2), out, ExportOptions{Workers: 1})
	require.NoError(t, err)
}

func itoa(n int) string { return strconv.Itoa(n) }

// SIGTERM and SIGINT during an export remove its staging folder and lock.
func TestExportSignalCleansUp(t *testing.T) {
	if os.Getenv("NPUPROF_EXPORT_SIGNAL_CHILD") != "" {
		in, out := os.Getenv("NPUPROF_EXPORT_IN"), os.Getenv("NPUPROF_EXPORT_OUT")
		_, _ = Export(context.Background(), in, out, ExportOptions{Workers: 1, Progress: func(done, total int, path string) {
			time.Sleep(time.Minute) // stopped by the signal
		}})
		os.Exit(0)
	}
	in := fourRanks(t, 2)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		out := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestExportSignalCleansUp$")
		cmd.Env = append(os.Environ(), "NPUPROF_EXPORT_SIGNAL_CHILD=1", "NPUPROF_EXPORT_IN="+in, "NPUPROF_EXPORT_OUT="+out)
		require.NoError(t, cmd.Start())
		deadline := time.Now().Add(20 * time.Second)
		for {
			m, _ := filepath.Glob(filepath.Join(out, parquetio.ManifestDir, "staging-*", "*"))
			if len(m) > 0 {
				break
			}
			require.True(t, time.Now().Before(deadline), "the child export never staged a rank")
			time.Sleep(20 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(sig))
		err := cmd.Wait()
		require.Error(t, err, "ended by the signal")
		left, _ := filepath.Glob(filepath.Join(out, parquetio.ManifestDir, "*"))
		require.Empty(t, left, "%v left: %v", sig, left)
	}
}
