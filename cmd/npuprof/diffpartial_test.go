package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// smallCluster generates scenario (2 layers, 2 steps); with cut >= 0, rank
// cut's trace_view.json is cut at 40% of its events. It returns the folder
// and the cut trace.
func smallCluster(t *testing.T, scenario string, cut int) (dir, trace string) {
	t.Helper()
	sc, ok := tracegen.Lookup(scenario)
	require.True(t, ok, scenario)
	sc.Layers, sc.Steps = 2, 2
	dir = t.TempDir()
	truth, err := tracegen.Generate(dir, sc)
	require.NoError(t, err)
	if cut >= 0 {
		trace = filepath.Join(dir, truth.Ranks[cut].Dir, tracegen.OutputDir, "trace_view.json")
		_, err = tracegen.CutTrace(trace, 0.4)
		require.NoError(t, err)
	}
	return dir, trace
}

// `npuprof diff` of a whole capture and the same capture with rank 3 cut:
// the terminal names the cut side, rank and file and marks the rows; the
// JSON carries the keys; the reverse names BEFORE; whole vs whole marks
// nothing. diff never gates on a change: exit 0.
func TestDiffPartialSides(t *testing.T) {
	whole, _ := smallCluster(t, "ep-fc1-cumsum", -1)
	whole2, _ := smallCluster(t, "ep-fc1-cumsum", -1)
	cut, trace := smallCluster(t, "ep-fc1-cumsum", 3)

	code, out, errs := run("diff", whole, cut, "-q")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "\n  ! AFTER rank 3 cut short: "+trace+" is truncated: it ends inside an event at byte ")
	require.NotContains(t, out, "BEFORE rank")
	require.Contains(t, out, "  ! rows marked [partial: ...] read such a value")
	require.Regexp(t, `\n\s+window\s+\S+\s+\S+\s+-\S+ \(-[0-9.]+%\)  \[partial: after rank 3\]\n`, out, "a cut AFTER looks faster, and says so")
	require.Regexp(t, `\n  persists\s+moe-routing-cumsum\s.*\[partial: finding read after rank 3; measured on after rank 3\]\n`, out)

	js := filepath.Join(t.TempDir(), "d.json")
	code, _, errs = run("diff", whole, cut, "-q", "--format", "json", "-o", js)
	require.Equal(t, ExitOK, code, errs)
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	var r diff.Result
	require.NoError(t, json.Unmarshal(b, &r))
	require.Empty(t, r.Before.Partial)
	require.Len(t, r.After.Partial, 1)
	require.Equal(t, 3, r.After.Partial[0].Rank)
	require.True(t, strings.HasPrefix(r.After.Partial[0].Reason, trace+" is truncated"), r.After.Partial[0].Reason)
	w, ok := r.Metric("device.window.time_us")
	require.True(t, ok)
	require.Equal(t, []diff.PartialRef{{Side: "after", Rank: 3}}, w.Partial)
	require.Negative(t, *w.Delta)
	for _, k := range []string{`"partial": [`, `"side": "after"`, `"partial_metrics": `, `"measured_partial": [`} {
		require.Contains(t, string(b), k)
	}
	for _, rd := range r.Ranks {
		for _, m := range rd.Metrics {
			if rd.Rank != 3 {
				require.Empty(t, m.Partial, "rank %d %s", rd.Rank, m.Metric)
			}
		}
	}

	// the reverse: the cut side is BEFORE, and the prediction from it is uncertain
	code, out, errs = run("diff", cut, whole, "-q")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "\n  ! BEFORE rank 3 cut short: "+trace+" is truncated")
	require.NotContains(t, out, "AFTER rank")
	require.Regexp(t, `\n\s+window\s+\S+\s+\S+\s+\+\S+ \(\+[0-9.]+%\)  \[partial: before rank 3\]\n`, out, "a cut BEFORE makes AFTER look slower, and says so")
	require.Contains(t, out, "[partial: finding read before rank 3; predicted saving uncertain; measured on before rank 3]")

	// whole vs whole: nothing marked
	code, out, errs = run("diff", whole, whole2, "-q")
	require.Equal(t, ExitOK, code, errs)
	require.NotContains(t, out, "partial")
	require.NotContains(t, out, "cut short")
	code, out, errs = run("diff", whole, whole2, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.NotContains(t, out, `"partial`)
	require.NotContains(t, out, `"side"`)

	// --help teaches it
	code, out, _ = run("diff", "--help")
	require.Equal(t, ExitOK, code)
	for _, s := range []string{"cut short", "[partial: after rank 3]", "diff has no gate", "--partial-findings report"} {
		require.Contains(t, out, s)
	}
}

// check --baseline with a baseline whose rank 3 was cut: a budget that
// fires on the baseline's smaller window is a partial finding (the rank is
// the baseline's), gated by default, only shown with --partial-findings
// report.
func TestCheckBaselinePartial(t *testing.T) {
	cut, trace := smallCluster(t, "clean", 3)
	whole, _ := smallCluster(t, "clean", -1)
	old := filepath.Join(t.TempDir(), "old.json")
	code, _, errs := run("analyze", cut, "-q", "--format", "json", "-o", old)
	require.Equal(t, ExitOK, code, errs)
	budget := "device.window.time_us <= baseline * 1.02"
	code, out, errs := run("check", whole, "-q", "--fail-on", "low", "--baseline", old, "--budget", budget, "--format", "json")
	require.Equal(t, ExitFindings, code, errs)
	var doc struct {
		Findings []struct {
			Rule    string `json:"rule"`
			Partial []struct {
				Rank     int      `json:"rank"`
				Reason   string   `json:"reason"`
				Metrics  []string `json:"metrics"`
				UsedIn   []string `json:"used_in"`
				Baseline bool     `json:"baseline"`
			} `json:"partial"`
			SavingUncertain bool `json:"saving_uncertain"`
			Evidence        []struct {
				Note         string `json:"note"`
				PartialRanks []int  `json:"partial_ranks"`
			} `json:"evidence"`
		} `json:"findings"`
		BaselineDiff diff.Result `json:"baseline_diff"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	var found bool
	for _, f := range doc.Findings {
		if f.Rule != "budget/device.window.time_us" {
			continue
		}
		found = true
		require.Len(t, f.Partial, 1)
		p := f.Partial[0]
		require.Equal(t, 3, p.Rank)
		require.True(t, p.Baseline)
		require.True(t, strings.HasPrefix(p.Reason, "baseline "+old+": "+trace+" is truncated"), p.Reason)
		require.Equal(t, []string{"device.window.time_us"}, p.Metrics)
		require.Equal(t, []string{"when", "saving", "evidence"}, p.UsedIn)
		require.True(t, f.SavingUncertain)
		require.Empty(t, f.Evidence[0].PartialRanks, "the current capture is whole")
		require.Equal(t, []int{3}, f.Evidence[1].PartialRanks, "the baseline value read rank 3")
	}
	require.True(t, found, out)
	require.Equal(t, 3, doc.BaselineDiff.Before.Partial[0].Rank)

	// terminal: the caveat names the baseline's rank; the gate counts it
	// (the clean capture's own high findings fail the check either way)
	// (--detail all: the evidence too)
	code, out, _ = run("check", whole, "-q", "--fail-on", "low", "--baseline", old, "--budget", budget, "--detail", "all")
	require.Equal(t, ExitFindings, code)
	requireText(t, out, "      ! partial input: baseline rank 3 (device.window.time_us; used in when, saving, evidence) measured over only the complete part of a file cut short; the saving is uncertain")
	require.Regexp(t, `device\.window\.time_us = \S+  now \(mean over ranks\)\n`, out, "the current value is whole")
	require.Regexp(t, `device\.window\.time_us=\S+baseline\S+old\.json\[partial:rank3cutshort\]`, squash(out))
	require.Contains(t, out, "\n  ! BEFORE (the baseline) rank 3 cut short: "+trace+" is truncated")
	require.Regexp(t, `step time: .*\[partial: before rank 3\]\n`, out)
	require.Regexp(t, `check: 4 finding\(s\), 4 at or above low \(1 of them from a truncated file\): FAIL`, out)
	_, out, _ = run("check", whole, "-q", "--fail-on", "low", "--baseline", old, "--budget", budget, "--partial-findings", "report")
	require.Regexp(t, `check: 4 finding\(s\), 3 at or above low \(1 more from a truncated file, not gated: --partial-findings report\): FAIL`, out)
}
