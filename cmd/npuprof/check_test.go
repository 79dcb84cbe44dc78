package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

const demo = "../../testdata/traces/ep-fc1-cumsum"
const fieldScript = "../../testdata/deploy/field-report-1.sh"

var (
	genOnce sync.Once
	genDir  string
)

// captured returns a generated profile on which no high-severity rule
// fires (every decode step is a graph replay, no Cumsum, no FLASHCOMM1).
func captured(t *testing.T) string {
	genOnce.Do(func() {
		d, err := os.MkdirTemp("", "npuprof-check")
		if err != nil {
			panic(err)
		}
		sc, _ := tracegen.Lookup("captured-batch")
		sc.Layers, sc.Steps, sc.CommJSON = 4, 2, false
		if _, err := tracegen.Generate(d, sc); err != nil {
			panic(err)
		}
		genDir = d
	})
	return genDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if genDir != "" {
		os.RemoveAll(genDir)
	}
	os.Exit(code)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// Exit codes of check, each with a test: 0, 1, 2, 3.
func TestCheckExitCodes(t *testing.T) {
	t.Run("0 nothing at or above fail-on", func(t *testing.T) {
		code, out, errs := run("check", captured(t), "--fail-on", "high")
		require.Equal(t, ExitOK, code, out+errs)
		require.Contains(t, out, "check: ")
		require.Contains(t, out, ": PASS")
		require.Empty(t, errs)
	})
	t.Run("1 findings at or above fail-on", func(t *testing.T) {
		code, out, errs := run("check", demo)
		require.Equal(t, ExitFindings, code)
		require.Contains(t, out, "comm-ep-flashcomm")
		require.Contains(t, out, ": FAIL")
		require.Contains(t, errs, "finding(s) at or above high")
		// a low finding fails only with --fail-on low
		code, _, _ = run("check", captured(t), "--fail-on", "low")
		require.Equal(t, ExitFindings, code)
	})
	t.Run("2 usage or input error", func(t *testing.T) {
		for _, args := range [][]string{
			{"check", demo, "--fail-on", "urgent"},
			{"check", "/no/such/profile"},
			{"check"},
			{"check", demo, "--rules", "/no/such/rules.yaml"},
			{"check", demo, "--deploy", "/no/such/serve.sh"},
			{"check", demo, "--fact", "tpp=8"},
			{"analyze", demo, "--format", "json", "--fact", "serving.output_tps=NaN"},
			{"check", demo, "--budget", "hccl.total.time_us <= baseline"},
			{"check", demo, "--baseline", "/no/such/old.json"},
			{"check", demo, "--format", "xml"},
		} {
			code, _, errs := run(args...)
			require.Equal(t, ExitUsage, code, "%v: %s", args, errs)
			require.NotEmpty(t, errs, "%v", args)
		}
	})
	t.Run("3 a rule failed to run", func(t *testing.T) {
		bad := writeFile(t, "bad.yaml", `rules:
  - id: broken-rule
    title: t
    when: int("x" + string(metric("hccl.total.count"))) > 0
    fix: f
`)
		code, out, errs := run("check", captured(t), "--rules", bad)
		require.Equal(t, ExitInternal, code, errs)
		require.Contains(t, out, "FAILED: broken-rule")
		require.Contains(t, errs, "broken-rule")
		// analyze reports it the same way
		code, _, _ = run("analyze", captured(t), "--rules", bad)
		require.Equal(t, ExitInternal, code)
	})
}

// A rule file with an unknown metric name: exit 2, file:line:col and the
// closest known names.
func TestCheckUnknownMetric(t *testing.T) {
	f := writeFile(t, "team.yaml", `rules:
  - id: team-allgather
    title: all-gathers
    when: metric("hccl.allgathr.time_us") > 100
    fix: check FLASHCOMM1
  - id: team-cumsum
    title: cumsum
    when: metric("moe.cumsum.cnt") > 0
    fix: fix it
`)
	code, _, errs := run("check", demo, "--rules", f)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, f+":4:18: rule team-allgather: when: unknown metric \"hccl.allgathr.time_us\" (closest: hccl.allgather.time_us")
	require.Contains(t, errs, f+":8:18: rule team-cumsum: when: unknown metric \"moe.cumsum.cnt\" (closest: moe.cumsum.count")
}

func TestCheckJUnitAndSARIF(t *testing.T) {
	dir := t.TempDir()
	junit, sarif := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.sarif")
	code, _, errs := run("check", demo, "--deploy", fieldScript, "--junit", junit, "--sarif", sarif, "-q")
	require.Equal(t, ExitFindings, code, errs)

	// JUnit: one case per rule, failures = findings at or above high
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name    string `xml:"name,attr"`
			Skipped int    `xml:"skipped,attr"`
			Cases   []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &suites))
	require.Len(t, suites.Suites, 1)
	require.Equal(t, 20, suites.Tests)
	require.Len(t, suites.Suites[0].Cases, 20)
	failed := map[string]bool{}
	for _, c := range suites.Suites[0].Cases {
		if c.Failure != nil {
			failed[c.Name] = true
			require.Equal(t, "high", c.Failure.Type)
			require.NotEmpty(t, c.Failure.Message)
		}
		if c.Name == "vllm-ascend-upgrade" {
			require.NotNil(t, c.Skipped)
			require.Contains(t, c.Skipped.Message, "vllm_ascend_version unknown")
		}
	}
	require.True(t, failed["comm-ep-flashcomm"])
	require.True(t, failed["graph-capture-sizes"])
	require.Equal(t, len(failed), suites.Failures)
	require.Equal(t, 9, suites.Suites[0].Skipped) // vllm-ascend-upgrade, mm-cache (no vLLM log); host-bound (not for vllm), moe-dispatch-combine (allgather); the five service-* (no service profile)

	// SARIF: structure, locations in the deployment script
	b, err = os.ReadFile(sarif)
	require.NoError(t, err)
	checkSARIFStructure(t, b)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }     `json:"artifactLocation"`
						Region           *struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &log))
	byRule := map[string]int{}
	for i, r := range log.Runs[0].Results {
		byRule[r.RuleID] = i
	}
	r := log.Runs[0].Results[byRule["comm-ep-flashcomm"]]
	require.Equal(t, "error", r.Level)
	loc := r.Locations[0].PhysicalLocation
	require.True(t, strings.HasSuffix(loc.ArtifactLocation.URI, "field-report-1.sh"), loc.ArtifactLocation.URI)
	require.Equal(t, 11, loc.Region.StartLine) // the FLASHCOMM1 export
	r = log.Runs[0].Results[byRule["moe-routing-cumsum"]]
	require.Contains(t, r.Locations[0].PhysicalLocation.ArtifactLocation.URI, "ep-fc1-cumsum") // no script change: the profile
	validateSARIFSchema(t, b)
}

// checkSARIFStructure checks the properties SARIF 2.1.0 requires of what
// npuprof writes (§3.13 sarifLog, §3.14 run, §3.18 tool, §3.19 driver,
// §3.27 result, §3.49 reportingDescriptor), independent of the schema file.
func checkSARIFStructure(t *testing.T, b []byte) {
	t.Helper()
	var log map[string]any
	require.NoError(t, json.Unmarshal(b, &log))
	require.Equal(t, "2.1.0", log["version"])
	runs := log["runs"].([]any)
	require.Len(t, runs, 1)
	run := runs[0].(map[string]any)
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	require.Equal(t, "npuprof", driver["name"])
	ruleIDs := map[string]bool{}
	for _, r := range driver["rules"].([]any) {
		rm := r.(map[string]any)
		require.NotEmpty(t, rm["id"])
		ruleIDs[rm["id"].(string)] = true
		require.Contains(t, []any{"none", "note", "warning", "error"}, rm["defaultConfiguration"].(map[string]any)["level"])
	}
	results := run["results"].([]any)
	require.NotNil(t, results)
	for _, r := range results {
		rm := r.(map[string]any)
		require.True(t, ruleIDs[rm["ruleId"].(string)])
		require.Contains(t, []any{"none", "note", "warning", "error"}, rm["level"])
		require.NotEmpty(t, rm["message"].(map[string]any)["text"])
		idx := int(rm["ruleIndex"].(float64))
		require.Equal(t, rm["ruleId"], driver["rules"].([]any)[idx].(map[string]any)["id"])
		for _, l := range rm["locations"].([]any) {
			pl := l.(map[string]any)["physicalLocation"].(map[string]any)
			require.NotEmpty(t, pl["artifactLocation"].(map[string]any)["uri"])
			if reg, ok := pl["region"].(map[string]any); ok {
				require.GreaterOrEqual(t, reg["startLine"].(float64), 1.0)
			}
		}
	}
	inv := run["invocations"].([]any)[0].(map[string]any)
	require.Contains(t, inv, "executionSuccessful")
}

// sarifSchema finds the official SARIF 2.1.0 JSON schema (OASIS, errata01:
// sarif-2.1/schema/sarif-schema-2.1.0.json in github.com/oasis-tcs/sarif-spec):
// $NPUPROF_SARIF_SCHEMA, else sarif-schema-2.1.0.json in the shared formats
// folder beside the repository (testutil.SharedFile: from a clone or a
// worktree). It is not committed here. "" and where it looked when absent.
func sarifSchema() (path, looked string) {
	if p := os.Getenv("NPUPROF_SARIF_SCHEMA"); p != "" {
		return p, ""
	}
	return testutil.SharedFile("sarif-schema-2.1.0.json")
}

// validateSARIFSchema validates b against the SARIF schema; without the
// schema it says so in one line (and in the skip log) and checks nothing.
func validateSARIFSchema(t *testing.T, b []byte) {
	t.Helper()
	path, looked := sarifSchema()
	if path == "" {
		testutil.Skipped(t, "the SARIF schema validation (cmd/npuprof)", "no sarif-schema-2.1.0.json: "+looked+" (set NPUPROF_SARIF_SCHEMA): validated the required structure only")
		return
	}
	f, err := os.Open(path)
	require.NoError(t, err, "NPUPROF_SARIF_SCHEMA")
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("sarif-schema-2.1.0.json", schemaDoc))
	sch, err := c.Compile("sarif-schema-2.1.0.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))
	// and the validator is live: a wrong level is rejected
	bad, err := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(string(b), `"level": "error"`, `"level": "fatal"`, 1)))
	require.NoError(t, err)
	require.Error(t, sch.Validate(bad))
}

func TestAnalyzeWithDeployJSON(t *testing.T) {
	code, out, errs := run("analyze", demo, "--deploy", fieldScript, "--fact", "concurrency=25", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Findings []struct {
			Rule     string   `json:"rule"`
			Severity string   `json:"severity"`
			Title    string   `json:"title"`
			Ranks    []int    `json:"ranks"`
			Fix      string   `json:"fix"`
			Diff     string   `json:"diff"`
			SavingUs *float64 `json:"saving_us"`
			Evidence []any    `json:"evidence"`
		} `json:"findings"`
		Facts []struct {
			Name   string `json:"name"`
			Source string `json:"source"`
		} `json:"facts"`
		Rules []struct {
			Rule, Status string
		} `json:"rules"`
		DeployDiff string `json:"deploy_diff"`
		Cluster    struct {
			Metrics map[string]float64 `json:"metrics"`
		} `json:"cluster"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.GreaterOrEqual(t, len(doc.Findings), 3)
	for i, f := range doc.Findings {
		require.NotEmpty(t, f.Rule)
		require.NotEmpty(t, f.Fix)
		require.NotEmpty(t, f.Evidence)
		if i > 0 {
			// no estimate (null) orders as 0
			require.GreaterOrEqual(t, orZero(doc.Findings[i-1].SavingUs), orZero(f.SavingUs))
		}
	}
	require.Len(t, doc.Rules, 20)
	script, err := os.ReadFile(fieldScript)
	require.NoError(t, err)
	after, err := testutil.ApplyUnifiedDiff(string(script), doc.DeployDiff)
	require.NoError(t, err)
	require.NotContains(t, after, "--enable-expert-parallel")
	require.NotContains(t, after, "VLLM_ASCEND_ENABLE_FLASHCOMM1")
	require.Contains(t, after, `--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25]}'`)
	src := map[string]string{}
	for _, f := range doc.Facts {
		src[f.Name] = f.Source
	}
	require.Equal(t, "--fact concurrency=25", src["concurrency"])
	require.Contains(t, src["tp"], "field-report-1.sh:16")
	require.Contains(t, src["ep"], "parallel_group_info")
	require.Contains(t, doc.Cluster.Metrics, "skew.moe.gmm.max_over_mean")
}

func TestBaselineBudgets(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	code, _, errs := run("analyze", demo, "--format", "json", "-o", old)
	require.Equal(t, ExitOK, code, errs)
	// the same profile is within budget; a tighter budget than itself is not
	code, out, errs := run("check", captured(t), "--baseline", old, "--budget", "moe.cumsum.count <= baseline", "--fail-on", "high")
	require.Equal(t, ExitOK, code, out+errs)
	// check --baseline shows what changed, with the diff engine
	require.Contains(t, out, "Compared with the baseline ")
	require.Contains(t, out, "resolved: moe-routing-cumsum (predicted ")
	require.Contains(t, out, "measured ")
	require.Contains(t, out, "collectives gone: allgather on ep")
	code, out, _ = run("check", demo, "--baseline", old, "--budget", "hccl.total.time_us <= baseline * 0.5", "--fail-on", "high", "--format", "json")
	require.Equal(t, ExitFindings, code)
	require.Contains(t, out, `"rule": "budget/hccl.total.time_us"`)
	var withDiff struct {
		BaselineDiff struct {
			Schema string `json:"schema"`
			Steps  []any  `json:"steps"`
		} `json:"baseline_diff"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &withDiff))
	require.Equal(t, "npuprof.diff/v1", withDiff.BaselineDiff.Schema)
	// budgets in a rule file work the same way
	f := writeFile(t, "budgets.yaml", "budgets:\n  - id: no-more-allgather\n    budget: hccl.allgather.time_us <= baseline * 1.05\n")
	code, out, errs = run("check", demo, "--baseline", old, "--rules", f, "--fail-on", "high", "--format", "json")
	require.Equal(t, ExitFindings, code, errs) // the built-in rules fire on the demo
	require.Contains(t, out, `"rule": "no-more-allgather"`)
	require.Contains(t, out, `"status": "clear"`)
}

func TestRulesListAndExplain(t *testing.T) {
	code, out, errs := run("rules", "list")
	require.Equal(t, ExitOK, code, errs)
	for _, id := range []string{"comm-ep-flashcomm", "moe-routing-cumsum", "graph-capture-sizes", "expert-imbalance",
		"event-wait-skew", "host-bound-free", "parallel-strategy", "env-hygiene", "vllm-ascend-upgrade"} {
		require.Contains(t, out, id)
	}
	code, out, errs = run("rules", "explain", "moe-routing-cumsum")
	require.Equal(t, ExitOK, code, errs)
	for _, s := range []string{"Why", "Fires when", `metric("moe.cumsum.count") > 0`, "Estimated saving", "Fix (template)",
		"expert_tokens_num_type=0", "moe.cumsum.time_us"} {
		require.Contains(t, out, s)
	}
	code, out, _ = run("rules", "explain", "comm-ep-flashcomm")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "threshold.min_per_layer = 3")
	require.Contains(t, out, "remove_flag --enable-expert-parallel")
	code, _, errs = run("rules", "explain", "moe-routing-cumsun")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "did you mean moe-routing-cumsum?")
}

// A bad --budget is named by its text, not by a position in the YAML
// npuprof wraps the flags in: "--budget:2:5: budget: unknown metric" (line
// 2, column 5 of nothing the user wrote) named neither which --budget nor
// where in it.
func TestBadBudgetNamesTheFlag(t *testing.T) {
	old := filepath.Join(t.TempDir(), "old.json")
	code, _, errs := run("analyze", demo, "--format", "json", "-o", old)
	require.Equal(t, ExitOK, code, errs)
	code, _, errs = run("check", demo, "-q", "--baseline", old,
		"--budget", "hccl.total.time_us <= baseline", "--budget", "nonexist.metric <= baseline")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, `--budget 'nonexist.metric <= baseline': budget: unknown metric "nonexist.metric"`)
	require.NotContains(t, errs, "--budget:")
	code, _, errs = run("check", demo, "-q", "--baseline", old, "--budget", "hccl.total.time_us <= ")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, `--budget 'hccl.total.time_us <= ': `)
	require.NotContains(t, errs, "--budget:")

	// a budget that fails while it runs (a rule that failed: exit 3) is
	// named the same way
	code, out, errs := run("check", demo, "-q", "--baseline", old, "--budget", "hccl.total.time_us <= baseline / 0")
	require.Equal(t, ExitInternal, code, errs)
	requireText(t, out, `FAILED: budget/hccl.total.time_us: --budget 'hccl.total.time_us <= baseline / 0': division by zero in baseline / 0 (baseline is 1371.274)`)
	require.Contains(t, errs, `--budget 'hccl.total.time_us <= baseline / 0': division by zero in baseline / 0 (baseline is 1371.274)`)
	require.NotContains(t, out+errs, "--budget:")
}

// A user rule without `why` (optional) is listed and explained without an
// empty "Why" section or a blank description line.
func TestRulesListExplainWithoutWhy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.yaml")
	require.NoError(t, os.WriteFile(file, []byte("rules:\n  - id: team-x\n    title: x\n    when: \"true\"\n    fix: f\n"), 0o644))
	code, out, stderr := run("rules", "explain", "team-x", "--rules", file)
	require.Equal(t, ExitOK, code, stderr)
	require.NotContains(t, out, "Why\n")
	require.Contains(t, out, "Fires when")
	code, out, stderr = run("rules", "list", "--rules", file)
	require.Equal(t, ExitOK, code, stderr)
	require.True(t, strings.HasSuffix(out, "team-x                 auto    "+file+":2\n"), out[max(0, len(out)-200):])
}

// A rule that divides by zero fails to run (exit 3), named by id, file and
// line, expression and operand, in the text, the JSON rules[] and stderr;
// it never fires on +Inf.
func TestCheckRuleDividingByZero(t *testing.T) {
	f := writeFile(t, "div.yaml", `rules:
  - id: per-collective
    title: t
    severity: high
    when: metric("hccl.total.time_us") / (metric("hccl.total.count") - metric("hccl.total.count")) > 0.5
    fix: f
`)
	code, out, errs := run("check", demo, "--rules", f)
	require.Equal(t, ExitInternal, code, errs)
	want := `division by zero in metric("hccl.total.time_us") / (metric("hccl.total.count") - metric("hccl.total.count")): metric("hccl.total.count") - metric("hccl.total.count") is 0`
	requireText(t, out, "FAILED: per-collective: "+f+":2: when: "+want)
	require.NotContains(t, out, "(per-collective,", "no finding")
	require.Contains(t, errs, "per-collective: "+f+":2: when: division by zero")

	code, out, _ = run("check", demo, "--rules", f, "--format", "json")
	require.Equal(t, ExitInternal, code)
	var doc struct {
		Findings []struct{ Rule string }
		Rules    []struct{ Rule, Status, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	for _, x := range doc.Findings {
		require.NotEqual(t, "per-collective", x.Rule)
	}
	found := false
	for _, o := range doc.Rules {
		if o.Rule == "per-collective" {
			found = true
			require.Equal(t, "failed", o.Status)
			require.Contains(t, o.Reason, want)
		} else {
			require.NotEqual(t, "failed", o.Status, "built-in %s on the demo trace", o.Rule)
		}
	}
	require.True(t, found)

}

// An unknown cudagraph_mode: from --fact a usage error naming the closest
// mode; from the user's script a warning naming file and line, the run goes
// on and the fact is unknown (not in the document's facts).
func TestCUDAGraphModeValidated(t *testing.T) {
	code, _, errs := run("analyze", demo, "--fact", "cudagraph_mode=FULL_DECODE", "--format", "json")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, `--fact cudagraph_mode=FULL_DECODE: cudagraph_mode "FULL_DECODE" is not a vLLM CUDAGraphMode`)
	require.Contains(t, errs, "closest: FULL_DECODE_ONLY")

	script := filepath.Join(t.TempDir(), "serve.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nvllm serve Qwen/Qwen3-235B-A22B \\\n  --max-num-seqs 32 \\\n  --compilation-config '{\"cudagraph_mode\":\"FULL_DECODE\"}'\n"), 0o644))
	warning := script + `:4 (--compilation-config): cudagraph_mode "FULL_DECODE" is not a vLLM CUDAGraphMode (NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE); closest: FULL_DECODE_ONLY; the fact is left unknown`
	code, out, errs := run("analyze", demo, "--deploy", script, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Warnings []string `json:"warnings"`
		Facts    []struct {
			Name string `json:"name"`
		} `json:"facts"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	names := map[string]bool{}
	for _, f := range doc.Facts {
		names[f.Name] = true
	}
	require.True(t, names["max_num_seqs"], "the script's other facts are used")
	require.False(t, names["cudagraph_mode"], "the unknown mode is not a fact")
	require.Contains(t, doc.Warnings, warning)
	// the terminal summary says it too
	code, out, errs = run("analyze", demo, "--deploy", script)
	require.Equal(t, ExitOK, code, errs)
	requireText(t, out, "warning: "+warning)
}

// A clean graph-mode capture gates green: no HIGH finding (its idle is
// between decode steps, not the launch path's), so check --fail-on high
// exits 0; an imbalanced EP capture's waiting ranks are not called host
// bound.
func TestCleanGraphCaptureAndImbalanceAreNotHostBound(t *testing.T) {
	dir := genScenario(t, "captured-batch")
	code, out, errs := run("check", dir, "--fail-on", "high")
	require.Equal(t, ExitOK, code, errs)
	require.NotContains(t, out, "[HIGH]")
	require.NotContains(t, out, "host bound")

	code, out, errs = run("analyze", genScenario(t, "hot-rank"), "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Findings []struct{ Rule, Title, Fix string }
		Rules    []struct{ Rule, Status string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.NotEmpty(t, doc.Findings)
	for _, f := range doc.Findings {
		require.NotContains(t, f.Title, "host bound", f.Rule)
	}
	for _, o := range doc.Rules {
		if o.Rule == "host-bound-free" {
			require.Equal(t, "clear", o.Status)
		}
	}
}

// orZero is *p, 0 for nil (a finding without a saving estimate orders as 0).
func orZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// check on a folder it cannot analyze (the Level2 text sample has no
// device data) exits 2 and still writes the JUnit and SARIF it was asked
// for, so a CI job that collects them sees the error: one errored test
// case naming the input, and a run whose invocation failed with the error
// as a notification. Both validate against their schemas.
func TestCheckInputErrorWritesReports(t *testing.T) {
	in := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level2/rank0_ascend_pt")
	dir := t.TempDir()
	junit, sarif := filepath.Join(dir, "j.xml"), filepath.Join(dir, "s.sarif")
	code, out, errs := run("check", in, "-q", "--junit", junit, "--sarif", sarif)
	require.Equal(t, ExitUsage, code, errs)
	require.Empty(t, out)
	msg := in + ": nothing to check: no rank has device data"
	require.Contains(t, errs, msg)

	validateJUnitSchema(t, junit)
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites struct {
		Tests  int `xml:"tests,attr"`
		Errors int `xml:"errors,attr"`
		Suites []struct {
			Name   string `xml:"name,attr"`
			Tests  int    `xml:"tests,attr"`
			Errors int    `xml:"errors,attr"`
			Cases  []struct {
				Name      string `xml:"name,attr"`
				ClassName string `xml:"classname,attr"`
				Error     *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &suites), string(b))
	require.Equal(t, 1, suites.Tests)
	require.Equal(t, 1, suites.Errors)
	require.Len(t, suites.Suites, 1)
	s := suites.Suites[0]
	require.Equal(t, "npuprof check "+in, s.Name)
	require.Equal(t, 1, s.Errors)
	require.Len(t, s.Cases, 1)
	c := s.Cases[0]
	require.Equal(t, in, c.Name)
	require.Equal(t, "npuprof.input", c.ClassName)
	require.NotNil(t, c.Error)
	require.Equal(t, "input-error", c.Error.Type)
	require.Contains(t, c.Error.Message, msg)
	require.Contains(t, c.Error.Text, "has no trace_view.json")

	b, err = os.ReadFile(sarif)
	require.NoError(t, err)
	validateSARIFSchema(t, b)
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct{ Name string } `json:"driver"`
			} `json:"tool"`
			Results     []any `json:"results"`
			Invocations []struct {
				ExecutionSuccessful *bool `json:"executionSuccessful"`
				Notes               []struct {
					Level   string `json:"level"`
					Message struct{ Text string }
					Locs    []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string } `json:"artifactLocation"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &log), string(b))
	require.Equal(t, "2.1.0", log.Version)
	require.Len(t, log.Runs, 1)
	r := log.Runs[0]
	require.Equal(t, "npuprof", r.Tool.Driver.Name)
	require.NotNil(t, r.Results)
	require.Empty(t, r.Results)
	require.Len(t, r.Invocations, 1)
	require.NotNil(t, r.Invocations[0].ExecutionSuccessful)
	require.False(t, *r.Invocations[0].ExecutionSuccessful)
	require.Len(t, r.Invocations[0].Notes, 1)
	n := r.Invocations[0].Notes[0]
	require.Equal(t, "error", n.Level)
	require.Contains(t, n.Message.Text, msg)
	require.Len(t, n.Locs, 1)
	abs, err := filepath.Abs(in)
	require.NoError(t, err)
	require.Equal(t, "file://"+abs, n.Locs[0].PhysicalLocation.ArtifactLocation.URI)

	// an input FILE flag naming nothing: reported in the JUnit too
	code, _, errs = run("check", in, "-q", "--rules", "/no/such.yaml", "--junit", junit)
	require.Equal(t, ExitUsage, code)
	b, err = os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(b), `type="input-error"`)
	require.Contains(t, string(b), "/no/such.yaml")
	require.Contains(t, errs, "/no/such.yaml")
	validateJUnitSchema(t, junit)

	// a usage error before the outputs are known writes nothing
	code, _, _ = run("check", in, "-q", "--fail-on", "severe", "--junit", junit+"2")
	require.Equal(t, ExitUsage, code)
	require.NoFileExists(t, junit+"2")
}
