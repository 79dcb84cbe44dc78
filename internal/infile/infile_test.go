package infile

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// within fails the test when fn takes more than a second (a FIFO opened
// for reading would block forever).
func within(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("did not end within a second")
	}
}

func TestRefusesFIFODeviceAndSocketBeforeReading(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "serve.sh")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	zero := filepath.Join(dir, "link-to-zero.sh")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	for _, p := range []string{fifo, zero, "/dev/zero", "/dev/null"} {
		within(t, func() {
			_, err := ReadFile(p, Deploy, Opts{})
			require.Error(t, err, p)
			require.Contains(t, err.Error(), p)
			require.Contains(t, err.Error(), "not a regular file")
			require.Equal(t, errkind.Usage, errkind.Of(err), "exit 2")
		})
	}
	_, err := ReadFile(fifo, Deploy, Opts{})
	require.Contains(t, err.Error(), "named pipe (FIFO)")
	_, err = ReadFile(zero, Deploy, Opts{})
	require.Contains(t, err.Error(), "character device")
}

func TestSymlinkLeavingTheRootIsRefusedUnread(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "secret.csv")
	require.NoError(t, os.WriteFile(out, []byte("root:x:0:0:SECRETFIELD\n"), 0o644))
	link := filepath.Join(root, "load.csv")
	require.NoError(t, os.Symlink(out, link))
	_, err := ReadFile(link, ExpertLoads, Opts{Root: root})
	require.Error(t, err)
	require.Contains(t, err.Error(), "leads outside")
	require.NotContains(t, err.Error(), "SECRETFIELD")
	// named on the command line, it is the user's file: followed
	data, err := ReadFile(link, ExpertLoads, Opts{})
	require.NoError(t, err)
	require.Contains(t, string(data), "SECRETFIELD")
	// a link inside the root is read
	in := filepath.Join(root, "real.csv")
	require.NoError(t, os.WriteFile(in, []byte("a\n"), 0o644))
	inLink := filepath.Join(root, "sub", "l.csv")
	require.NoError(t, os.MkdirAll(filepath.Dir(inLink), 0o755))
	require.NoError(t, os.Symlink(in, inLink))
	_, err = ReadFile(inLink, ExpertLoads, Opts{Root: root})
	require.NoError(t, err)
}

func TestSizeLimitOnDiskAndDecompressed(t *testing.T) {
	dir := t.TempDir()
	k := Kind{"test file", 1000}
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("x"), 1001), 0o644))
	_, err := ReadFile(big, k, Opts{})
	require.Error(t, err)
	require.True(t, TooLarge(err))
	require.Contains(t, err.Error(), "over the 1000 bytes limit for a test file")
	exact := filepath.Join(dir, "exact")
	require.NoError(t, os.WriteFile(exact, bytes.Repeat([]byte("x"), 1000), 0o644))
	data, err := ReadFile(exact, k, Opts{})
	require.NoError(t, err)
	require.Len(t, data, 1000)
	// a small gzip that holds more than the limit
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	gz.Write(bytes.Repeat([]byte("x"), 100000))
	gz.Close()
	bomb := filepath.Join(dir, "bomb.gz")
	require.NoError(t, os.WriteFile(bomb, b.Bytes(), 0o644))
	_, err = ReadFile(bomb, k, Opts{})
	require.True(t, TooLarge(err), "%v", err)
	require.Contains(t, err.Error(), "once decompressed")
}

func gzipped(t *testing.T, parts ...string) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		gz := gzip.NewWriter(&b)
		_, err := gz.Write([]byte(p))
		require.NoError(t, err)
		require.NoError(t, gz.Close())
	}
	return b.Bytes()
}

// readSome reads n bytes, then closes: the error Close returns.
func readSome(t *testing.T, path string, n int) ([]byte, error) {
	f, err := Open(path, Profile, Opts{})
	require.NoError(t, err)
	buf := make([]byte, n)
	m, _ := io.ReadFull(f, buf)
	return buf[:m], f.Close()
}

func TestGzipTrailerCheckedOnCloseAfterAnEarlyStop(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("[{\"ph\":\"X\"}]\n", 1000)
	good := gzipped(t, content[:5000], content[5000:]) // two members, as gzip -c a b
	p := filepath.Join(dir, "t.json.gz")
	require.NoError(t, os.WriteFile(p, good, 0o644))
	got, err := readSome(t, p, 10)
	require.NoError(t, err)
	require.Equal(t, content[:10], string(got))
	all, err := ReadFile(p, Profile, Opts{})
	require.NoError(t, err)
	require.Equal(t, content, string(all))

	for name, damage := range map[string]func([]byte){
		"crc":  func(b []byte) { b[len(b)-6] ^= 0x40 },
		"size": func(b []byte) { b[len(b)-2] ^= 0x01 },
	} {
		bad := bytes.Clone(good)
		damage(bad)
		require.NoError(t, os.WriteFile(p, bad, 0o644))
		_, err := readSome(t, p, 10)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "gzip content is damaged", name)
		_, err = ReadFile(p, Profile, Opts{})
		require.Error(t, err, name)
	}
	require.NoError(t, os.WriteFile(p, good[:len(good)-3], 0o644))
	_, err = readSome(t, p, 10)
	require.ErrorContains(t, err, "cut short")
}

func TestXzAndMultiFrameZstd(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("kernel,1.5,2.5\n", 2000)
	var xb bytes.Buffer
	xw, err := xz.NewWriter(&xb)
	require.NoError(t, err)
	xw.Write([]byte(content))
	require.NoError(t, xw.Close())
	px := filepath.Join(dir, "k.csv.xz")
	require.NoError(t, os.WriteFile(px, xb.Bytes(), 0o644))
	got, err := ReadFile(px, Profile, Opts{})
	require.NoError(t, err)
	require.Equal(t, content, string(got))
	_, err = readSome(t, px, 10)
	require.NoError(t, err)
	bad := bytes.Clone(xb.Bytes())
	bad[len(bad)/2] ^= 0x10
	require.NoError(t, os.WriteFile(px, bad, 0o644))
	_, err = readSome(t, px, 10)
	require.Error(t, err, "a damaged xz stream is found on close")

	// pzstd: a skippable frame, then one frame per part, each with its checksum
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	require.NoError(t, err)
	skip := []byte{0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4}
	zs := append(bytes.Clone(skip), enc.EncodeAll([]byte(content[:7000]), nil)...)
	zs = append(zs, skip...)
	zs = append(zs, enc.EncodeAll([]byte(content[7000:]), nil)...)
	pz := filepath.Join(dir, "k.csv.zst")
	require.NoError(t, os.WriteFile(pz, zs, 0o644))
	got, err = ReadFile(pz, Profile, Opts{})
	require.NoError(t, err)
	require.Equal(t, content, string(got))
	bad = bytes.Clone(zs)
	bad[len(bad)-1] ^= 0xff // the last frame's checksum
	require.NoError(t, os.WriteFile(pz, bad, 0o644))
	_, err = readSome(t, pz, 10)
	require.Error(t, err, "a damaged zstd checksum is found on close")
}
