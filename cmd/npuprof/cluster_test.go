package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

func runTerm(term bool, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(&streams{in: strings.NewReader(""), out: &out, err: &errb, errIsTerminal: term}, args)
	return code, out.String(), errb.String()
}

// A generated 8-rank capture with one slow rank, one rank missing and one
// duplicated: the terminal summary and the JSON name the slow rank and why,
// and report the missing and duplicate ranks as notes (never fatal).
func TestClusterSlowRankMissingDuplicate(t *testing.T) {
	sc := testutil.Scenario(t, "clean-steps")
	sc.Layers, sc.Steps = 3, 2
	sc.SlowRank, sc.SlowFactor = 6, 1.5
	dir, _ := testutil.Generate(t, sc)
	ents, _ := filepath.Glob(filepath.Join(dir, "*_ascend_pt"))
	require.Len(t, ents, 8)
	// drop rank 3; copy rank 1 under an older name (the newest is kept)
	require.NoError(t, os.RemoveAll(ents[3]))
	old := strings.Replace(filepath.Base(ents[1]), "_20250109", "_20240109", 1)
	require.NoError(t, os.CopyFS(filepath.Join(dir, "elsewhere", old), os.DirFS(ents[1])))

	code, out, errs := runTerm(false, "analyze", dir, "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	require.Empty(t, errs, "no progress bar when standard error is not a terminal")
	require.Contains(t, out, "note: rank 3 missing (world of 8)")
	requireText(t, out, "rank 1 appears twice; kept the newest folder "+ents[1])
	require.Contains(t, out, "Slow ranks")
	require.Contains(t, out, "  rank 6: computing (kernel time) over the window is")
	require.Contains(t, out, "arrived last at")

	code, out, _ = runTerm(false, "analyze", dir, "--format", "json")
	require.Equal(t, ExitOK, code)
	var doc struct {
		Input struct {
			Ranks []int `json:"ranks"`
		} `json:"input"`
		Notes   []string `json:"notes"`
		Cluster struct {
			Ranks     int                `json:"ranks"`
			Metrics   map[string]float64 `json:"metrics"`
			SlowRanks []struct {
				Rank     int    `json:"rank"`
				Step     *int   `json:"step"`
				Quantity string `json:"quantity"`
				Reason   string `json:"reason"`
			} `json:"slow_ranks"`
			Groups []struct {
				Group    string `json:"group"`
				LastRank *int   `json:"last_rank"`
			} `json:"groups"`
		} `json:"cluster"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Equal(t, []int{0, 1, 2, 4, 5, 6, 7}, doc.Input.Ranks)
	require.Contains(t, strings.Join(doc.Notes, "\n"), "rank 3 missing (world of 8)")
	require.Contains(t, strings.Join(doc.Notes, "\n"), "rank 1 appears twice")
	require.Equal(t, 7, doc.Cluster.Ranks)
	require.Equal(t, 6.0, doc.Cluster.Metrics["skew.computing.max_rank"])
	require.Greater(t, doc.Cluster.Metrics["skew.computing.max_over_median"], 1.2)
	require.Contains(t, doc.Cluster.Metrics, "skew.free.max_over_median")
	require.NotEmpty(t, doc.Cluster.SlowRanks)
	first := doc.Cluster.SlowRanks[0]
	require.Equal(t, 6, first.Rank)
	require.Nil(t, first.Step)
	require.Equal(t, "computing", first.Quantity)
	require.Contains(t, first.Reason, "median")
	require.Len(t, doc.Cluster.Groups, 1)
	require.Equal(t, "tp", doc.Cluster.Groups[0].Group)
	require.Equal(t, 6, *doc.Cluster.Groups[0].LastRank)
}

// The progress line goes to standard error only on a terminal, only after
// the work has taken a moment, and never with --quiet; standard output is
// the same either way.
func TestProgressBar(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Layers, sc.Steps, sc.Ranks = 2, 1, 4
	dir, _ := testutil.Generate(t, sc)
	code, plain, errs := runTerm(false, "analyze", dir)
	require.Equal(t, ExitOK, code)
	require.Empty(t, errs)
	code, out, errs := runTerm(true, "analyze", dir)
	require.Equal(t, ExitOK, code)
	require.Equal(t, plain, out)
	require.Regexp(t, `^\rreading profiles: 1/4 ranks, [0-9.]+ of [0-9.]+ [KM]B\x1b\[K`, errs, "terminal, no delay: the line is drawn")
	require.True(t, strings.HasSuffix(errs, "\r\x1b[K"), "and erased at the end: %q", errs)
	code, out, errs = runTerm(true, "analyze", dir, "--quiet")
	require.Equal(t, ExitOK, code)
	require.Equal(t, plain, out)
	require.Empty(t, errs)
	var out2, errb bytes.Buffer
	code = runMain(&streams{in: strings.NewReader(""), out: &out2, err: &errb, errIsTerminal: true, progressDelay: 1 << 40}, []string{"analyze", dir})
	require.Equal(t, ExitOK, code)
	require.Empty(t, errb.String(), "quick work: no bar")
}
