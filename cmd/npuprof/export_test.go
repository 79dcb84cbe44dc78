package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/parser/parquetio"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// compressCopy copies the rank folders under src to dst with every file of
// ASCEND_PROFILER_OUTPUT compressed.
func compressCopy(t *testing.T, src, dst, suffix string) {
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
		var w io.WriteCloser
		if suffix == ".gz" {
			w = gzip.NewWriter(f)
		} else {
			w, err = zstd.NewWriter(f)
			require.NoError(t, err)
		}
		_, err = w.Write(data)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return f.Close()
	}))
}

// withoutInputPath drops the one line that may differ: "path" of "input".
func withoutInputPath(t *testing.T, doc string) string {
	t.Helper()
	lines := strings.Split(doc, "\n")
	require.True(t, len(lines) > 4 && strings.HasPrefix(lines[3], `    "path": `), "input.path on line 4:\n%s", strings.Join(lines[:min(6, len(lines))], "\n"))
	return strings.Join(append(lines[:3:3], lines[4:]...), "\n")
}

// The acceptance test of the Parquet export and compressed inputs: the JSON
// document is byte-identical, apart from input.path, whether the capture is
// read plain or back from `npuprof export`; read gzipped or zstd-compressed,
// it differs only in the names of the files read (the .gz/.zst suffix in
// the reasons that quote a file) and where the copy lives.
func TestSameDocumentPlainCompressedParquet(t *testing.T) {
	inputs := map[string]string{"committed demo": filepath.Join("..", "..", "testdata", "traces", "ep-fc1-cumsum")}
	// a rank without collective data: its steps' communication is null
	noComm, _, _ := testutil.NoCommCapture(t, 3)
	inputs["no collective data on rank 2"] = noComm
	if d := os.Getenv("NPUPROF_SAMPLES"); d != "" {
		inputs["real level1 samples"] = testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1")
	} else if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "formats", "samples")); err == nil {
		inputs["real level1 samples"] = testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1")
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			code, want, errs := run("analyze", in, "--format", "json")
			require.Equal(t, ExitOK, code, errs)
			want = withoutInputPath(t, want)

			tmp := t.TempDir()
			pq := filepath.Join(tmp, "pq")
			code, out, errs := run("export", in, "-o", pq)
			require.Equal(t, ExitOK, code, errs)
			require.Contains(t, out, "exported ")
			require.Empty(t, errs)
			paths := []string{pq}
			for _, suf := range []string{".gz", ".zst"} {
				d := filepath.Join(tmp, "c"+suf)
				compressCopy(t, in, d, suf)
				paths = append(paths, d)
			}
			for _, p := range paths {
				code, got, errs := run("analyze", p, "--format", "json")
				require.Equal(t, ExitOK, code, errs)
				if p != pq {
					// a compressed copy lives elsewhere: its rank folders
					// have other paths (the export keeps the original ones),
					// and reasons that quote a file name quote the file
					// actually read (trace_view.json.gz)
					got = strings.ReplaceAll(got, p, in)
					for _, suf := range []string{".gz", ".zst"} {
						got = strings.ReplaceAll(got, ".json"+suf, ".json")
						got = strings.ReplaceAll(got, ".csv"+suf, ".csv")
					}
				}
				require.Equal(t, want, withoutInputPath(t, got), p)
			}
			// the text summary reads the same too (its first line names the input)
			_, a, _ := run("analyze", in)
			_, b, _ := run("analyze", pq)
			require.Equal(t, a[strings.IndexByte(a, '\n'):], b[strings.IndexByte(b, '\n'):])
		})
	}
}

func TestExportLayoutAndErrors(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "traces", "ep-fc1-cumsum")
	out := filepath.Join(t.TempDir(), "pq")
	code, _, errs := run("export", in, "-o", out)
	require.Equal(t, ExitOK, code, errs)
	for _, table := range parquetio.Tables {
		for r := 0; r < 8; r++ {
			require.FileExists(t, filepath.Join(out, table, "rank="+string(rune('0'+r)), "part-0.parquet"))
		}
	}
	m, _ := filepath.Glob(filepath.Join(out, parquetio.ManifestDir, "*"))
	require.Equal(t, []string{filepath.Join(out, parquetio.ManifestDir, "export-0-7.json")}, m, "staging is cleaned up")

	// exporting again replaces the partitions, and the result is the same
	code, _, errs = run("export", in, "-o", out)
	require.Equal(t, ExitOK, code, errs)

	code, _, errs = run("export", in)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "-o OUTDIR")
	// "-" means standard output in every other command: export cannot
	// stream Parquet partitions, and used to create a folder named "-"
	absIn, err := filepath.Abs(in)
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	code, _, errs = run("export", absIn, "-o", "-")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "-o OUTDIR")
	require.NoDirExists(t, "-")
	// an existing file is not a folder: said before anything is read (it
	// was "cannot write f.json: mkdir f.json: not a directory")
	require.NoError(t, os.WriteFile("f.json", []byte("{}"), 0o644))
	code, _, errs = run("export", absIn, "-o", "f.json")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "-o f.json is a file: export writes a folder of Parquet tables; give -o OUTDIR")
	code, _, errs = run("export", "/no/such/dir", "-o", out)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "/no/such/dir")

	// a partition lost after the export: the error names the file
	require.NoError(t, os.Remove(filepath.Join(out, "device_tasks", "rank=3", "part-0.parquet")))
	code, stdout, errs := run("analyze", out, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, stdout, filepath.Join("device_tasks", "rank=3", "part-0.parquet")+": no such file", "the other ranks are analyzed; the note names the file")
	require.NotContains(t, stdout, `"rank": 3,`)
}

// TestExportStepsWithoutCollectives: the steps table of a rank without
// collective data has null communication, overlap and free (not 0), and
// the metrics table says why under steps.communication_us, ...; the other
// ranks' rows are numbers.
func TestExportStepsWithoutCollectives(t *testing.T) {
	in, truth, _ := testutil.NoCommCapture(t, 3)
	pq := filepath.Join(t.TempDir(), "pq")
	code, _, errs := run("export", in, "-o", pq, "-q")
	require.Equal(t, ExitOK, code, errs)
	for _, rt := range truth.Ranks {
		rows, err := parquet.ReadFile[parquetio.Step](parquetio.PartFile(pq, parquetio.TableSteps, rt.Rank))
		require.NoError(t, err)
		require.Len(t, rows, len(rt.Steps))
		for i, row := range rows {
			require.Equal(t, int64(rt.Steps[i].Step), row.Step)
			if rt.Rank == 2 && i == len(rows)-1 {
				// the cut rank's last step: its host range is known, its
				// device work may not be whole (steps.cut): all null
				for _, v := range []*int64{row.WindowNs, row.ComputingNs, row.CommunicationNs, row.FreeNs} {
					require.Nil(t, v, "rank 2 step %d", row.Step)
				}
				continue
			}
			require.NotNil(t, row.WindowNs)
			require.NotNil(t, row.ComputingNs)
			require.InDelta(t, rt.Steps[i].ComputingUs, float64(*row.ComputingNs)/1e3, 1e-6)
			for _, v := range []*int64{row.CommunicationNs, row.CommunicationNotOverlapped, row.OverlappedNs, row.FreeNs} {
				if rt.Rank == 2 {
					require.Nil(t, v, "rank 2 step %d: null, not measured", row.Step)
				} else {
					require.NotNil(t, v, "rank %d step %d", rt.Rank, row.Step)
				}
			}
			if rt.Rank != 2 {
				require.InDelta(t, rt.Steps[i].CommunicationUs, float64(*row.CommunicationNs)/1e3, 1e-6)
			}
		}
		metrics, err := parquet.ReadFile[parquetio.Metric](parquetio.PartFile(pq, parquetio.TableMetrics, rt.Rank))
		require.NoError(t, err)
		why := map[string]string{}
		for _, m := range metrics {
			if m.Unavailable != nil {
				require.Nil(t, m.Value, m.Name)
				why[m.Name] = *m.Unavailable
			}
		}
		for _, k := range []string{"steps.communication_us", "steps.communication_not_overlapped_us", "steps.overlapped_us", "steps.free_us"} {
			if rt.Rank == 2 {
				require.Contains(t, why[k], "no collective data: ", k)
			} else {
				require.NotContains(t, why, k)
			}
		}
	}
}

// tuneGCFor lowers GOGC only for an npuprof Parquet export, and restores
// the previous setting.
func TestTuneGCForReadBack(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: tuneGCFor leaves the collector alone")
	}
	prev := debug.SetGCPercent(77)
	defer debug.SetGCPercent(prev)
	restore := tuneGCFor(t.TempDir()) // not an export
	require.Equal(t, 77, debug.SetGCPercent(77))
	restore()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, parquetio.ManifestDir), 0o755))
	restore = tuneGCFor(dir)
	require.Equal(t, readBackGCPercent, debug.SetGCPercent(readBackGCPercent))
	restore()
	require.Equal(t, 77, debug.SetGCPercent(77))
}
