package render

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/results/build"
)

// The summary and the report are written from a document built from a
// run: one read back from JSON has no view, and writing it is refused
// rather than showing what the JSON lacks as unavailable.
func TestTextAndHTMLNeedTheView(t *testing.T) {
	doc := build.Doc(committedResult(t, "ep-fc1-cumsum"), synthFindings()[:1])
	var built bytes.Buffer
	require.NoError(t, WriteText(&built, doc))
	require.Contains(t, built.String(), "Collectives by type and group")

	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, doc))
	first := js.String()
	back, err := results.Read(strings.NewReader(first), "doc.json")
	require.NoError(t, err)
	require.False(t, back.View.Built)
	require.ErrorContains(t, WriteText(io.Discard, back), "read back from JSON")
	require.ErrorContains(t, WriteHTML(io.Discard, HTMLInput{Doc: back}), "read back from JSON")

	// the view is not in the JSON: the document read back writes the same bytes
	var again bytes.Buffer
	require.NoError(t, WriteJSON(&again, back))
	require.Equal(t, first, again.String())
}
