package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// validateJUnitSchema checks a JUnit report against the shared JUnit
// schema (junitSchema) with xmllint, when both exist; without either it
// says so in one line (and in the skip log) and checks nothing.
func validateJUnitSchema(t *testing.T, path string) {
	t.Helper()
	const what = "the JUnit schema validation (cmd/npuprof)"
	xsd, looked := junitSchema()
	if xsd == "" {
		testutil.Skipped(t, what, "no junit-10.xsd: "+looked)
		return
	}
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		testutil.Skipped(t, what, "xmllint not found (install it with: apt-get install -y libxml2-utils)")
		return
	}
	out, err := exec.Command(lint, "--noout", "--schema", xsd, path).CombinedOutput()
	require.NoError(t, err, string(out))
}

// outcomes returns each rule's status and reason from a JSON document.
func outcomes(t *testing.T, out string) map[string][2]string {
	t.Helper()
	var doc struct {
		Rules []struct{ Rule, Status, Reason string } `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	m := map[string][2]string{}
	for _, o := range doc.Rules {
		m[o.Rule] = [2]string{o.Status, o.Reason}
	}
	return m
}

// --disable, --only and --no-builtin on analyze, check, report and diff,
// and the same keys in a rules file.
func TestRuleSelection(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := run("analyze", demo, "--format", "json", "--disable", "comm-bound,moe-routing-cumsum")
	require.Equal(t, ExitOK, code, errs)
	o := outcomes(t, out)
	require.Equal(t, [2]string{"disabled", "switched off by --disable"}, o["comm-bound"])
	require.Equal(t, "disabled", o["moe-routing-cumsum"][0])
	require.Equal(t, "fired", o["graph-capture-sizes"][0])
	require.NotContains(t, out, `"rule": "comm-bound",
      "title"`)

	code, out, errs = run("analyze", demo, "--format", "json", "--only", "comm-bound")
	require.Equal(t, ExitOK, code, errs)
	o = outcomes(t, out)
	require.Equal(t, "fired", o["comm-bound"][0])
	require.Equal(t, [2]string{"disabled", "not in --only comm-bound"}, o["graph-capture-sizes"])

	code, _, errs = run("analyze", demo, "--disable", "comm-bond")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, `--disable: no rule "comm-bond" (closest: comm-bound`)

	// a rules file: its own rule, no built-in rules, one of its rules off
	team := filepath.Join(dir, "team.yaml")
	require.NoError(t, os.WriteFile(team, []byte(`no_builtin: true
disable: [team-quiet]
rules:
  - id: team-collectives
    title: "{{ int(metric(\"hccl.total.count\")) }} collectives per rank"
    severity: high
    when: metric("hccl.total.count") > 0
    fix: fewer collectives
  - id: team-quiet
    title: never shown
    when: "true"
    fix: none
`), 0o644))
	junit, sarif := filepath.Join(dir, "j.xml"), filepath.Join(dir, "s.sarif")
	code, out, errs = run("check", demo, "--rules", team, "--fail-on", "high", "--junit", junit, "--sarif", sarif)
	require.Equal(t, ExitFindings, code, errs)
	require.Contains(t, out, "Rules: 1 fired, 0 clear, 0 not evaluated, 0 failed, 21 disabled")
	require.Contains(t, out, "team-quiet: switched off by "+team+" disable:")
	requireText(t, out, "a built-in rule, switched off by "+team+" no_builtin:")

	// JUnit: disabled rules are skipped test cases; the report validates
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites struct {
		Suites []struct {
			Skipped int `xml:"skipped,attr"`
			Cases   []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &suites))
	require.Equal(t, 21, suites.Suites[0].Skipped)
	for _, c := range suites.Suites[0].Cases {
		if c.Name != "team-collectives" {
			require.NotNil(t, c.Skipped, c.Name)
			require.True(t, strings.HasPrefix(c.Skipped.Message, "disabled: "), c.Skipped.Message)
		}
	}
	validateJUnitSchema(t, junit)

	// SARIF: no result of a disabled rule; each is listed, enabled false
	b, err = os.ReadFile(sarif)
	require.NoError(t, err)
	checkSARIFStructure(t, b)
	validateSARIFSchema(t, b)
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID     string `json:"id"`
						Config struct {
							Enabled *bool `json:"enabled"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &log))
	var results []string
	for _, r := range log.Runs[0].Results {
		results = append(results, r.RuleID)
	}
	require.Equal(t, []string{"team-collectives"}, results)
	off := 0
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		if r.ID == "team-collectives" {
			require.Nil(t, r.Config.Enabled)
			continue
		}
		require.NotNil(t, r.Config.Enabled, r.ID)
		require.False(t, *r.Config.Enabled, r.ID)
		off++
	}
	require.Equal(t, 21, off)

	// report and diff take the same flags
	html := filepath.Join(dir, "r.html")
	code, _, errs = run("report", demo, "-o", html, "--no-builtin")
	require.Equal(t, ExitOK, code, errs)
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	require.NotContains(t, string(page), "Decode batch 32 has no captured graph")
	code, out, errs = run("diff", demo, demo, "--format", "json", "--only", "comm-bound")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, `"comm-bound"`)
	require.NotContains(t, out, `"graph-capture-sizes"`)
}
