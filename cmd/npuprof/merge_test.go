package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/testutil"
)

// mergeRanks is the cluster size of TestPerNodeMerge: 64 in `make test`;
// NPUPROF_MERGE_RANKS=1024 (`make pernode-1024`) runs the 1,024-rank
// acceptance run of docs/parquet.md.
func mergeRanks(t *testing.T) int {
	if v := os.Getenv("NPUPROF_MERGE_RANKS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "NPUPROF_MERGE_RANKS")
		return n
	}
	return 64
}

// A tracegen capture exported as 8 node folders (each node exports its own
// ranks where they are, half of them the node tables alone) and analyzed
// together — the folders named one by one, as a glob, and as the folder
// that holds them — gives the document of the capture analyzed whole, but
// for where things were read from: input.path, and each rank's path (its
// node's export) with exported_from. No per-rank table is read: the
// per-rank partitions of the full exports are removed before the merge.
func TestPerNodeMerge(t *testing.T) {
	n := mergeRanks(t)
	const nodes = 8
	sc := testutil.Scenario(t, "hot-rank")
	sc.Ranks, sc.Layers, sc.Steps = n, 2, 2
	gen, truth := testutil.Generate(t, sc)
	capture := filepath.Join(t.TempDir(), "cluster")
	var nodeDirs []string
	for i := range nodes {
		d := filepath.Join(capture, fmt.Sprintf("node%d", i))
		require.NoError(t, os.MkdirAll(d, 0o755))
		nodeDirs = append(nodeDirs, d)
	}
	for i, r := range truth.Ranks {
		require.NoError(t, os.Rename(filepath.Join(gen, r.Dir), filepath.Join(nodeDirs[i*nodes/len(truth.Ranks)], r.Dir)))
	}
	code, a, errs := run("analyze", capture, "--format", "json-full")
	require.Equal(t, ExitOK, code, errs)
	want := decodeDoc(t, a)

	all := filepath.Join(t.TempDir(), "exports")
	var pqs []string
	for i, d := range nodeDirs {
		pq := filepath.Join(all, fmt.Sprintf("node%d.pq", i))
		args := []string{"export", d, "-o", pq, "-q"}
		if i%2 == 1 {
			args = append(args, "--summary-only")
		}
		code, _, errs := run(args...)
		require.Equal(t, ExitOK, code, errs)
		if i%2 == 1 {
			ents, err := os.ReadDir(pq)
			require.NoError(t, err)
			var tables []string
			for _, e := range ents {
				tables = append(tables, e.Name())
			}
			require.Equal(t, []string{parquetio.ManifestDir, parquetio.TableGroups, parquetio.TableRankMetrics, parquetio.TableRankState}, tables,
				"--summary-only writes the node tables alone, one file each")
		} else {
			// the merge reads the node tables only
			for _, table := range parquetio.Tables {
				require.NoError(t, os.RemoveAll(filepath.Join(pq, table)))
			}
			require.NoError(t, os.RemoveAll(filepath.Join(pq, parquetio.ManifestDir, parquetio.RunsDir)))
		}
		pqs = append(pqs, pq)
	}
	check := func(what string, args ...string) {
		t.Helper()
		code, b, errs := run(append(append([]string{"analyze"}, args...), "--format", "json-full")...)
		require.Equal(t, ExitOK, code, "%s: %s", what, errs)
		got := decodeDoc(t, b)
		// where things were read from: the nodes' exports
		got["input"].(map[string]any)["path"] = want["input"].(map[string]any)["path"]
		var diffs []string
		for i, r := range docRanks(got) {
			o, ok := r["exported_from"].(map[string]any)
			if !ok || !slices.Contains(pqs, fmt.Sprint(r["path"])) {
				diffs = append(diffs, fmt.Sprintf("ranks[%d]: path %v, exported_from %v: want a node's export and the origin", i, r["path"], r["exported_from"]))
				continue
			}
			r["path"] = o["abs_path"]
			delete(r, "exported_from")
		}
		diffs = append(diffs, compareJSON("", want, got)...)
		require.Empty(t, diffs, "%s: the merged analysis differs from the capture's", what)
	}
	check("the node exports named one by one", pqs...)
	check("a glob of them", filepath.Join(all, "node*.pq"))
	check("the folder that holds them", all)
}

// An export's bytes per rank do not grow with the cluster: a node of 8
// ranks writes the same, to within 2%, in a cluster of 256 as in one of 8
// (the parallel groups, whose member lists grow with the cluster, are
// written once per node, not in every rank's row).
func TestExportBytesPerRankFlat(t *testing.T) {
	perRank := func(world int) float64 {
		sc := testutil.Scenario(t, "hot-rank")
		sc.Ranks, sc.Layers, sc.Steps = world, 2, 2
		gen, truth := testutil.Generate(t, sc)
		node := filepath.Join(t.TempDir(), "node0")
		require.NoError(t, os.MkdirAll(node, 0o755))
		for _, r := range truth.Ranks[:8] {
			require.NoError(t, os.Rename(filepath.Join(gen, r.Dir), filepath.Join(node, r.Dir)))
		}
		pq := filepath.Join(t.TempDir(), "pq")
		code, _, errs := run("export", node, "-o", pq, "-q")
		require.Equal(t, ExitOK, code, errs)
		var total int64
		require.NoError(t, filepath.Walk(pq, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() && filepath.Base(filepath.Dir(p)) != parquetio.ManifestDir {
				total += info.Size()
			}
			return err
		}))
		return float64(total) / 8
	}
	small, big := perRank(8), perRank(256)
	t.Logf("export bytes per rank: %.0f at 8 ranks, %.0f at 256", small, big)
	require.Less(t, big, small*1.02, "bytes per rank grow with the cluster: %.0f at 8 ranks, %.0f at 256", small, big)
}

// groupsV1 is rank rk's groups_json as schema v1 wrote it: each group with
// its member ranks (v2 keeps them in the groups node table).
func groupsV1(t *testing.T, pq string, rk int) string {
	t.Helper()
	r, err := parquetio.ReadRank(pq, rk, parquetio.ReadOptions{SkipCommunication: true, SkipFramework: true})
	require.NoError(t, err)
	b, err := json.Marshal(r.Groups)
	require.NoError(t, err)
	return string(b)
}

// dropNodeTables removes the node tables of the export pq (as an export
// before v2 has none): it is then read rank by rank.
func dropNodeTables(t *testing.T, pq string) {
	t.Helper()
	for _, table := range parquetio.NodeTables {
		require.NoError(t, os.RemoveAll(filepath.Join(pq, table)))
	}
}

// A v2 export run that adds ranks to a folder an npuprof before v2 wrote
// (no node tables for its ranks) is read rank by rank, whole: the ranks of
// both runs, the document of the capture.
func TestExportV2OntoV1Folder(t *testing.T) {
	sc := testutil.Scenario(t, "hot-rank")
	sc.Ranks, sc.Layers, sc.Steps = 16, 2, 2
	gen, truth := testutil.Generate(t, sc)
	capture := filepath.Join(t.TempDir(), "cluster")
	nodes := []string{filepath.Join(capture, "node0"), filepath.Join(capture, "node1")}
	for i, r := range truth.Ranks {
		n := nodes[i*len(nodes)/len(truth.Ranks)]
		require.NoError(t, os.MkdirAll(n, 0o755))
		require.NoError(t, os.Rename(filepath.Join(gen, r.Dir), filepath.Join(n, r.Dir)))
	}
	code, a, errs := run("analyze", capture, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	want := decodeDoc(t, a)

	pq := filepath.Join(t.TempDir(), "pq")
	code, _, errs = run("export", nodes[0], "-o", pq, "-q")
	require.Equal(t, ExitOK, code, errs)
	// as an npuprof before v2 wrote it: groups_json with the members, no
	// node tables
	for rk := range 8 {
		f := parquetio.PartFile(pq, parquetio.TableRanks, rk)
		rows, err := parquet.ReadFile[parquetio.Rank](f)
		require.NoError(t, err)
		rows[0].GroupsJSON, rows[0].Schema = groupsV1(t, pq, rk), "npuprof.parquet/v1.4"
		require.NoError(t, parquet.WriteFile(f, rows))
	}
	dropNodeTables(t, pq)
	require.False(t, parquetio.HasNodeTables(pq))
	code, _, errs = run("export", nodes[1], "-o", pq, "-q")
	require.Equal(t, ExitOK, code, errs)
	require.False(t, parquetio.HasNodeTables(pq), "ranks 0-7 have no node rows")

	code, b, errs := run("analyze", pq, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	got := decodeDoc(t, b)
	var diffs []string
	for _, d := range exportDifferences {
		diffs = append(diffs, d.apply(want, got, pq)...)
	}
	diffs = append(diffs, compareJSON("", want, got)...)
	require.Empty(t, diffs)
}

// Exporting the same ranks again into a folder (--summary-only: no
// per-rank stamps) replaces the earlier run's node files: the folder
// reads as one run's, not as two runs holding the same ranks.
func TestSummaryOnlyExportAgain(t *testing.T) {
	dir, _ := testutil.GenerateTiny(t)
	pq := filepath.Join(t.TempDir(), "pq")
	for range 2 {
		code, _, errs := run("export", dir, "-o", pq, "-q", "--summary-only")
		require.Equal(t, ExitOK, code, errs)
	}
	files, err := filepath.Glob(filepath.Join(pq, parquetio.TableRankState, "*.parquet"))
	require.NoError(t, err)
	require.Len(t, files, 1, "the first run's node files were replaced")
	code, out, errs := run("analyze", pq, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.Len(t, docRanks(decodeDoc(t, out)), 1)
}
