package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// A cluster exported node by node into one folder (docs/parquet.md,
// "Clusters beyond one machine") reads back as the capture itself: no
// "missing ranks" note (each node's export holds only its own ranks; the
// set of ranks is judged over every rank the folder holds), and the same
// document field for field, but for where things were read from
// (exportDifferences). An export written before that judgement moved to
// the read (a manifest carrying the node's "missing ranks" note) reads
// back the same.
func TestExportPerNodeIntoOneFolder(t *testing.T) {
	sc := testutil.Scenario(t, "hot-rank")
	sc.Ranks, sc.Layers, sc.Steps = 16, 2, 2
	gen, truth := testutil.Generate(t, sc)
	capture := filepath.Join(t.TempDir(), "cluster")
	nodes := []string{filepath.Join(capture, "node0"), filepath.Join(capture, "node1")}
	for _, n := range nodes {
		require.NoError(t, os.MkdirAll(n, 0o755))
	}
	for i, r := range truth.Ranks {
		require.NoError(t, os.Rename(filepath.Join(gen, r.Dir), filepath.Join(nodes[i*len(nodes)/len(truth.Ranks)], r.Dir)))
	}
	code, a, errs := run("analyze", capture, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	want := decodeDoc(t, a)
	require.Empty(t, want["notes"], "the capture itself has every rank")

	pq := filepath.Join(t.TempDir(), "pq")
	for _, n := range nodes {
		code, _, errs := run("export", n, "-o", pq, "-q")
		require.Equal(t, ExitOK, code, errs)
	}
	manifests, err := filepath.Glob(filepath.Join(pq, parquetio.ManifestDir, "export*.json"))
	require.NoError(t, err)
	require.Len(t, manifests, 2)
	for _, m := range manifests {
		b, err := os.ReadFile(m)
		require.NoError(t, err)
		require.NotContains(t, string(b), "missing ranks", "%s: a node's export says nothing of the other nodes' ranks", m)
	}
	same := func(what string) {
		t.Helper()
		code, b, errs := run("analyze", pq, "--format", "json")
		require.Equal(t, ExitOK, code, errs)
		require.NotContains(t, b, "missing ranks", what)
		docA, docB := decodeDoc(t, a), decodeDoc(t, b)
		var diffs []string
		for _, d := range exportDifferences {
			diffs = append(diffs, d.apply(docA, docB, pq)...)
		}
		diffs = append(diffs, compareJSON("", docA, docB)...)
		require.Empty(t, diffs, "%s: the analysis of the per-node export differs from that of the capture", what)
	}
	same("exported per node")

	// a manifest as an older export wrote it, with the node's own
	// judgement of the ranks it did not hold
	var m map[string]any
	b, err := os.ReadFile(manifests[1])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	m["notes"] = []string{"missing ranks: 0, 1, 2, 3, 4, 5, 6, 7 (found 8 of 16 ranks 0..15); the cluster analysis covers the ranks present"}
	b, err = json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(manifests[1], b, 0o644))
	require.True(t, strings.HasSuffix(manifests[1], "export-8-15.json"), manifests[1])
	same("an older export's manifest")
}

// A reader bug in export is what it is in analyze: the other ranks are
// written, the run exits 3 naming the rank, and the manifest does not
// blame the input for it.
func TestExportReaderPanicIsExit3(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, testutil.Tiny())
	require.NoError(t, err)
	t.Cleanup(func() { parser.TestHookParseRank = nil })
	parser.TestHookParseRank = func(src parser.Source) {
		if strings.Contains(src.Root, "_rank1_") {
			panic("reader bug")
		}
	}
	pq := filepath.Join(t.TempDir(), "pq")
	code, _, errs := run("export", dir, "-o", pq, "-q")
	require.Equal(t, ExitInternal, code, errs)
	require.True(t, strings.HasPrefix(errs, "npuprof: 1 analysis pass(es) failed: pass parse on rank -1: internal error: panic while reading "), errs)
	require.Contains(t, errs, "_rank1_")
	ranks, err := parquetio.Ranks(pq)
	require.NoError(t, err)
	require.Equal(t, []int{0}, ranks, "rank 0 is still exported")
	notes, err := parquetio.Notes(pq)
	require.NoError(t, err)
	require.Empty(t, notes)
}
