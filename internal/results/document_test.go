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

// A file that is not JSON, is cut short or holds a value of the wrong kind
// is named with what is wrong in plain words, never encoding/json's own
// ("invalid character 'm' looking for beginning of value", "Go struct").
func TestReadDocumentSaysWhatIsNotJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"module x\n", `go.mod: not an npuprof JSON document: not JSON: line 1, column 1: unexpected 'm'`},
		{"{\n  \"schema\": \"npuprof.analysis/v1\",\n  x\n}", `go.mod: not an npuprof JSON document: not JSON: line 3, column 3: unexpected 'x'`},
		{`{"schema": "npuprof.analysis/v1", "ranks": [`, `go.mod: not an npuprof JSON document: the JSON ends early, after 44 byte(s) (the file may be cut short)`},
		{`[1, 2]`, `go.mod: not an npuprof JSON document: the document holds a JSON array, expected an object`},
		{`{"schema": "npuprof.analysis/v1", "ranks": 3}`, `go.mod: not an npuprof JSON document: field "ranks" holds a JSON number, expected an array`},
	} {
		_, err := Read(strings.NewReader(c.in), "go.mod")
		require.EqualError(t, err, c.want, c.in)
	}
}
