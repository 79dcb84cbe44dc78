package render

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// A command's --format default, help and accepted values come from its
// table of outputs.
func TestOutputsTable(t *testing.T) {
	require.Equal(t, "text", RunOutputs.Default())
	require.Equal(t, "text, json, json-full, html, junit or sarif", RunOutputs.Names())
	require.Equal(t, "output format: text (a readable table); json (the npuprof.diff/v1 document); html (the self-contained HTML diff)", DiffOutputs.Help())
	_, ok := DiffOutputs.Lookup("yaml")
	require.False(t, ok)

	three := Outputs[int]{
		{Name: "a", Doc: "first", Write: func(w io.Writer, n int) error { _, err := w.Write([]byte{byte('0' + n)}); return err }},
		{Name: "b", Doc: "second"}, {Name: "c", Doc: "third"},
	}
	require.Equal(t, "a, b or c", three.Names())
	out, ok := three.Lookup("a")
	require.True(t, ok)
	var buf bytes.Buffer
	require.NoError(t, out.Write(&buf, 7))
	require.Equal(t, "7", buf.String())
	require.Equal(t, "b", Outputs[int]{{Name: "b"}}.Names())
}
