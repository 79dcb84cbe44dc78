package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// casesDir holds the built-in rules' case files, one per rule, named by
// its id.
const casesDir = "builtin/tests"

// readCases parses the case file of a rule.
func readCases(t *testing.T, file string) *rulefmt.CaseFile {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	cf, err := rulefmt.ParseCases(filepath.ToSlash(filepath.Join("internal", "rules", file)), data)
	require.NoError(t, err)
	return cf
}

// Every built-in rule has a case file, internal/rules/builtin/tests/ID.yaml, with a
// case it stays clear on and a case it fires on (or says why none can);
// every case passes.
func TestBuiltinRuleCases(t *testing.T) {
	set := builtin(t)
	files, err := filepath.Glob(filepath.Join(casesDir, "*.yaml"))
	require.NoError(t, err)
	have := map[string]bool{}
	for _, f := range files {
		have[strings.TrimSuffix(filepath.Base(f), ".yaml")] = true
	}
	for _, f := range files {
		cf := readCases(t, f)
		require.Equal(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), cf.Rule, "%s: the file is named by its rule's id", f)
		got, err := RunCases(set, cf, "")
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, cr := range got {
			t.Run(cf.Rule+"/"+cr.Case.Name, func(t *testing.T) {
				require.Empty(t, cr.Problems, "%s: case %q", cr.Where, cr.Case.Name)
			})
			seen[cr.Outcome.Status] = true
		}
		require.True(t, seen[results.StatusClear], "%s: no case where the rule stays clear", f)
		if cf.NoFiredCase == "" {
			require.True(t, seen[results.StatusFired], "%s: no case fires the rule (no_fired_case: says why none can)", f)
		}
	}
	for _, r := range set.Rules {
		require.True(t, have[r.ID], "built-in rule %s has no case file %s/%s.yaml", r.ID, casesDir, r.ID)
	}
}

// A case the rule does not meet says how, at the case's file:line: the
// status (with the rule's reason), or each field of the finding that
// differs.
func TestRunCasesReportsDifferences(t *testing.T) {
	cf, err := rulefmt.ParseCases("c.yaml", []byte(`rule: host-bound
cases:
  - name: fires, expected clear
    metrics: {overlap.free.time_us: 3000, device.window.time_us: 10000}
    expect: {status: clear}
  - name: wrong finding
    metrics: {overlap.free.time_us: 3000, device.window.time_us: 10000}
    expect: {status: fired, severity: low, saving_us: 2100, ranks: [1], title: step time}
  - name: not measured
    expect: {status: clear}
  - name: a fact the catalog refuses
    facts: {dp: -1}
    expect: {status: clear}
`))
	require.NoError(t, err)
	got, err := RunCases(builtin(t), cf, "")
	require.NoError(t, err)
	require.Equal(t, "c.yaml:3", got[0].Where)
	require.Equal(t, []string{`status fired, expected clear`}, got[0].Problems)
	require.Equal(t, []string{
		`severity high, expected low`,
		`title "The device is idle 30.0% of the profiled window (launch gaps: host bound)" does not say "step time"`,
		`ranks [0], expected [1]`,
		`saving 2000 µs, expected 2100 µs`,
	}, got[1].Problems)
	require.Equal(t, []string{`status not_evaluated (metric overlap.free.time_us unavailable: not measured on any rank), expected clear`}, got[2].Problems)
	require.Equal(t, []string{`facts: dp=-1: expected a finite int >= 0`}, got[3].Problems)

	cf.Rule = "host-bund"
	_, err = RunCases(builtin(t), cf, "")
	require.EqualError(t, err, `c.yaml:1: no rule "host-bund" (closest: host-bound, comm-bound, host-bound-free)`)
}
