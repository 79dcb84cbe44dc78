package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// cutCluster generates ep-fc1-cumsum (2 layers, 2 steps) with rank 3's
// trace_view.json cut at 40% of its events.
func cutCluster(t *testing.T) (dir, trace string) {
	t.Helper()
	sc, _ := tracegen.Lookup("ep-fc1-cumsum")
	sc.Layers, sc.Steps = 2, 2
	dir = t.TempDir()
	truth, err := tracegen.Generate(dir, sc)
	require.NoError(t, err)
	trace = filepath.Join(dir, truth.Ranks[3].Dir, tracegen.OutputDir, "trace_view.json")
	_, err = tracegen.CutTrace(trace, 0.4)
	require.NoError(t, err)
	return dir, trace
}

func findingIn(t *testing.T, doc *results.Document, rule string) results.Finding {
	t.Helper()
	for _, f := range doc.Findings {
		if f.Rule == rule {
			return f
		}
	}
	t.Fatalf("no finding %s", rule)
	return results.Finding{}
}

// A finding computed from a truncated trace says so in the terminal, the
// JSON document, JUnit, SARIF and HTML; check gates on it by default and
// not with --partial-findings report.
func TestCheckPartialFindings(t *testing.T) {
	dir, trace := cutCluster(t)
	out := t.TempDir()
	junit, sarif, js := filepath.Join(out, "r.xml"), filepath.Join(out, "r.sarif"), filepath.Join(out, "r.json")

	// JSON document: the finding names rank 3, the metrics and the phases
	code, _, errs := run("check", dir, "-q", "--format", "json", "-o", js, "--junit", junit, "--sarif", sarif)
	require.Equal(t, ExitFindings, code, errs)
	require.Contains(t, errs, "of them from a truncated file")
	f, err := os.Open(js)
	require.NoError(t, err)
	doc, err := results.Read(f, js)
	f.Close()
	require.NoError(t, err)
	var partialMetrics []string
	for _, rd := range doc.Ranks {
		if rd.Rank == 3 {
			require.True(t, rd.Partial)
			partialMetrics = rd.PartialMetrics
		}
	}
	fd := findingIn(t, doc, "moe-routing-cumsum")
	require.Len(t, fd.Partial, 1)
	require.Equal(t, 3, fd.Partial[0].Rank)
	require.Contains(t, fd.Partial[0].Reason, trace+" is truncated: it ends inside an event at byte ")
	require.Equal(t, []string{"device.window.time_us", "moe.cumsum.aicpu.count", "moe.cumsum.aicpu.time_us", "moe.cumsum.count", "moe.cumsum.time_us", "moe.routing.count"}, fd.Partial[0].Metrics)
	for _, m := range fd.Partial[0].Metrics {
		require.Contains(t, partialMetrics, m, "a finding's partial metric is one of the rank's partial_metrics")
	}
	require.Equal(t, []string{"when", "saving", "severity", "evidence", "text"}, fd.Partial[0].UsedIn)
	require.True(t, fd.SavingUncertain)
	// the raw keys, as documented
	raw, err := os.ReadFile(js)
	require.NoError(t, err)
	for _, k := range []string{`"partial": [`, `"used_in": [`, `"saving_uncertain": true`, `"partial_ranks": [`} {
		require.Contains(t, string(raw), k)
	}
	gated := 0
	for _, x := range results.AtOrAbove(doc.Findings, "high") {
		require.NotEmpty(t, x.Partial, "%s: every high finding here reads rank 3", x.Rule)
		gated++
	}
	require.Positive(t, gated)

	// JUnit: the failure message leads with the caveat
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &suites))
	failures := 0
	for _, c := range suites.Suites[0].Cases {
		if c.Failure == nil {
			continue
		}
		failures++
		require.True(t, strings.HasPrefix(c.Failure.Message, "[partial input: rank 3 cut short] "), c.Failure.Message)
		require.Contains(t, c.Failure.Text, "partial input: rank 3 (")
	}
	require.Equal(t, gated, failures)

	// SARIF: the caveat leads the message; the details are properties
	b, err = os.ReadFile(sarif)
	require.NoError(t, err)
	checkSARIFStructure(t, b)
	validateSARIFSchema(t, b)
	sr := sarifResults(t, b)
	r := sr["moe-routing-cumsum"]
	require.True(t, strings.HasPrefix(r.Message.Text, "[partial input: rank 3 ("), r.Message.Text)
	require.Equal(t, true, r.Properties["saving_uncertain"])
	p := r.Properties["partial"].([]any)[0].(map[string]any)
	require.Equal(t, 3.0, p["rank"])
	require.Contains(t, p["metrics"], "moe.cumsum.time_us")

	// terminal: caveat line, uncertain saving, evidence tags, verdict
	code, text, _ := run("check", dir, "-q")
	require.Equal(t, ExitFindings, code)
	requireText(t, text, "PARTIAL rank 3: "+trace+" is truncated")
	requireText(t, text, "      ! partial input: rank 3 (device.window.time_us, moe.cumsum.aicpu.count, moe.cumsum.aicpu.time_us, moe.cumsum.count, moe.cumsum.time_us, moe.routing.count; used in when, saving, severity, evidence, text) measured over only the complete part of a file cut short; the saving is uncertain")
	require.Contains(t, text, ", uncertain: read from a truncated file)")
	require.Contains(t, text, " of them from a truncated file): FAIL")
	require.NotContains(t, text, "[partial: rank 3 cut short]", "the summary shows no evidence")
	_, text, _ = run("check", dir, "-q", "--detail", "all")
	require.Contains(t, text, "[partial: rank 3 cut short]")

	// --partial-findings report: shown, labelled, not gated
	code, text, errs = run("check", dir, "-q", "--partial-findings", "report", "--junit", junit, "--sarif", sarif)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, text, "! partial input: rank 3")
	require.Contains(t, text, "more from a truncated file, not gated: --partial-findings report): PASS")
	b, err = os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(b), `failures="0"`)
	require.Contains(t, string(b), "not gated: --partial-findings report] [partial input: rank 3 cut short]")
	b, err = os.ReadFile(sarif)
	require.NoError(t, err)
	require.Equal(t, "note", sarifResults(t, b)["moe-routing-cumsum"].Level)

	// a bad value is a usage error
	code, _, errs = run("check", dir, "--partial-findings", "ignore")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, `--partial-findings "ignore": expected gate or report`)

	// HTML report
	html := filepath.Join(out, "r.html")
	code, _, errs = run("report", dir, "-q", "-o", html)
	require.Equal(t, ExitOK, code, errs)
	b, err = os.ReadFile(html)
	require.NoError(t, err)
	require.Contains(t, string(b), `<p class="partial-input" role="note"><b>Partial input.</b> rank 3 (device.window.time_us`)
	require.Contains(t, string(b), `<span class="partial-tag">partial: rank 3 cut short</span>`)
	require.Contains(t, string(b), `<span class="uncertain">uncertain</span>`)
}

// The intact demo: no finding carries partial input, in any output.
func TestCheckWholeInputsNotPartial(t *testing.T) {
	out := t.TempDir()
	js, sarif := filepath.Join(out, "r.json"), filepath.Join(out, "r.sarif")
	code, text, errs := run("check", demo, "-q", "--sarif", sarif)
	require.Equal(t, ExitFindings, code, errs)
	require.NotContains(t, text, "partial")
	require.NotContains(t, text, "uncertain")
	require.NotContains(t, errs, "truncated")
	code, _, _ = run("check", demo, "-q", "--format", "json", "-o", js)
	require.Equal(t, ExitFindings, code)
	raw, err := os.ReadFile(js)
	require.NoError(t, err)
	for _, k := range []string{`"partial"`, `"saving_uncertain"`, `"partial_ranks"`, `"used_in"`} {
		require.NotContains(t, string(raw), k)
	}
	b, err := os.ReadFile(sarif)
	require.NoError(t, err)
	require.NotContains(t, string(b), "partial")
}

type sarifResultT struct {
	Level   string `json:"level"`
	Message struct {
		Text string `json:"text"`
	} `json:"message"`
	Properties map[string]any `json:"properties"`
}

func sarifResults(t *testing.T, b []byte) map[string]sarifResultT {
	t.Helper()
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
				sarifResultT
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &log))
	out := map[string]sarifResultT{}
	for _, r := range log.Runs[0].Results {
		out[r.RuleID] = r.sarifResultT
	}
	return out
}
