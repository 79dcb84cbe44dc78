package parser

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// compressedSuffixes are the spellings of a compressed input file, tried
// after the plain name: users gzip or zstd a 5 GB trace_view.json to move
// it between hosts, and npuprof reads it without unpacking it to disk.
var compressedSuffixes = []string{".gz", ".zst"}

// findInput returns dir/name, or its .gz or .zst spelling, whichever exists
// first; "" when none does.
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

// openInput opens a file for reading, decompressing gzip or zstd content
// transparently. The format is recognised by its magic bytes, not by the
// file name, so a renamed file still works.
func openInput(path string) (io.ReadCloser, error) {
	return openCounted(path, nil)
}

// openCounted is openInput adding the bytes read from disk to n (when not
// nil).
func openCounted(path string, n *atomic.Int64) (io.ReadCloser, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		// a FIFO would block the open; a device might never end
		return nil, notRegularError(path, st.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var raw io.Reader = f
	if n != nil {
		raw = countedReader{f, n}
	}
	br := bufio.NewReaderSize(raw, 1<<16)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: corrupt gzip: %w", path, err)
		}
		return &stacked{Reader: gz, closers: []io.Closer{gz, f}}, nil
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: corrupt zstd: %w", path, err)
		}
		return &stacked{Reader: zr, closers: []io.Closer{zstdCloser{zr}, f}}, nil
	}
	return &stacked{Reader: br, closers: []io.Closer{f}}, nil
}

type stacked struct {
	io.Reader
	closers []io.Closer
}

func (s *stacked) Close() error {
	var first error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

type zstdCloser struct{ d *zstd.Decoder }

func (z zstdCloser) Close() error { z.d.Close(); return nil }

// openPlain opens path when it is a regular, non-empty file that is not
// compressed, for traceview.ReadFile (mapped, in parts); ok is false (and
// nothing is left open) otherwise.
func openPlain(path string) (f *os.File, size int64, ok bool) {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
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
	var magic [4]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 4 && (bytes.HasPrefix(magic[:], []byte{0x1f, 0x8b}) || bytes.HasPrefix(magic[:], []byte{0x28, 0xb5, 0x2f, 0xfd})) {
		f.Close()
		return nil, 0, false
	}
	return f, st.Size(), true
}
