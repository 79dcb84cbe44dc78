package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// A 16-rank capture whose second node's folders were not copied (ranks
// 8-15): the world parallel_group_info states names them in one line at
// the top of the summary and in the JSON, and check --require-all-ranks
// fails on them.
func TestMissingRanksOfTheWorld(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 16, 1, 1
	dir, truth := testutil.Generate(t, sc)
	for _, rt := range truth.Ranks[8:] {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, rt.Dir)))
	}

	code, out, errs := run("analyze", dir, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Input struct {
			Ranks         []int  `json:"ranks"`
			WorldSize     int    `json:"world_size"`
			WorldSizeFrom string `json:"world_size_from"`
			MissingRanks  []int  `json:"missing_ranks"`
		} `json:"input"`
		Notes []string `json:"notes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, doc.Input.Ranks)
	require.Equal(t, 16, doc.Input.WorldSize)
	require.Equal(t, "parallel_group_info (group default_group)", doc.Input.WorldSizeFrom)
	require.Equal(t, []int{8, 9, 10, 11, 12, 13, 14, 15}, doc.Input.MissingRanks)
	require.NotEmpty(t, doc.Notes)
	require.True(t, strings.HasPrefix(doc.Notes[0], "ranks 8-15 missing (world of 16)"), doc.Notes[0])
	for _, n := range doc.Notes[1:] {
		require.NotContains(t, n, "missing", "the missing ranks are named once")
	}

	code, out, errs = run("analyze", dir)
	require.Equal(t, ExitOK, code, errs)
	lines := strings.Split(out, "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, "ranks 8-15 missing (world of 16)") {
			at = i
			break
		}
	}
	require.GreaterOrEqual(t, at, 0, out)
	require.Less(t, at, 5, "named at the top:\n%s", out)

	code, _, errs = run("check", dir, "--fail-on", "high", "--disable", "graph-capture-sizes")
	require.NotEqual(t, ExitFindings, code, "without the flag the missing ranks do not fail the check: %s", errs)
	code, _, errs = run("check", dir, "--fail-on", "high", "--disable", "graph-capture-sizes", "--require-all-ranks")
	require.Equal(t, ExitFindings, code)
	require.Contains(t, errs, "--require-all-ranks: ranks 8-15 missing (world of 16)")

	// the whole capture passes the flag
	full, _ := testutil.Generate(t, sc)
	code, out, errs = run("check", full, "--fail-on", "high", "--disable", "graph-capture-sizes", "--require-all-ranks", "--format", "json")
	require.NotEqual(t, ExitFindings, code, errs)
	require.NotContains(t, out, "missing_ranks")
}
