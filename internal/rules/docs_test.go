package rules

import (
	"os"
	"testing"

	"github.com/npuprof/npuprof/internal/golden"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/stretchr/testify/require"
)

// update (-update, shared by every package's tests) rewrites the generated
// sections of docs/rules.md and docs/json.md.
var update = golden.Update

// docs/rules.md's metric, fact, function and built-in rule tables, and
// docs/json.md's metric table, are generated from the catalogs: run
// `go test ./internal/rules -run TestDocs -update` after changing them.
func TestDocsInSync(t *testing.T) {
	for path, sections := range map[string]map[string]string{
		"../../docs/rules.md": docSections(builtin(t)),
		"../../docs/json.md":  {"metrics": metricTableMarkdown()},
	} {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		want, err := updateDoc(string(b), sections)
		require.NoError(t, err, path)
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		require.Equal(t, want, string(b), "%s is out of date: run go test ./internal/rules -run TestDocs -update", path)
	}
}

// The worked example in docs/rules.md loads.
func TestDocExampleLoads(t *testing.T) {
	_, err := Load("../../docs/examples/team-rules.yaml")
	require.NoError(t, err)
	_, err = Load("../../docs/examples/plan-rules.yaml")
	require.NoError(t, err)
}

// The case file docs/rules.md shows ("Testing a rule") passes on the
// worked example's rule.
func TestDocExampleCases(t *testing.T) {
	set, err := Load("../../docs/examples/team-rules.yaml")
	require.NoError(t, err)
	data, err := os.ReadFile("../../docs/examples/team-rules-cases.yaml")
	require.NoError(t, err)
	got, err := RunCaseFile(set, "team-rules-cases.yaml", data, "")
	require.NoError(t, err)
	require.Len(t, got, 2)
	for _, c := range got {
		require.Empty(t, c.Problems, "%s: %s", c.Where, c.Case.Name)
	}
	require.Equal(t, []string{results.StatusFired, results.StatusClear}, []string{got[0].Outcome.Status, got[1].Outcome.Status})
}
