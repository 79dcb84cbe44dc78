package parser

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Only regular files are read (internal/infile holds the rule): a named
// pipe (FIFO) opened for reading blocks until something writes to it, a
// device may never end. npuprof looks at what a path is (stat, which opens
// nothing) before it opens it, and refuses anything but a regular file or
// a folder.

// notRegularError is the refusal of path, which is of mode m.
func notRegularError(path string, m fs.FileMode) error { return infile.NotRegular(path, m) }

// checkRegular returns a usage error when path (followed if it is a
// symlink) exists and is neither a regular file nor a folder, or cannot be
// looked at for lack of permission; nil otherwise (a missing file is
// reported by whoever needs it).
func checkRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return permissionError(path)
		}
		return nil
	}
	if st.Mode().IsRegular() || st.IsDir() {
		return nil
	}
	return notRegularError(path, st.Mode())
}

// permissionError names a permission problem as such.
func permissionError(path string) error {
	return errkind.Errorf(errkind.Usage, "%s: permission denied", path)
}

// profileSuffixes are the endings of the files npuprof reads from a rank
// folder; a file so named that is not regular is refused.
var profileSuffixes = []string{".json", ".csv", ".db", ".gz", ".xz", ".zst", ".parquet", ".log"}

// checkDir refuses a folder that cannot be listed for lack of permission,
// and any file in it named like a profile file that is not regular.
func checkDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return errkind.Errorf(errkind.Usage, "%s: permission denied: the folder cannot be listed", dir)
		}
		return nil
	}
	for _, e := range ents {
		t := e.Type()
		if t.IsRegular() || t.IsDir() || !profileName(e.Name()) {
			continue
		}
		if err := checkRegular(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func profileName(name string) bool {
	for _, s := range profileSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// checkSources refuses sources whose files are not regular or whose
// folders cannot be read, before anything is opened.
func checkSources(srcs []Source) error {
	for _, s := range srcs {
		for _, p := range []string{s.TraceFile, s.DB} {
			if p == "" {
				continue
			}
			if err := checkRegular(p); err != nil {
				return err
			}
		}
		dirs := []string{s.Root, s.Output, s.Prof}
		if s.Prof != "" {
			// msprof's text export, and its analyze/communication*.json
			dirs = append(dirs, filepath.Join(s.Prof, msprofOutput), filepath.Join(s.Prof, "analyze"))
		}
		for _, d := range dirs {
			if d == "" || d == s.TraceFile || d == s.DB {
				continue
			}
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				continue
			}
			if err := checkDir(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// readRegular reads a small file whole under the rule of internal/infile:
// anything but a regular file is an error, and is never opened.
func readRegular(path string) ([]byte, error) {
	return infile.ReadFile(path, infile.ProfilerInfo, infile.Opts{})
}

// rootOf is the folder a file of r must stay inside once its links are
// resolved: the rank's folder, or none for the file the user named.
func rootOf(r *model.Rank, path string) string {
	if path == r.Path {
		return ""
	}
	return r.Path
}

// damagedFile records that path, read in full or in part, failed its
// compression check (a gzip CRC or size, an xz or zstd checksum) when it
// was closed: what was read from it may be wrong, so every metric from it
// is partial, and so is the rank.
func damagedFile(r *model.Rank, path string, err error) {
	r.Warn(path, "%v", err)
	r.Have.PartialFiles = append(r.Have.PartialFiles, path)
	r.Partial = true
	if r.PartialReason == "" {
		r.PartialReason = err.Error()
	}
}

// mergePartial carries what a file read on the side (into from) made
// partial over to r.
func mergePartial(r, from *model.Rank) {
	r.Have.PartialFiles = append(r.Have.PartialFiles, from.Have.PartialFiles...)
	if from.Partial {
		r.Partial = true
		if r.PartialReason == "" {
			r.PartialReason = from.PartialReason
		}
	}
}
