package gather

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/parser"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

const level1 = "Ascend-msinsight/test/data/pytorch/text/level1"

func TestGatherCluster(t *testing.T) {
	s, err := Models(context.Background(), testutil.Sample(t, level1), Options{Workers: 2})
	require.NoError(t, err)
	require.Len(t, s.Ranks, 2)
	for i, r := range s.Ranks {
		require.Equal(t, i, r.Rank)
		require.NoError(t, r.Validate())
	}
	require.Empty(t, s.AllNotes())
	require.Empty(t, s.Internal)
}

func TestDuplicateRanksKeepNewest(t *testing.T) {
	src := testutil.Sample(t, level1+"/rank0_ascend_pt")
	dir := t.TempDir()
	for _, name := range []string{"host_1_20250101000000000_ascend_pt", "host_2_20250102000000000_ascend_pt"} {
		copyTree(t, src, filepath.Join(dir, name))
	}
	s, err := Models(context.Background(), dir, Options{})
	require.NoError(t, err)
	require.Len(t, s.Ranks, 1)
	require.Contains(t, s.Ranks[0].Path, "20250102000000000")
	require.Contains(t, strings.Join(s.Notes, "\n"), "appears twice")
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

// walk keeps every worker busy and never more than Workers in flight.
func TestWalkBoundedConcurrency(t *testing.T) {
	srcs, err := parser.Detect(testutil.Sample(t, "Ascend-msinsight/test/data/pytorch"))
	require.NoError(t, err)
	var mu sync.Mutex
	in, peak, calls := 0, 0, 0
	err = walk(context.Background(), srcs, Options{Workers: 2}, func(i int, r *model.Rank, err error) {
		mu.Lock()
		in++
		calls++
		peak = max(peak, in)
		mu.Unlock()
		// Wait (bounded) for the other worker to arrive, so the test does
		// not depend on scheduling luck on a loaded machine.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			done := peak >= 2 || calls == len(srcs)
			mu.Unlock()
			if done {
				break
			}
		}
		mu.Lock()
		in--
		mu.Unlock()
	})
	require.NoError(t, err)
	require.Equal(t, len(srcs), calls)
	require.Equal(t, 2, peak)
}

// Duplicate ranks whose folders carry no timestamp (renamed or copied
// folders: rank0_ascend_pt, rank0_copy_ascend_pt) cannot be told apart by
// age: the note says which folder was kept and why, instead of calling it
// "the newest".
func TestDuplicateRanksWithoutTimestamp(t *testing.T) {
	_, keep, notes, setNotes := reconcile([]rankID{
		{Rank: 0, Path: "a/rank0_ascend_pt"},
		{Rank: 0, Path: "b/rank0_ascend_pt"},
		{Rank: 1, Path: "c/x_1_20250101000000000_ascend_pt", DirTimestamp: "20250101000000000"},
		{Rank: 1, Path: "c/x_1_20250102000000000_ascend_pt", DirTimestamp: "20250102000000000"},
	})
	require.Equal(t, []bool{true, false, false, true}, keep)
	require.Contains(t, notes, "rank 0 appears twice; kept a/rank0_ascend_pt (the first found: no folder timestamp tells which is newer), ignored b/rank0_ascend_pt")
	require.Contains(t, notes, "rank 1 appears twice; kept the newest folder c/x_1_20250102000000000_ascend_pt, ignored c/x_1_20250101000000000_ascend_pt")
	require.Empty(t, setNotes)
}

// The notes on the inputs (numbered, duplicate) and those on the set of
// ranks kept (missing ranks, different step sets) come apart: an export
// records only the first, and reading it back makes the second again.
func TestReconcileNotes(t *testing.T) {
	ids := []rankID{
		{Rank: 0, Path: "a", Steps: []int{2, 3}},
		{Rank: 1, Path: "b_old", DirTimestamp: "20250101000000000", Steps: []int{2, 3}},
		{Rank: 1, Path: "b_new", DirTimestamp: "20250102000000000", Steps: []int{2, 3}},
		{Rank: 4, Path: "e", Steps: []int{2}},
	}
	ranks, keep, notes, setNotes := reconcile(ids)
	require.Equal(t, []int{0, 1, 1, 4}, ranks)
	require.Equal(t, []bool{true, false, true, true}, keep)
	require.Equal(t, []string{"rank 1 appears twice; kept the newest folder b_new, ignored b_old"}, notes)
	require.Equal(t, []string{
		"missing ranks: 2, 3 (found 3 of 5 ranks 0..4); the cluster analysis covers the ranks present",
		"ranks have different step sets: ranks 0-1 have steps [2,3]; ranks 4 have steps [2]; per-step comparisons use the ranks that have each step",
	}, setNotes)
	for _, n := range setNotes {
		require.True(t, isSetNote(n), n)
	}
	require.False(t, isSetNote(notes[0]))
}

// Ranks without a rank in their files are numbered by folder order, and
// that order is the natural one: test_rank_2 before test_rank_10. A plain
// string sort numbered test_rank_10 as rank 2 and test_rank_2 as rank 4.
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
	s, err := Models(context.Background(), dir, Options{Workers: 2})
	require.NoError(t, err)
	require.Len(t, s.Ranks, len(names))
	for i, r := range s.Ranks {
		require.Equal(t, i, r.Rank)
		require.Equal(t, names[i], filepath.Base(r.Path))
		require.Contains(t, s.Notes, fmt.Sprintf("%s: rank unknown; assigned rank %d by folder order", r.Path, i))
	}
}

// A panic while reading a rank is recovered: the rank is named, the error
// is internal (exit 3), and the other ranks are still read; with every
// rank a reader bug, gathering fails with the bug, not a usage error.
func TestReaderPanicIsInternal(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, testutil.Tiny())
	require.NoError(t, err)
	parser.TestHookParseRank = func(src parser.Source) {
		if strings.Contains(src.Root, "rank1_") {
			panic("boom")
		}
	}
	defer func() { parser.TestHookParseRank = nil }()
	s, err := Models(context.Background(), dir, Options{Workers: 2})
	require.NoError(t, err)
	require.Len(t, s.Ranks, 1)
	require.Len(t, s.Internal, 1)
	require.Contains(t, s.Internal[0], "internal error: panic while reading ")
	require.Contains(t, s.Internal[0], "rank1_")
	require.Contains(t, s.Internal[0], ": boom")
	require.Empty(t, s.Notes, "a reader bug is not blamed on the input")

	parser.TestHookParseRank = func(parser.Source) { panic("always") }
	_, err = Models(context.Background(), dir, Options{Workers: 2})
	require.True(t, errkind.Is(err, errkind.Internal), "%v", err)
	require.False(t, errkind.Is(err, errkind.Usage))
}

// An error of the caller's step counts as the rank's: the rank is left
// out with a note naming its folder, as one that could not be read.
func TestStepErrorIsTheRanks(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, testutil.Tiny())
	require.NoError(t, err)
	s, err := Ranks(context.Background(), dir, Options{}, func(r *model.Rank) (*int, error) {
		if strings.Contains(r.Path, "rank1_") {
			return nil, errors.New("writing the tables: disk full")
		}
		return new(int), nil
	}, func(n *int, rank int) { *n = rank })
	require.NoError(t, err)
	require.Len(t, s.Ranks, 1)
	require.Equal(t, 0, *s.Ranks[0])
	require.Len(t, s.Notes, 1)
	require.Regexp(t, `^rank folder .*rank1_.* could not be read: writing the tables: disk full$`, s.Notes[0])
}

// A world size the inputs state names every rank of it that no input has,
// above the highest rank present too, in one note that replaces the note
// on the gaps below it; the largest stated world wins; a single rank of a
// larger world is named as well.
func TestReconcileWorldNote(t *testing.T) {
	ids := []rankID{
		{Rank: 0, Path: "a", World: 16, WorldFrom: "parallel_group_info (group default_group)"},
		{Rank: 1, Path: "b", World: 8, WorldFrom: "x"},
		{Rank: 3, Path: "d"},
	}
	_, _, _, setNotes := reconcile(ids)
	require.Equal(t, []string{"ranks 2,4-15 missing (world of 16); the world size is from parallel_group_info (group default_group); the analysis covers the 3 rank(s) present"}, setNotes)
	require.True(t, isSetNote(setNotes[0]))
	require.True(t, isWorldNote(setNotes[0]))

	_, _, _, setNotes = reconcile([]rankID{{Rank: 0, Path: "a", World: 2, WorldFrom: "t.json distributedInfo.world_size"}})
	require.Equal(t, []string{"rank 1 missing (world of 2); the world size is from t.json distributedInfo.world_size; the analysis covers the 1 rank(s) present"}, setNotes)

	_, _, _, setNotes = reconcile([]rankID{{Rank: 0, Path: "a", World: 2}, {Rank: 1, Path: "b", World: 2}})
	require.Empty(t, setNotes)

	s := Set[int]{Notes: []string{"n"}, SetNotes: []string{"ranks have different step sets: x", "ranks 8-15 missing (world of 16); y"}}
	require.Equal(t, []string{"ranks 8-15 missing (world of 16); y", "n", "ranks have different step sets: x"}, s.AllNotes())
}
