package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// rules test runs a case file on the built-in rules and --rules files:
// each case ok or FAIL with how it differs, exit 1 when one fails, 2 when
// a case file has a problem.
func TestRulesTest(t *testing.T) {
	dir := t.TempDir()
	rule := filepath.Join(dir, "team.yaml")
	require.NoError(t, os.WriteFile(rule, []byte(`rules:
  - id: team-idle
    title: "idle {{ pct(metric(\"overlap.free.time_us\") / metric(\"device.window.time_us\")) }}"
    when: metric("overlap.free.time_us") > 0.5 * metric("device.window.time_us")
    saving: metric("overlap.free.time_us")
    fix: feed the device
`), 0o644))
	cases := filepath.Join(dir, "team-idle.yaml")
	require.NoError(t, os.WriteFile(cases, []byte(`rule: team-idle
cases:
  - name: idle most of the window
    ranks: 2
    metrics: {overlap.free.time_us: 6000, device.window.time_us: 10000}
    expect: {status: fired, severity: high, saving_us: 6000, title: idle 60.0%}
  - name: busy
    metrics: {overlap.free.time_us: 1000, device.window.time_us: 10000}
    expect: {status: fired}
`), 0o644))
	code, out, errs := run("rules", "test", "--rules", rule, cases)
	require.Equal(t, ExitFindings, code, errs)
	requireText(t, out, "ok    "+cases+":3  idle most of the window\n"+
		"FAIL  "+cases+":7  busy\n"+
		"        status clear (condition not met), expected fired\n"+
		"2 case(s): 1 passed, 1 failed\n")
	require.Contains(t, errs, "1 of 2 case(s) failed")

	code, out, errs = run("rules", "test", "../../internal/rules/builtin/tests/host-bound.yaml")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "case(s): 4 passed, 0 failed")

	require.NoError(t, os.WriteFile(cases, []byte("rule: team-idle\ncases:\n  - name: x\n    metrics: {overlap.free.time_uss: 1}\n    expect: {status: clear}\n"), 0o644))
	code, _, errs = run("rules", "test", "--rules", rule, cases)
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, cases+`:4:15: case "x": metrics: unknown metric "overlap.free.time_uss"`)

	code, _, errs = run("rules", "test")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "rules test: expected CASES.yaml")
}

// A YAML typo in a --rules file is named at its own line and column, in
// plain words (the YAML library named the line where the rule began, in
// its own words: "line 2: did not find expected '-' indicator").
func TestRulesFileTypoPosition(t *testing.T) {
	file := filepath.Join(t.TempDir(), "team.yaml")
	require.NoError(t, os.WriteFile(file, []byte("rules:\n  - id: team-x\n    title: x\n   when: \"true\"\n    fix: f\n"), 0o644))
	code, _, errs := run("rules", "list", "--rules", file)
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, file+":4:4: this line is not indented as the list above it: align it with its siblings")
	require.NotContains(t, errs, "did not find")
}
