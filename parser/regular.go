package parser

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser/model"
)

// Only regular files are read. A named pipe (FIFO) opened for reading
// blocks until something writes to it, a device may never end: npuprof
// looks at what a path is (stat, which opens nothing) before it opens it,
// and refuses anything but a regular file or a folder.

// fileKind names what a file that is neither regular nor a folder is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// notRegularError is the refusal of path, which is of mode m.
func notRegularError(path string, m fs.FileMode) error {
	return errkind.Errorf(errkind.Usage, "%s is %s, not a regular file: npuprof reads only regular files and folders (it would wait for a writer, or read without end)", path, fileKind(m))
}

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
var profileSuffixes = []string{".json", ".csv", ".db", ".gz", ".zst", ".parquet"}

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
			dirs = append(dirs, filepath.Join(s.Prof, msprofOutput))
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

// readRegular is os.ReadFile for a file that must be regular: anything
// else is an error, and is never opened.
func readRegular(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegularError(path, st.Mode())
	}
	return os.ReadFile(path)
}

// linkNote warns when path is a symbolic link to a file outside the rank's
// folder: it is followed (gathering a profile by links is common), and the
// warning says where it points.
func linkNote(r *model.Rank, path string) {
	lst, err := os.Lstat(path)
	if err != nil || lst.Mode()&fs.ModeSymlink == 0 {
		return
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return
	}
	root, err := filepath.EvalSymlinks(r.Path)
	if err != nil {
		return
	}
	if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return
	}
	r.Warn(path, "is a symbolic link to %s, outside %s; read as the file it is named for", real, r.Path)
}
