// Package infile is the one way npuprof opens a file it reads: a profile
// file, a file beside the profile (expert loads, the server log) or a file
// a flag names (--deploy, --rules, --baseline, --vllm-log, ...).
//
// The rule, for every such file:
//   - only a regular file is opened: a named pipe (FIFO), a device or a
//     socket is refused with its path and what it is, before anything is
//     read (a FIFO would wait for a writer, /dev/zero never ends);
//   - a file found inside a folder (Opts.Root) is resolved through its
//     symbolic links and refused when it leads outside that folder; nothing
//     of a refused file is read, so nothing of it is ever quoted;
//   - a file of a kind with a size limit (Kind.Max) is refused when it is
//     larger on disk, and reading stops with an error past that many bytes
//     once decompressed;
//   - gzip, xz and zstd content (told by its magic bytes, not its name) is
//     decompressed on the fly, and its trailer is checked: the gzip CRC-32
//     and size of every member, the xz check and index of every stream, the
//     zstd checksum of every frame (pzstd's multi-frame files included).
//     A reader may stop before the end of the file; Close then reads the
//     rest through the decompressor, so a damaged trailer is found all the
//     same: Close returns it.
package infile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/klauspost/compress/zstd"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/ulikunitz/xz"
)

// Kind is what a file is read as: its name in messages and its size limit.
type Kind struct {
	// Name says what the file is, in messages ("deployment script").
	Name string
	// Max is the largest file, in bytes, on disk and once decompressed;
	// 0 for no limit (a file read as a stream, in bounded memory).
	Max int64
}

// The kinds of file npuprof reads, with their limits. A file read whole
// into memory has a limit; a file read as a stream (a trace, a CSV, a log
// read line by line) has none.
var (
	// a deployment script is a few KiB; parsing one as bash costs about
	// 200 times its size at worst (a command substitution a line), so
	// 256 KiB keeps the peak under 100 MiB
	Deploy = Kind{"deployment script", 256 << 10}
	// a rule file is a few KiB; a 4 MiB one (40,000 rules) peaked at
	// 251 MB, a 1 MiB one at 79 MB
	Rules         = Kind{"rule file", 1 << 20}
	RuleCases     = Kind{"rule case file", 1 << 20}
	Document      = Kind{"npuprof document", 4 << 30} // a json-full document of thousands of ranks holds their detail
	ExpertLoads   = Kind{"expert-load file", 256 << 20}
	BenchResult   = Kind{"vLLM bench result", 256 << 20}
	ServerLog     = Kind{"vLLM server log", 0}
	ProfilerInfo  = Kind{"profiler_info.json", 16 << 20}
	Metadata      = Kind{"profiler_metadata.json", 64 << 20}
	Communication = Kind{"communication.json", 256 << 20}
	SourceFile    = Kind{"source file", 16 << 20}
	Profile       = Kind{"profile file", 0}
)

// Opts are where a file was found and what counts its bytes.
type Opts struct {
	// Root is the folder the file was found in (the profile, a rank
	// folder, the capture folder); "" for a file named on the command line,
	// whose links are followed wherever they lead. A file under Root that
	// resolves outside it is refused. A Root that is a file stands for its
	// folder.
	Root string
	// Count, when not nil, is added the bytes read from disk.
	Count *atomic.Int64
}

// Check applies the rule to path without opening it: nil when Open would
// open it (a missing file is reported as the *fs.PathError of os.Stat).
func Check(path string, o Opts) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return errkind.Errorf(errkind.Usage, "%s: permission denied", path)
		}
		return err
	}
	if st.IsDir() {
		return &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	}
	if !st.Mode().IsRegular() {
		return NotRegular(path, st.Mode())
	}
	return checkInside(path, o.Root)
}

// NotRegular is the refusal of path, of mode m (exit 2).
func NotRegular(path string, m fs.FileMode) error {
	return errkind.Errorf(errkind.Usage, "%s is %s, not a regular file: npuprof reads only regular files (it would wait for a writer, or read without end)", path, What(m))
}

// What names what a file that is neither regular nor a folder is.
func What(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a folder"
	}
	return "not a regular file"
}

// Outside reports whether path, resolved through its symbolic links, leads
// outside root (resolved too); false when root is "" or either cannot be
// resolved (then opening it says why).
func Outside(path, root string) bool {
	if root == "" {
		return false
	}
	if st, err := os.Stat(root); err == nil && !st.IsDir() {
		root = filepath.Dir(root)
	}
	realRoot, err := resolve(root)
	if err != nil {
		return false
	}
	real, err := resolve(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realRoot, real)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve is path, absolute, through its symbolic links.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func checkInside(path, root string) error {
	if !Outside(path, root) {
		return nil
	}
	return errkind.Errorf(errkind.Usage, "%s is a symbolic link that leads outside %s: not read (npuprof reads only what the profile holds)", path, root)
}

// File is an open input: its content, decompressed, up to its kind's limit.
type File struct {
	path  string
	kind  Kind
	f     *os.File
	r     io.Reader // what Read reads: the decompressor, or the buffered file
	dec   io.Reader // the decompressor, nil for a plain file
	close func()    // releases the decompressor
	comp  string
	n     int64 // bytes handed out
	err   error // the first decompression error
	eof   bool
}

// Open opens path under the rule (see the package comment).
func Open(path string, k Kind, o Opts) (*File, error) {
	if err := Check(path, o); err != nil {
		return nil, err
	}
	// O_NONBLOCK: were path swapped for a FIFO since Check, opening it
	// must not wait for a writer; the file is looked at again once open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, errkind.Errorf(errkind.Usage, "%s: permission denied", path)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, NotRegular(path, st.Mode())
	}
	if k.Max > 0 && st.Size() > k.Max {
		f.Close()
		return nil, tooLarge(path, k, fmt.Sprintf("is %s", Size(st.Size())))
	}
	var raw io.Reader = f
	if o.Count != nil {
		raw = counted{f, o.Count}
	}
	br := bufio.NewReaderSize(raw, 1<<16)
	in := &File{path: path, kind: k, f: f, r: br}
	magic, _ := br.Peek(6)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, errkind.Errorf(errkind.Input, "%s: not a valid gzip file: %v", path, err)
		}
		in.dec, in.comp, in.close = gz, "gzip", func() { gz.Close() }
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		xr, err := xz.NewReader(br)
		if err != nil {
			f.Close()
			return nil, errkind.Errorf(errkind.Input, "%s: not a valid xz file: %v", path, err)
		}
		in.dec, in.comp = xr, "xz"
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}) || skippableZstd(magic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			f.Close()
			return nil, errkind.Errorf(errkind.Input, "%s: not a valid zstd file: %v", path, err)
		}
		in.dec, in.comp, in.close = zr, "zstd", zr.Close
	}
	if in.dec != nil {
		in.r = in.dec
	}
	return in, nil
}

// skippableZstd: a zstd skippable frame (pzstd starts its files with one).
func skippableZstd(m []byte) bool {
	return len(m) >= 4 && m[0]&0xf0 == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18
}

// Path is the file's path as given.
func (f *File) Path() string { return f.path }

// Compression is "gzip", "xz", "zstd" or "" (plain).
func (f *File) Compression() string { return f.comp }

// Read reads the content, decompressed; past the kind's limit it returns
// an error saying so.
func (f *File) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.kind.Max > 0 && f.n+int64(len(p)) > f.kind.Max+1 {
		p = p[:f.kind.Max+1-f.n]
	}
	n, err := f.r.Read(p)
	f.n += int64(n)
	if f.kind.Max > 0 && f.n > f.kind.Max {
		f.err = tooLarge(f.path, f.kind, "holds more than that once decompressed")
		return n - int(f.n-f.kind.Max), f.err
	}
	switch {
	case err == io.EOF:
		f.eof = true
	case err != nil && f.dec != nil:
		f.err = f.damaged(err)
		return n, f.err
	}
	return n, err
}

// damaged names a decompression error as a damaged file.
func (f *File) damaged(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errkind.Errorf(errkind.Input, "%s: the %s content is cut short (unexpected end of file)", f.path, f.comp)
	}
	return errkind.Errorf(errkind.Input, "%s: the %s content is damaged (%v): its check (CRC, size) does not match what was read", f.path, f.comp, err)
}

// Close closes the file. For compressed content it first reads what the
// reader left unread, so that every trailer is checked, and returns the
// first decompression error (a CRC or size that does not match, content
// cut short), even one a Read already returned.
func (f *File) Close() error {
	if f.dec != nil && f.err == nil && !f.eof {
		_, err := io.Copy(io.Discard, f.dec)
		if err != nil {
			f.err = f.damaged(err)
		}
	}
	if f.close != nil {
		f.close()
	}
	cerr := f.f.Close()
	if f.err != nil && f.dec != nil {
		return f.err
	}
	return cerr
}

// Err is the decompression problem met so far (nil when none): a reader
// that stopped before the end learns of a damaged trailer from Close.
func (f *File) Err() error { return f.err }

// ReadFile reads path whole under the rule.
func ReadFile(path string, k Kind, o Opts) ([]byte, error) {
	f, err := Open(path, k, o)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// TooLarge reports whether err is a refusal by size.
func TooLarge(err error) bool {
	var t *tooLargeError
	return errors.As(err, &t)
}

type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }

func tooLarge(path string, k Kind, what string) error {
	return errkind.Wrap(errkind.Usage, &tooLargeError{fmt.Sprintf("%s %s, over the %s limit for a %s: not read", path, what, Size(k.Max), k.Name)})
}

// Size writes n bytes in the largest binary unit that keeps it whole
// enough: "256 MiB", "1.5 KiB", "12 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return trimUnit(float64(n)/(1<<30), "GiB")
	case n >= 1<<20:
		return trimUnit(float64(n)/(1<<20), "MiB")
	case n >= 1<<10:
		return trimUnit(float64(n)/(1<<10), "KiB")
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimUnit(v float64, unit string) string {
	s := fmt.Sprintf("%.1f", v)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + unit
}

type counted struct {
	r io.Reader
	n *atomic.Int64
}

func (c counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
