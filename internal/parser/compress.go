package parser

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/infile"
)

// compressedSuffixes are the spellings of a compressed input file, tried
// after the plain name: users gzip, xz or zstd a 5 GB trace_view.json to
// move it between hosts, and npuprof reads it without unpacking it to disk.
var compressedSuffixes = []string{".gz", ".zst", ".xz"}

// findInput returns dir/name, or its .gz, .zst or .xz spelling, whichever
// exists first; "" when none does.
func findInput(dir, name string) string {
	p := filepath.Join(dir, name)
	if exists(p) {
		return p
	}
	for _, s := range compressedSuffixes {
		if exists(p + s) {
			return p + s
		}
	}
	return ""
}

// openInput opens a file for reading under the rule of internal/infile,
// decompressing gzip, xz or zstd content transparently (told by its magic
// bytes, not by the file name, so a renamed file still works).
func openInput(path string) (*infile.File, error) {
	return infile.Open(path, infile.Profile, infile.Opts{})
}

// openCounted is openInput for a file of the rank folder root (a link
// leading outside it is refused; "" for the file the user named), adding
// the bytes read from disk to n (when not nil). Its Close reports a
// damaged compressed file (CRC, size, checksum).
func openCounted(path, root string, n *atomic.Int64) (*infile.File, error) {
	return infile.Open(path, infile.Profile, infile.Opts{Root: root, Count: n})
}

// trimCompressed is name without a compressed file's suffix.
func trimCompressed(name string) string {
	for _, s := range compressedSuffixes {
		if strings.HasSuffix(name, s) {
			return strings.TrimSuffix(name, s)
		}
	}
	return name
}

// compressedMagic: the content starts as gzip, xz or zstd does.
func compressedMagic(m []byte) bool {
	return bytes.HasPrefix(m, []byte{0x1f, 0x8b}) || bytes.HasPrefix(m, []byte{0x28, 0xb5, 0x2f, 0xfd}) ||
		bytes.HasPrefix(m, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}) ||
		(len(m) >= 4 && m[0]&0xf0 == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18)
}

// openPlain opens path when it is a regular, non-empty file that is not
// compressed (and, under root, does not lead outside it), for
// traceview.ReadFile (mapped, in parts); ok is false (and nothing is left
// open) otherwise.
func openPlain(path, root string) (f *os.File, size int64, ok bool) {
	if infile.Check(path, infile.Opts{Root: root}) != nil {
		return nil, 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		f.Close()
		return nil, 0, false
	}
	var magic [6]byte
	if n, _ := f.ReadAt(magic[:], 0); compressedMagic(magic[:n]) {
		f.Close()
		return nil, 0, false
	}
	return f, st.Size(), true
}

var _ io.Reader = (*infile.File)(nil)
