package parser

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// compressTree copies the rank folders under src to dst, compressing every
// file of ASCEND_PROFILER_OUTPUT with compress (and adding suffix).
func compressTree(t *testing.T, src, dst, suffix string, compress func(io.Writer) io.WriteCloser) {
	t.Helper()
	require.NoError(t, filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		if filepath.Base(filepath.Dir(p)) != tracegen.OutputDir {
			return os.WriteFile(out, data, 0o644)
		}
		f, err := os.Create(out + suffix)
		require.NoError(t, err)
		w := compress(f)
		_, err = w.Write(data)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return f.Close()
	}))
}

// Gzip and zstd inputs are read transparently: the same model, rank for
// rank, apart from the file names it records.
func TestCompressedInputs(t *testing.T) {
	s := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	s.Ranks, s.Steps, s.CommJSON = 2, 2, true
	plain, _ := testutil.Generate(t, s)
	want := readAll(t, plain)
	require.Len(t, want, 2)
	require.NotEmpty(t, want[0].Communication)
	for suffix, c := range map[string]func(io.Writer) io.WriteCloser{
		".gz": func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
		".zst": func(w io.Writer) io.WriteCloser {
			z, err := zstd.NewWriter(w)
			require.NoError(t, err)
			return z
		},
		".xz": func(w io.Writer) io.WriteCloser {
			x, err := xz.NewWriter(w)
			require.NoError(t, err)
			return x
		},
	} {
		dir := t.TempDir()
		compressTree(t, plain, dir, suffix, c)
		got := readAll(t, dir)
		require.Len(t, got, 2)
		first := got[0].Have.TimelineFile
		for i, r := range got {
			w := *want[i]
			require.True(t, strings.HasSuffix(r.Have.TimelineFile, "trace_view.json"+suffix), r.Have.TimelineFile)
			require.True(t, strings.HasSuffix(r.Have.KernelFile, "kernel_details.csv"+suffix), r.Have.KernelFile)
			r.Have.TimelineFile, r.Have.KernelFile = w.Have.TimelineFile, w.Have.KernelFile
			require.True(t, strings.HasSuffix(r.Have.StepTraceFile, "step_trace_time.csv"+suffix), r.Have.StepTraceFile)
			require.True(t, strings.HasSuffix(r.Have.DeviceFile, "trace_view.json"+suffix), r.Have.DeviceFile)
			r.Have.HCCLFile, r.Have.StepTraceFile, r.Have.CommFile, r.Have.DeviceFile = w.Have.HCCLFile, w.Have.StepTraceFile, w.Have.CommFile, w.Have.DeviceFile
			r.Path = w.Path
			require.Equal(t, &w, r, suffix)
		}
		// a single compressed file names its own format
		one := readAll(t, first)
		require.Len(t, one, 1)
		require.Equal(t, len(want[0].Tasks), len(one[0].Tasks))
	}
	// a corrupt compressed trace is an error naming the file
	bad := filepath.Join(t.TempDir(), "trace_view.json.gz")
	require.NoError(t, os.WriteFile(bad, []byte{0x1f, 0x8b, 0, 1, 2}, 0o644))
	_, err := ParseRank(Source{Root: bad, TraceFile: bad, Format: model.FormatTorchNPUText, RankHint: -1})
	require.ErrorContains(t, err, bad)
}

// A damaged gzip trailer (CRC or size) of any file of a rank makes the
// rank partial, naming the file, even where the reader stops before the
// end of the stream (the trace reader stops at its closing ']').
func TestDamagedGzipTrailerMakesTheRankPartial(t *testing.T) {
	s := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	s.Ranks, s.Steps, s.CommJSON = 1, 2, true
	plain, _ := testutil.Generate(t, s)
	dir := t.TempDir()
	compressTree(t, plain, dir, ".gz", func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
	var files []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if strings.HasSuffix(p, ".gz") {
			files = append(files, p)
		}
		return err
	}))
	require.GreaterOrEqual(t, len(files), 4)
	whole := readAll(t, dir)
	require.Len(t, whole, 1)
	require.False(t, whole[0].Partial)
	for _, p := range files {
		good, err := os.ReadFile(p)
		require.NoError(t, err)
		bad := append([]byte(nil), good...)
		bad[len(bad)-8] ^= 0x01 // the CRC-32
		require.NoError(t, os.WriteFile(p, bad, 0o644))
		got := readAll(t, dir)
		require.Len(t, got, 1)
		r := got[0]
		require.True(t, r.Partial, "%s: a damaged CRC makes the rank partial", filepath.Base(p))
		require.Contains(t, warningsText(r), p, filepath.Base(p))
		require.NoError(t, os.WriteFile(p, good, 0o644))
	}
}

// gzip -r on a capture compresses profiler_info_N.json and
// profiler_metadata.json too: they are read the same (the rank, the groups).
func TestGzippedMetadataRead(t *testing.T) {
	root, _ := tinyRank(t)
	want := loadOne(t, root)
	require.NotEmpty(t, want.Groups)
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(root, e.Name())
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		f, err := os.Create(p + ".gz")
		require.NoError(t, err)
		w := gzip.NewWriter(f)
		w.Write(data)
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
		require.NoError(t, os.Remove(p))
		n++
	}
	require.GreaterOrEqual(t, n, 2)
	got := loadOne(t, root)
	require.Empty(t, got.Have.GroupsNote)
	require.Equal(t, want.Groups, got.Groups)
	require.Equal(t, want.Rank, got.Rank)
	require.Equal(t, want.Env, got.Env)
}
