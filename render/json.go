package render

import (
	"encoding/json"
	"io"

	"github.com/npuprof/npuprof/compare"
	"github.com/npuprof/npuprof/results"
)

// WriteJSON writes the results document, indented, with a trailing
// newline. Map keys are sorted by encoding/json, so output is byte-stable.
func WriteJSON(w io.Writer, doc *results.Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteDiffJSON writes the diff document (schema npuprof.diff/v1), indented.
func WriteDiffJSON(w io.Writer, r *compare.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
