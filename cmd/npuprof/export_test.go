package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
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
	i := slices.Index(lines, `  "input": {`) + 1
	require.True(t, i > 0 && i < len(lines) && strings.HasPrefix(lines[i], `    "path": `), "input.path after \"input\":\n%s", strings.Join(lines[:min(12, len(lines))], "\n"))
	return strings.Join(append(lines[:i:i], lines[i+1:]...), "\n")
}

// exportOrigin is a rank's exported_from in a document read back from an
// export.
type exportOrigin struct{ Path, AbsPath, Host string }

// fromExport checks that every rank of a document read back from the
// export pq says it was read from pq, and returns the document as the
// capture read at the exported absolute paths would give it: each rank's
// "path" is its exported_from.abs_path, and exported_from is dropped. It
// also returns each rank's exported_from, in order.
func fromExport(t *testing.T, doc, pq string) (string, []exportOrigin) {
	t.Helper()
	var origins []exportOrigin
	lines := strings.Split(doc, "\n")
	var out []string
	pathLine := `      "path": ` + strconv.Quote(pq) + ","
	for i := 0; i < len(lines); i++ {
		if lines[i] != pathLine {
			out = append(out, lines[i])
			continue
		}
		require.Equal(t, `      "exported_from": {`, lines[i+1], "a rank read from the export says where it was exported from")
		var o exportOrigin
		j := i + 2
		for ; lines[j] != "      },"; j++ {
			k, v, ok := strings.Cut(strings.TrimSpace(lines[j]), ": ")
			require.True(t, ok, lines[j])
			v, err := strconv.Unquote(strings.TrimSuffix(v, ","))
			require.NoError(t, err, lines[j])
			switch k {
			case `"path"`:
				o.Path = v
			case `"abs_path"`:
				o.AbsPath = v
			case `"host"`:
				o.Host = v
			default:
				t.Fatalf("unexpected exported_from key %s", k)
			}
		}
		origins = append(origins, o)
		out = append(out, `      "path": `+strconv.Quote(o.AbsPath)+",")
		i = j
	}
	return strings.Join(out, "\n"), origins
}

// The acceptance test of the Parquet export and compressed inputs: the JSON
// document is byte-identical whether the capture is read plain or back from
// `npuprof export`, apart from input.path and where each rank was read
// from: a rank read from the export has "path" = the export folder and
// exported_from = {path as given to export, abs_path, host}. The export is
// made with a relative path and analyzed from another directory; its
// metrics, reasons and everything else equal those of the capture analyzed
// at its absolute path (the reasons that quote a rank folder quote the
// absolute path recorded at export time). Read gzipped or zstd-compressed,
// the document differs only in the names of the files read (the .gz/.zst
// suffix in the reasons that quote a file) and where the copy lives.
func TestSameDocumentPlainCompressedParquet(t *testing.T) {
	inputs := map[string]string{"committed demo": filepath.Join("..", "..", "testdata", "traces", "ep-fc1-cumsum")}
	// a rank without collective data: its steps' communication is null
	noComm, _, _ := testutil.NoCommCapture(t, 3)
	inputs["no collective data on rank 2"] = noComm
	if d, why := testutil.FindSamples(); d != "" {
		inputs["real level1 samples"] = filepath.Join(d, "Ascend-msinsight", "test", "data", "pytorch", "text", "level1")
	} else {
		testutil.Skipped(t, "the real-sample case of TestSameDocumentPlainCompressedParquet (cmd/npuprof)", why)
	}
	host, err := os.Hostname()
	require.NoError(t, err)
	wd, err := os.Getwd()
	require.NoError(t, err)
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Chdir(wd)
			absIn, err := filepath.Abs(in)
			require.NoError(t, err)
			code, want, errs := run("analyze", absIn, "--format", "json")
			require.Equal(t, ExitOK, code, errs)
			want = withoutInputPath(t, want)

			tmp := t.TempDir()
			pq := filepath.Join(tmp, "pq")
			// exported as given (relative for the committed demo) ...
			code, out, errs := run("export", in, "-o", pq)
			require.Equal(t, ExitOK, code, errs)
			require.Contains(t, out, "exported ")
			require.Empty(t, errs)
			// ... and read from elsewhere
			t.Chdir(t.TempDir())
			code, got, errs := run("analyze", pq, "--format", "json")
			require.Equal(t, ExitOK, code, errs)
			got, origins := fromExport(t, got, pq)
			require.NotEmpty(t, origins)
			for _, o := range origins {
				require.Equal(t, host, o.Host)
				require.True(t, filepath.IsAbs(o.AbsPath), o.AbsPath)
				require.True(t, strings.HasPrefix(o.AbsPath, absIn+string(filepath.Separator)), "%s is under %s", o.AbsPath, absIn)
				require.Equal(t, filepath.Join(in, strings.TrimPrefix(o.AbsPath, absIn)), o.Path, "the path as given to export")
			}
			require.Equal(t, want, withoutInputPath(t, got), "read back from the export")

			for _, suf := range []string{".gz", ".zst"} {
				d := filepath.Join(tmp, "c"+suf)
				compressCopy(t, absIn, d, suf)
				code, got, errs := run("analyze", d, "--format", "json")
				require.Equal(t, ExitOK, code, errs)
				// a compressed copy lives elsewhere: its rank folders
				// have other paths, and reasons that quote a file name
				// quote the file actually read (trace_view.json.gz)
				got = strings.ReplaceAll(got, d, absIn)
				for _, suf := range []string{".gz", ".zst"} {
					got = strings.ReplaceAll(got, ".json"+suf, ".json")
					got = strings.ReplaceAll(got, ".csv"+suf, ".csv")
				}
				require.Equal(t, want, withoutInputPath(t, got), d)
			}
			// the text summary reads the same too (its first line names the input)
			_, a, _ := run("analyze", absIn)
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
	require.Equal(t, []string{filepath.Join(out, parquetio.ManifestDir, "export-0-7.json"), filepath.Join(out, parquetio.ManifestDir, parquetio.RunsDir)}, m, "staging and the lock are cleaned up; the ranks' run stamps stay")

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

	// a partition lost after the export: analyze reads the node tables,
	// not the partitions, and has every rank
	require.NoError(t, os.Remove(filepath.Join(out, "device_tasks", "rank=3", "part-0.parquet")))
	code, stdout, errs := run("analyze", out, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, stdout, `"rank": 3,`)
	// read rank by rank (without the ranks' states, as before v2), the
	// error names the file
	require.NoError(t, os.RemoveAll(filepath.Join(out, parquetio.TableRankState)))
	code, stdout, errs = run("analyze", out, "--format", "json")
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

// rankV1 is the ranks row of schema npuprof.parquet/v1, before abs_path
// and host (v1.1): an export written by an older npuprof.
type rankV1 struct {
	Schema            string `parquet:"schema"`
	Device            int32  `parquet:"device"`
	Path              string `parquet:"path"`
	Format            string `parquet:"format"`
	DirTimestamp      string `parquet:"dir_timestamp"`
	ProfilerLevel     string `parquet:"profiler_level"`
	TorchNPUVersion   string `parquet:"torch_npu_version"`
	CANNVersion       string `parquet:"cann_version"`
	HaveTimeline      bool   `parquet:"have_timeline"`
	HaveKernelDetails bool   `parquet:"have_kernel_details"`
	HaveHCCL          bool   `parquet:"have_hccl"`
	HaveFramework     bool   `parquet:"have_framework"`
	TimelineFile      string `parquet:"timeline_file"`
	KernelFile        string `parquet:"kernel_file"`
	HaveJSON          string `parquet:"have_json"`
	Partial           bool   `parquet:"partial"`
	PartialReason     string `parquet:"partial_reason"`
	GroupsJSON        string `parquet:"groups_json"`
	EnvJSON           string `parquet:"env_json"`
	MetadataJSON      string `parquet:"metadata_json"`
	WarningsJSON      string `parquet:"warnings_json"`
}

// An export of schema v1 (no abs_path and host columns) still reads: each
// rank says it was read from the export, exported_from has the path as it
// was given, and the metrics are those of the capture.
func TestReadV1Export(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "traces", "ep-fc1-cumsum")
	pq := filepath.Join(t.TempDir(), "pq")
	code, _, errs := run("export", in, "-o", pq, "-q")
	require.Equal(t, ExitOK, code, errs)
	for r := 0; r < 8; r++ {
		f := parquetio.PartFile(pq, parquetio.TableRanks, r)
		rows, err := parquet.ReadFile[parquetio.Rank](f)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		x := rows[0]
		require.Equal(t, parquetio.Schema, x.Schema)
		require.Equal(t, "npuprof.parquet/v2", x.Schema)
		require.True(t, filepath.IsAbs(x.AbsPath))
		require.NotEmpty(t, x.Host)
		old := rankV1{Schema: "npuprof.parquet/v1", Device: x.Device, Path: x.Path, Format: x.Format, DirTimestamp: x.DirTimestamp,
			ProfilerLevel: x.ProfilerLevel, TorchNPUVersion: x.TorchNPUVersion, CANNVersion: x.CANNVersion,
			HaveTimeline: x.HaveTimeline, HaveKernelDetails: x.HaveKernelDetails, HaveHCCL: x.HaveHCCL, HaveFramework: x.HaveFramework,
			TimelineFile: x.TimelineFile, KernelFile: x.KernelFile, HaveJSON: x.HaveJSON, Partial: x.Partial, PartialReason: x.PartialReason,
			GroupsJSON: groupsV1(t, pq, r), EnvJSON: x.EnvJSON, MetadataJSON: x.MetadataJSON, WarningsJSON: x.WarningsJSON}
		require.NoError(t, parquet.WriteFile(f, []rankV1{old}))
	}
	dropNodeTables(t, pq)
	type doc struct {
		Ranks []struct {
			Path         string             `json:"path"`
			ExportedFrom map[string]string  `json:"exported_from"`
			Metrics      map[string]float64 `json:"metrics"`
		} `json:"ranks"`
	}
	var want, got doc
	code, out, errs := run("analyze", in, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &want))
	code, out, errs = run("analyze", pq, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Ranks, 8)
	for i, r := range got.Ranks {
		require.Equal(t, pq, r.Path)
		require.Equal(t, map[string]string{"path": want.Ranks[i].Path}, r.ExportedFrom, "no abs_path or host in a v1 export")
		// a v1 export has no HCCL plane counts (v1.3): hccl.plane.* unavailable
		for _, k := range []string{"hccl.plane.sdma.count", "hccl.plane.rdma.count"} {
			require.Contains(t, want.Ranks[i].Metrics, k)
			require.NotContains(t, r.Metrics, k)
			delete(want.Ranks[i].Metrics, k)
		}
		require.Equal(t, want.Ranks[i].Metrics, r.Metrics)
	}
}
