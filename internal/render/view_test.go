package render

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
)

// The summary and the report are written from a document built from a
// run: one read back from JSON has no view, and writing it is refused
// rather than showing what the JSON lacks as unavailable.
func TestTextAndHTMLNeedTheView(t *testing.T) {
	doc := assemble.Doc(committedResult(t, "ep-fc1-cumsum"), synthFindings()[:1])
	var built bytes.Buffer
	require.NoError(t, WriteText(&built, withTables(doc)))
	require.Contains(t, built.String(), "Collectives by type and group")

	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, doc))
	first := js.String()
	back, err := results.Read(strings.NewReader(first), "doc.json")
	require.NoError(t, err)
	require.False(t, back.Detail.Built)
	require.ErrorContains(t, WriteText(io.Discard, back), "has no detail")
	require.ErrorContains(t, WriteHTML(io.Discard, back), "has no detail")

	// the view is not in the JSON: the document read back writes the same bytes
	var again bytes.Buffer
	require.NoError(t, WriteJSON(&again, back))
	require.Equal(t, first, again.String())
}

// The document without its view (what the JSON, JUnit and SARIF outputs
// are written from) has the same contract: the same JSON bytes, and adding
// the view makes it the document New builds.
func TestContractWithoutViewSameJSON(t *testing.T) {
	res := committedResult(t, "clean-2ranks")
	require.NotNil(t, res.Cluster)
	full := assemble.New(res, nil, nil)
	bare := assemble.NewContract(res, nil, nil)
	require.False(t, bare.Detail.Built)
	for _, rd := range bare.Ranks {
		require.Nil(t, rd.Detail.Kernels)
	}
	require.Nil(t, bare.Cluster.Detail.Skew)
	require.NotNil(t, full.Ranks[0].Detail.Kernels)

	var a, b bytes.Buffer
	require.NoError(t, WriteJSON(&a, full))
	require.NoError(t, WriteJSON(&b, bare))
	require.Equal(t, a.String(), b.String())

	assemble.AddDetail(bare, res)
	require.Equal(t, full, bare)
}
