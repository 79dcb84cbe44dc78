package parser

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/summary"
	"github.com/npuprof/npuprof/internal/parser/traceview"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

const level1 = "Ascend-msinsight/test/data/pytorch/text/level1"

func TestDetectLayouts(t *testing.T) {
	root := testutil.Sample(t, level1)
	rank0 := filepath.Join(root, "rank0_ascend_pt")
	for _, c := range []struct {
		path  string
		ranks int
	}{
		{root, 2},
		{rank0, 1},
		{filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT"), 1},
		{filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), 1},
		{testutil.Sample(t, "Ascend-msinsight/test/data/pytorch"), 6},
	} {
		srcs, err := Detect(c.path)
		require.NoError(t, err, c.path)
		require.Len(t, srcs, c.ranks, c.path)
	}
	srcs, _ := Detect(filepath.Join(rank0, "ASCEND_PROFILER_OUTPUT"))
	require.Equal(t, rank0, srcs[0].Root, "metadata is read from the *_ascend_pt parent")
	require.Equal(t, 0, srcs[0].RankHint)
}

// Paths as a user types them from inside a rank folder: "." and a bare
// file name. Folder names decide what a folder is, so "." must be seen as
// the ASCEND_PROFILER_OUTPUT it is, and a named trace still gets its rank
// folder's metadata (the rank, its groups) while only that file is read.
func TestDetectRelativeInsideRank(t *testing.T) {
	rank1 := filepath.Join(testutil.Sample(t, level1), "rank1_ascend_pt")
	out := filepath.Join(rank1, "ASCEND_PROFILER_OUTPUT")
	t.Chdir(out)
	for _, c := range []struct {
		path, root, trace string
	}{
		{".", "..", ""},
		{"trace_view.json", "..", "trace_view.json"},
		{filepath.Join(out, "trace_view.json"), rank1, filepath.Join(out, "trace_view.json")},
	} {
		srcs, err := Detect(c.path)
		require.NoError(t, err, c.path)
		require.Len(t, srcs, 1, c.path)
		require.Equal(t, c.root, srcs[0].Root, c.path)
		require.Equal(t, 1, srcs[0].RankHint, "%s: rank from the rank folder's profiler_info_1.json", c.path)
		require.Equal(t, c.trace, srcs[0].TraceFile, c.path)
		r, err := ParseRank(srcs[0])
		require.NoError(t, err, c.path)
		require.Equal(t, 1, r.Rank, c.path)
		require.NotEmpty(t, r.Env, "%s: profiler_metadata.json ENV_VARIABLES read", c.path)
		if c.trace != "" {
			require.False(t, r.Have.KernelDetails, "%s: a named trace is the only data file read", c.path)
		}
	}
	// one level up: "." is the rank folder itself
	t.Chdir(rank1)
	srcs, err := Detect(".")
	require.NoError(t, err)
	require.Len(t, srcs, 1)
	require.Equal(t, 1, srcs[0].RankHint)
}

// A symlink under another name still finds its rank folder: detection
// follows it to the folder or file it names.
func TestDetectSymlinkUnderAnotherName(t *testing.T) {
	rank1 := filepath.Join(testutil.Sample(t, level1), "rank1_ascend_pt")
	links := t.TempDir()
	for _, c := range []struct{ link, target string }{
		{"out1", filepath.Join(rank1, "ASCEND_PROFILER_OUTPUT")},
		{"t.json", filepath.Join(rank1, "ASCEND_PROFILER_OUTPUT", "trace_view.json")},
		{"r1", rank1},
	} {
		p := filepath.Join(links, c.link)
		require.NoError(t, os.Symlink(c.target, p))
		srcs, err := Detect(p)
		require.NoError(t, err, c.link)
		require.Len(t, srcs, 1, c.link)
		require.Equal(t, 1, srcs[0].RankHint, "%s: rank from the rank folder's profiler_info_1.json", c.link)
		r, err := ParseRank(srcs[0])
		require.NoError(t, err, c.link)
		require.NotEmpty(t, r.Env, "%s: the rank folder's profiler_metadata.json is read", c.link)
	}
}

func TestDetectErrors(t *testing.T) {
	_, err := Detect("/no/such/profile")
	require.True(t, errkind.Is(err, errkind.Usage))
	require.Contains(t, err.Error(), "/no/such/profile")

	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o644))
	_, err = Detect(empty)
	require.True(t, errkind.Is(err, errkind.Usage))
	require.Contains(t, err.Error(), "no profile found")
	require.Contains(t, err.Error(), "notes.txt")
	require.Contains(t, err.Error(), "ASCEND_PROFILER_OUTPUT")

	_, err = Detect(filepath.Join(empty, "notes.txt"))
	require.True(t, errkind.Is(err, errkind.Usage))

	// a rank's companion file named alone: say what to name instead (it
	// was "not a trace: expected a JSON array of events" for
	// profiler_info_0.json or communication.json)
	rank0 := filepath.Join(testutil.Sample(t, level1), "rank0_ascend_pt")
	for _, f := range []string{"profiler_info_0.json", "profiler_metadata.json", filepath.Join("ASCEND_PROFILER_OUTPUT", "communication.json"),
		filepath.Join("ASCEND_PROFILER_OUTPUT", "kernel_details.csv"), filepath.Join("ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")} {
		_, err = Detect(filepath.Join(rank0, f))
		require.True(t, errkind.Is(err, errkind.Usage), f)
		require.Contains(t, err.Error(), "read with the rank's other files, not alone: give the rank folder (npuprof analyze "+rank0+")", f)
	}

	// a file named with a trailing slash: the path is named once
	_, err = Detect(filepath.Join(empty, "notes.txt") + "/")
	require.True(t, errkind.Is(err, errkind.Usage))
	require.Equal(t, filepath.Join(empty, "notes.txt")+"/: not a directory", err.Error())

	// an unset shell variable: say the path is empty, not ": no such file"
	_, err = Detect("")
	require.True(t, errkind.Is(err, errkind.Usage))
	require.Contains(t, err.Error(), "the profile path is empty")
}

func TestReadCluster(t *testing.T) {
	ranks := readAll(t, testutil.Sample(t, level1))
	require.Len(t, ranks, 2)
	for i, r := range ranks {
		require.Equal(t, i, r.Rank)
		require.Equal(t, "Level1", r.ProfilerLevel)
		require.True(t, r.Have.Timeline)
		require.True(t, r.Have.KernelDetails)
		require.Len(t, r.HCCL, 4)
		require.NotEmpty(t, r.Links)
		require.NoError(t, r.Validate())
	}
	// kernel_details rows were joined onto the timeline: shapes known
	n := 0
	for i := range ranks[0].Tasks {
		if ranks[0].InputShapes(&ranks[0].Tasks[i]) != 0 {
			n++
		}
	}
	require.Greater(t, n, 100)
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	}))
}

// Every file in the samples goes through every reader that could be
// pointed at it: errors are fine, panics are not.
func TestNoPanicOnAnySample(t *testing.T) {
	root := testutil.SamplesDir(t)
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		require.NoError(t, err)
		if info.IsDir() {
			if srcs, err := Detect(p); err == nil {
				for _, src := range srcs {
					_, err := ParseRank(src)
					require.False(t, errkind.Is(err, errkind.Internal), "%v", err)
				}
			}
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		readers := []func(io.Reader){
			func(r io.Reader) { _, _ = traceview.Read(r, p, model.NewRank(p)) },
			func(r io.Reader) { _, _ = summary.ReadKernelDetails(r, p, func(*summary.KernelRow) {}) },
			func(r io.Reader) { _, _, _ = summary.ReadStepTraceTime(r, p) },
			func(r io.Reader) { _, _ = summary.ReadProfilerInfo(r, p) },
			func(r io.Reader) { _, _ = summary.ReadProfilerMetadata(r, p) },
			func(r io.Reader) { _, _ = summary.ReadCommunication(r, p) },
		}
		for _, read := range readers {
			read(bytes.NewReader(b))
		}
		return nil
	})
	require.NoError(t, err)
}

// An msprof trace named directly (msprof_*.json in a PROF_* folder's
// mindstudio_profiler_output), from anywhere: only that file is measured,
// but the PROF_* folder's device_{id}/info.json.{id} still says which rank
// it is, as the folder itself does. Naming rank 1's file used to give
// rank 0 (no rank hint: the ranks were numbered in order).
func TestDetectMsprofFileKeepsRank(t *testing.T) {
	s := testutil.Scenario(t, "clean")
	s.Ranks, s.Layers, s.Steps = 2, 2, 2
	dir, _ := testutil.GenerateLayout(t, s, tracegen.LayoutMsprofText)
	profs, err := filepath.Glob(filepath.Join(dir, "PROF_*"))
	require.NoError(t, err)
	require.Len(t, profs, 2)
	for _, prof := range profs {
		folder, err := Detect(prof)
		require.NoError(t, err)
		require.Len(t, folder, 1)
		want := folder[0].RankHint
		require.GreaterOrEqual(t, want, 0, prof)
		files, err := filepath.Glob(filepath.Join(prof, "mindstudio_profiler_output", "msprof_*.json"))
		require.NoError(t, err)
		require.Len(t, files, 1)
		out := filepath.Dir(files[0])
		t.Chdir(out)
		for _, path := range []string{files[0], filepath.Base(files[0]), "./" + filepath.Base(files[0])} {
			srcs, err := Detect(path)
			require.NoError(t, err, path)
			require.Len(t, srcs, 1, path)
			require.Equal(t, path, srcs[0].TraceFile, path)
			require.Equal(t, want, srcs[0].RankHint, "%s: rank from the PROF_* folder's device info", path)
			require.Equal(t, folder[0].Timestamp, srcs[0].Timestamp, path)
			r, err := ParseRank(srcs[0])
			require.NoError(t, err, path)
			require.Equal(t, want, r.Rank, path)
			// why the groups are unknown names this input, not a
			// profiler_metadata.json it never had
			require.Contains(t, r.Have.GroupsNote, "only "+path+" was read", path)
		}
		r, err := ParseRank(folder[0])
		require.NoError(t, err)
		require.Contains(t, r.Have.GroupsNote, "is an msprof capture: the tp/ep/dp groups (parallel_group_info) are in torch_npu's profiler_metadata.json")
	}
}

// The same for msprof_{ts}.db named directly: it sits in the PROF_*
// folder, whose device_{id}/info.json.{id} gives the rank.
func TestDetectMsprofDBFileKeepsRank(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "PROF_000001_20250109081620431_WACLGDDQHNQMRMKZ")
	require.NoError(t, os.MkdirAll(filepath.Join(prof, "device_3"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prof, "device_3", "info.json.3"), []byte(`{"rank_id": 5}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(prof, "msprof_20250109081750.db"), nil, 0o644))
	t.Chdir(prof)
	for _, path := range []string{".", "msprof_20250109081750.db", filepath.Join(prof, "msprof_20250109081750.db")} {
		srcs, err := Detect(path)
		require.NoError(t, err, path)
		require.Len(t, srcs, 1, path)
		require.Equal(t, model.FormatMsprofDB, srcs[0].Format, path)
		require.Equal(t, 5, srcs[0].RankHint, path)
		require.Equal(t, "20250109081620431", srcs[0].Timestamp, path)
	}
}

// Ranks without a rank in their files are numbered by folder order
// (internal/pipeline/gather), and Detect's order is the natural one: test_rank_2
// before test_rank_10. A plain string sort numbered test_rank_10 as rank 2
// and test_rank_2 as rank 4.
func TestUnknownRanksInNaturalFolderOrder(t *testing.T) {
	out, _ := testutil.GenerateTiny(t)
	kd, err := os.ReadFile(filepath.Join(out, "kernel_details.csv"))
	require.NoError(t, err)
	dir := t.TempDir()
	names := []string{"test_rank_0", "test_rank_1", "test_rank_2", "test_rank_10", "test_rank_11"}
	for _, n := range names {
		o := filepath.Join(dir, n, "ASCEND_PROFILER_OUTPUT")
		require.NoError(t, os.MkdirAll(o, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(o, "kernel_details.csv"), kd, 0o644))
	}
	srcs, err := Detect(dir)
	require.NoError(t, err)
	var got []string
	for _, s := range srcs {
		got = append(got, filepath.Base(s.Root))
	}
	require.Equal(t, names, got)
}
