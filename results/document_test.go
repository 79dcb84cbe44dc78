package results

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A saved document of another npuprof schema (the npuprof.diff/v1 that
// `npuprof diff --format json` writes, given to diff or check --baseline)
// is named by its schema. The whole document used to be decoded first, so
// the error was a Go type error: "not an npuprof JSON document: json:
// cannot unmarshal array into Go struct field RankDoc.ranks.metrics".
func TestReadDocumentNamesAWrongSchema(t *testing.T) {
	diffDoc := `{"schema": "npuprof.diff/v1", "ranks": [{"metrics": [{"name": "x"}]}]}`
	_, err := Read(strings.NewReader(diffDoc), "diff.json")
	require.EqualError(t, err, `diff.json: schema "npuprof.diff/v1", expected "npuprof.analysis/v1" (a document written by npuprof analyze --format json)`)

	_, err = Read(strings.NewReader(`{"ranks": 3}`), "x.json")
	require.ErrorContains(t, err, `x.json: not an npuprof analysis document: no "schema"`)

	_, err = Read(strings.NewReader(`[1, 2]`), "arr.json")
	require.ErrorContains(t, err, "arr.json: not an npuprof JSON document")

	doc, err := Read(strings.NewReader(`{"schema": "npuprof.analysis/v1", "ranks": []}`), "ok.json")
	require.NoError(t, err)
	require.Equal(t, Schema, doc.Schema)
}
