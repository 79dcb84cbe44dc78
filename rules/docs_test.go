package rules

import (
	"os"
	"testing"

	"github.com/npuprof/npuprof/internal/golden"
	"github.com/stretchr/testify/require"
)

// update (-update, shared by every package's tests) rewrites the generated
// sections of docs/rules.md.
var update = golden.Update

// docs/rules.md's metric, fact, function and built-in rule tables are
// generated from the catalogs: run `go test ./rules -run TestDocs -update`
// after changing them.
func TestDocsInSync(t *testing.T) {
	const path = "../docs/rules.md"
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	want, err := UpdateDoc(string(b), DocSections(builtin(t)))
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, string(b), "docs/rules.md is out of date: run go test ./rules -run TestDocs -update")
}

// The worked example in docs/rules.md loads.
func TestDocExampleLoads(t *testing.T) {
	_, err := Load("../docs/examples/team-rules.yaml")
	require.NoError(t, err)
}
