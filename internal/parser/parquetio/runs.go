package parquetio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// An export is written in runs: each `npuprof export` is one run, named by
// a random id. Each rank's partitions are written under a staging folder,
// then moved into place; the rank's run stamp (ManifestDir/runs/rank-N,
// the run id) is removed before its partitions move and written after,
// and the run's manifest (which names the run) is written last, each file
// through a temporary name and a rename. A reader then knows, for every
// rank, whether it was written whole and by which run: CheckRuns refuses
// an export in which a rank was cut short (no stamp) or comes from a run
// whose manifest was never written (the run was stopped), instead of
// reading a silent mix of two captures.

// RunsDir holds the ranks' run stamps.
const RunsDir = "runs"

// NewRunID is a fresh run id.
func NewRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(int64(os.Getpid()), 16)
	}
	return hex.EncodeToString(b[:])
}

func stampPath(outDir string, rank int) string {
	return filepath.Join(outDir, ManifestDir, RunsDir, "rank-"+strconv.Itoa(rank))
}

// ClearStamp removes rank's run stamp: its partitions are about to change.
func ClearStamp(outDir string, rank int) error {
	if err := os.Remove(stampPath(outDir, rank)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Stamp records that rank's partitions were all written by run.
func Stamp(outDir string, rank int, run string) error {
	p := stampPath(outDir, rank)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return writeAtomic(p, []byte(run+"\n"))
}

// writeAtomic writes data to p through a temporary file in its folder,
// renamed into place.
func writeAtomic(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".npuprof-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// CheckRuns refuses an export whose ranks were not all written whole by a
// run that finished: a rank without its stamp (its export stopped while
// moving it), or stamped by a run whose manifest is missing (that export
// stopped before it ended). An export written before run stamps (no
// ManifestDir/runs) is read as it is.
func CheckRuns(dir string, ranks []int) error {
	if st, err := os.Stat(filepath.Join(dir, ManifestDir, RunsDir)); err != nil || !st.IsDir() {
		return nil
	}
	ms, err := manifests(dir)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, m := range ms {
		if m.Run != "" {
			done[m.Run] = true
		}
	}
	var cut, orphan []string
	for _, r := range ranks {
		b, err := os.ReadFile(stampPath(dir, r))
		run := strings.TrimSpace(string(b))
		switch {
		case err != nil || run == "":
			cut = append(cut, strconv.Itoa(r))
		case !done[run]:
			orphan = append(orphan, fmt.Sprintf("%d (run %s)", r, run))
		}
	}
	var why []string
	if len(cut) > 0 {
		why = append(why, fmt.Sprintf("rank(s) %s were being written when their export stopped", strings.Join(cut, ", ")))
	}
	if len(orphan) > 0 {
		why = append(why, fmt.Sprintf("rank(s) %s come from an export run that never finished (it has no manifest)", strings.Join(orphan, ", ")))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%s: a mix of export runs, not read: %s; export the capture again into this folder (or a new one)", dir, strings.Join(why, "; "))
}

// Lock takes outDir's export lock (ManifestDir/lock, holding the pid):
// one export writes a folder at a time. A lock whose process is gone is
// taken over. The returned function releases it.
func Lock(outDir string) (release func(), err error) {
	dir := filepath.Join(outDir, ManifestDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "lock")
	for try := 0; try < 2; try++ {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(p) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		b, _ := os.ReadFile(p)
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if perr != nil || pid <= 0 || alive(pid) {
			// a live owner (or one writing its pid this very moment)
			return nil, &LockedError{Dir: outDir, Pid: max(pid, 0)}
		}
		// its export is gone (killed): take the lock over
		os.Remove(p)
	}
	return nil, &LockedError{Dir: outDir}
}

// alive: a process of that pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// LockedError: another export is writing the folder.
type LockedError struct {
	Dir string
	Pid int
}

func (e *LockedError) Error() string {
	if e.Pid > 0 {
		return fmt.Sprintf("%s is locked: another npuprof export (pid %d) is writing it; run again when it has ended", e.Dir, e.Pid)
	}
	return fmt.Sprintf("%s is locked: another npuprof export is writing it; run again when it has ended", e.Dir)
}

// errkindOf: err is a refusal by the rule of internal/infile (not a
// regular file, a link leading out), not a missing file.
func errkindOf(err error) bool {
	var pe *fs.PathError
	return !errors.As(err, &pe)
}
