package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/tracegen"
)

func genScenario(t *testing.T, name string) string {
	t.Helper()
	dir, _ := genTruth(t, name)
	return dir
}

func vllmFixture(t *testing.T, name string) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "internal", "inputs", "vllmserve", "testdata", name))
	require.NoError(t, err)
	return b
}

// A profile folder with a vLLM server log: the serving facts appear in the
// terminal summary, the JSON document and the HTML report header.
func TestAnalyzeWithVLLMLog(t *testing.T) {
	dir := genScenario(t, "clean")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vllm_server.log"), vllmFixture(t, "v1-parts.log"), 0o644))

	code, out, errs := run("analyze", dir, "-q", "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "note: vLLM log found in the profile folder")
	require.Contains(t, out, "Serving context")
	require.Regexp(t, `serving\.concurrency\s+89\.5`, out)
	require.Regexp(t, `serving\.prefix_cache_hit_rate\s+91\.0%`, out)
	require.Regexp(t, `serving\.mm_cache_hit_rate\s+91\.0%`, out)
	require.Contains(t, out, "1 malformed vLLM statistics line(s) skipped")

	code, out, errs = run("analyze", dir, "-q", "--format", "json", "--html", filepath.Join(dir, "..", "r.html"))
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Serving struct {
			Metrics map[string]float64 `json:"metrics"`
			Sources map[string]string  `json:"sources"`
			Files   []string           `json:"files"`
			Formats []string           `json:"formats"`
		} `json:"serving"`
		Plan struct {
			Steps []struct {
				Rule          string  `json:"rule"`
				StepChangePct float64 `json:"step_time_change_pct"`
			} `json:"steps"`
		} `json:"plan"`
		Ranks []struct {
			Kernels     []map[string]any `json:"kernels"`
			Collectives []map[string]any `json:"collectives"`
		} `json:"ranks"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	m := doc.Serving.Metrics
	require.Equal(t, 89.5, m["serving.concurrency"])
	require.InDelta(t, 0.91, m["serving.prefix_cache_hit_rate"], 1e-12)
	require.InDelta(t, 0.91, m["serving.mm_cache_hit_rate"], 1e-12)
	require.InDelta(t, 1460, m["serving.output_tps"], 1e-9)
	require.Equal(t, 1.0, m["serving.log.malformed"])
	require.Equal(t, []string{"v1-parts"}, doc.Serving.Formats)
	// the log's batch (90) is larger than the profile's (25): the load the
	// profile did not have is not the fix's effect, so the graph is
	// predicted at the profile's batch, and a plan step never slows the step
	require.NotEmpty(t, doc.Plan.Steps)
	for _, st := range doc.Plan.Steps {
		require.Less(t, st.StepChangePct, 0.0, st.Rule)
	}
	require.Len(t, doc.Ranks, 8)
	require.NotEmpty(t, doc.Ranks[0].Kernels)
	require.NotEmpty(t, doc.Ranks[0].Collectives)

	html, err := os.ReadFile(filepath.Join(dir, "..", "r.html"))
	require.NoError(t, err)
	page := string(html)
	// the serving context follows the deployment facts
	deployment := page[strings.Index(page, `data-section="deployment"`):strings.Index(page, `data-section="communication"`)]
	require.Contains(t, deployment, "serving.concurrency")
	require.Contains(t, deployment, "89.5")
	require.Contains(t, deployment, "serving.mm_cache_hit_rate")
	require.Contains(t, deployment, "91.0%")

	// --no-vllm-log: nothing read.
	code, out, _ = run("analyze", dir, "-q", "--no-vllm-log", "--detail", "tables")
	require.Equal(t, ExitOK, code)
	require.NotContains(t, out, "Serving context")

	// An explicit bench result wins for concurrency and throughput.
	bench := filepath.Join(t.TempDir(), "bench.json")
	require.NoError(t, os.WriteFile(bench, vllmFixture(t, "bench-serve.json"), 0o644))
	code, out, errs = run("analyze", dir, "-q", "--vllm-bench", bench, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Equal(t, 90.0, doc.Serving.Metrics["serving.concurrency"])
	require.Equal(t, 1499.4, doc.Serving.Metrics["serving.output_tps"])

	code, _, errs = run("analyze", dir, "-q", "--vllm-log", filepath.Join(dir, "nope.log"))
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "nope.log")
}

func TestDiffCommand(t *testing.T) {
	before := genScenario(t, "ep-fc1-cumsum-steps")
	after := genScenario(t, "clean-steps")
	require.NoError(t, os.WriteFile(filepath.Join(after, "server.log"), vllmFixture(t, "v1-engine.log"), 0o644))

	code, out, errs := run("diff", before, after, "-q")
	require.Equal(t, ExitOK, code, errs)
	for _, s := range []string{"Step time", "window", "Collectives by type and group", "gone     reducescatter  ep",
		"gone     allgather      ep", "aclnnCumsum_CumsumAiCpu_Cumsum", "Serving context", "serving.concurrency", "Per rank"} {
		require.Contains(t, out, s)
	}

	// Save the before side, compare the saved document with the profile:
	// the same JSON diff as from two profiles (paths aside).
	saved := filepath.Join(t.TempDir(), "before.json")
	code, _, errs = run("analyze", before, "-q", "--format", "json", "-o", saved)
	require.Equal(t, ExitOK, code, errs)
	code, j1, errs := run("diff", before, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	code, j2, errs := run("diff", saved, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var r1, r2 diff.Result
	require.NoError(t, json.Unmarshal([]byte(j1), &r1))
	require.NoError(t, json.Unmarshal([]byte(j2), &r2))
	require.Equal(t, diff.Schema, r1.Schema)
	require.Equal(t, r1.Steps, r2.Steps)
	require.Equal(t, r1.Collectives, r2.Collectives)
	require.Equal(t, r1.Kernels, r2.Kernels)
	require.Equal(t, r1.Overall, r2.Overall)
	w, ok := r1.Step("window")
	require.True(t, ok)
	require.Negative(t, w.DeltaUs)

	// A saved document is recognised by its content, whatever its name.
	b0, err := os.ReadFile(saved)
	require.NoError(t, err)
	noSuffix := filepath.Join(t.TempDir(), "baseline")
	require.NoError(t, os.WriteFile(noSuffix, b0, 0o644))
	code, j3, errs := run("diff", noSuffix, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var r3 diff.Result
	require.NoError(t, json.Unmarshal([]byte(j3), &r3))
	require.Equal(t, r2.Overall, r3.Overall)

	htmlFile := filepath.Join(t.TempDir(), "diff.html")
	code, _, errs = run("diff", saved, after, "-q", "--html", htmlFile, "-o", filepath.Join(t.TempDir(), "d.txt"))
	require.Equal(t, ExitOK, code, errs)
	b, err := os.ReadFile(htmlFile)
	require.NoError(t, err)
	page := string(b)
	require.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
	for _, s := range []string{`data-section="steps"`, `data-section="collectives"`, `data-section="kernels"`, `data-section="findings"`,
		`data-section="serving"`, "aclnnCumsum_CumsumAiCpu_Cumsum", "chart-diff-steps"} {
		require.Contains(t, page, s)
	}
	require.NotContains(t, page, `src="http`, "self-contained")
	require.Equal(t, 1, strings.Count(page, `id="npuprof-charts"`))

	code, _, _ = run("diff", before)
	require.Equal(t, ExitUsage, code)
	code, _, errs = run("diff", before, filepath.Join(t.TempDir(), "missing"))
	require.Equal(t, ExitUsage, code, errs)
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema": "other/v9"}`), 0o644))
	code, _, errs = run("diff", bad, after)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "bad.json")
}

// The acceptance case: the same workload before (expert parallel +
// FLASHCOMM1 + the AI_CPU routing Cumsum + a 25-request decode batch with
// vLLM-Ascend's default capture sizes, so it runs eager) and after all
// three fixes (no EP/FLASHCOMM1, no Cumsum, capture size 25). diff shows
// the EP all-gathers and reduce-scatters and the MoE Cumsum gone, the step
// time change, and the three findings resolved with predicted vs measured
// saving.
func TestDiffBeforeAfterThreeFixes(t *testing.T) {
	gen := func(base string, mod func(*tracegen.Scenario)) string {
		sc, ok := tracegen.Lookup(base)
		require.True(t, ok)
		mod(&sc)
		dir := t.TempDir()
		_, err := tracegen.Generate(dir, sc)
		require.NoError(t, err)
		return dir
	}
	before := gen("ep-fc1-cumsum-steps", func(s *tracegen.Scenario) {
		s.Name, s.MaxNumSeqs, s.CaptureSizes = "before", 25, []int{1, 2, 4, 8, 16, 24}
	})
	after := gen("clean-steps", func(s *tracegen.Scenario) {
		s.Name, s.MaxNumSeqs, s.CaptureSizes = "after", 25, []int{25}
	})
	code, out, errs := run("diff", before, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var r diff.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))

	for _, k := range [][2]string{{"allgather", "ep"}, {"reducescatter", "ep"}, {"reducescatter", "tp"}} {
		c, ok := r.Collective(k[0], k[1])
		require.True(t, ok, k)
		require.Equal(t, diff.StatusGone, c.Status, k)
	}
	cs, ok := r.Metric("moe.cumsum.count")
	require.True(t, ok)
	require.Positive(t, *cs.Before)
	require.Zero(t, *cs.After)

	w, ok := r.Step("window")
	require.True(t, ok)
	require.Less(t, w.AfterUs, w.BeforeUs)
	require.InDelta(t, w.AfterUs-w.BeforeUs, w.DeltaUs, 1e-9)

	for _, rule := range []string{"comm-ep-flashcomm", "moe-routing-cumsum", "graph-capture-sizes"} {
		f, ok := r.Finding(rule)
		require.True(t, ok, rule)
		require.Equal(t, diff.FindingResolved, f.Status, rule)
		require.NotNil(t, f.PredictedUs, rule)
		require.Positive(t, *f.PredictedUs, rule)
		require.NotNil(t, f.MeasuredUs, "%s: %s", rule, f.MeasuredMissing)
		require.Positive(t, *f.MeasuredUs, rule)
		require.NotNil(t, f.Ratio, rule)
	}
	// The Cumsum's measured saving is its whole time (per rank, same step
	// count), which is what the rule predicted.
	c, _ := r.Finding("moe-routing-cumsum")
	require.Equal(t, "moe.cumsum.time_us", c.MeasuredMetric)
	bc, _ := r.Metric("moe.cumsum.time_us")
	require.InDelta(t, *bc.Before, *c.MeasuredUs, 1e-9)
	require.InDelta(t, 1.0, *c.Ratio, 0.05)

	code, out, errs = run("diff", before, after, "-q")
	require.Equal(t, ExitOK, code, errs)
	for _, s := range []string{"resolved  comm-ep-flashcomm", "resolved  moe-routing-cumsum", "resolved  graph-capture-sizes",
		"gone     allgather      ep", "aclnnCumsum_CumsumAiCpu_Cumsum"} {
		require.Contains(t, out, s)
	}
}

// A saved document is recognised whatever its layout: one compacted by
// `jq -c`, with its keys sorted (jq -S, Python) or re-indented by another
// tool ("schema" after 4 KB of other keys, "schema":"npuprof.analysis/v1",
// no space) used to be taken for a trace and refused with "not a trace".
func TestDiffReadsCompactDocument(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "before.json")
	code, _, errs := run("analyze", demo, "-q", "--format", "json", "-o", saved)
	require.Equal(t, ExitOK, code, errs)
	var doc any
	b, err := os.ReadFile(saved)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	compact, err := json.Marshal(doc)
	require.NoError(t, err)
	min := filepath.Join(dir, "before.min.json")
	require.NoError(t, os.WriteFile(min, compact, 0o644))
	tabs, err := json.MarshalIndent(doc, "", "\t")
	require.NoError(t, err)
	tabbed := filepath.Join(dir, "before.tabs.json")
	require.NoError(t, os.WriteFile(tabbed, []byte(strings.Replace(string(tabs), `"schema": `, `"schema" :`, 1)), 0o644))

	code, want, errs := run("diff", saved, saved, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	for _, p := range []string{min, tabbed} {
		code, got, errs := run("diff", p, saved, "-q", "--format", "json")
		require.Equal(t, ExitOK, code, "%s: %s", p, errs)
		require.JSONEq(t, strings.ReplaceAll(want, saved, p), got, p)
	}
}
