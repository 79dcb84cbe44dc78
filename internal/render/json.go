package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
)

// WriteJSON writes the results document's contract, indented, with a
// trailing newline: its detail is left out. Map keys are sorted by
// encoding/json, so output is byte-stable.
func WriteJSON(w io.Writer, doc *results.Document) error { return writeJSON(w, doc, false) }

// WriteJSONFull is WriteJSON with the document's detail ("detail" at the
// top, in each rank and in the cluster): what the terminal summary and
// the HTML report read, so that a saved document renders as its run did.
func WriteJSONFull(w io.Writer, doc *results.Document) error { return writeJSON(w, doc, true) }

// writeJSON writes doc, its detail when full.
//
// The ranks are written one at a time: encoding/json holds a value's
// whole text twice (compact, then indented) before writing it, which for
// a 2048-rank document was about 100 MiB at once. The bytes are the same
// as one Encode of the whole document.
func writeJSON(w io.Writer, doc *results.Document, full bool) error {
	rest := *doc
	rest.Ranks = nil
	if !full {
		rest.Detail = results.Detail{}
		if doc.Cluster != nil {
			c := *doc.Cluster
			c.Detail = results.ClusterDetail{}
			rest.Cluster = &c
		}
	}
	// what json.Encoder with SetIndent("", "  ") writes
	b, err := marshalIndent(&rest, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	// the document's own "ranks" key: the only one two spaces in (no
	// string holds a raw newline)
	const key = "\n  \"ranks\": "
	at := bytes.Index(b, []byte(key+"null"))
	if doc.Ranks == nil || at < 0 {
		_, err := w.Write(b)
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(b[:at+len(key)])
	if len(doc.Ranks) == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("[")
		for i := range doc.Ranks {
			rank := &doc.Ranks[i]
			if !full {
				c := *rank
				c.Detail = results.RankDetail{}
				rank = &c
			}
			r, err := marshalIndent(rank, "    ", "  ")
			if err != nil {
				return err
			}
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			bw.Write(r)
		}
		bw.WriteString("\n  ]")
	}
	bw.Write(b[at+len(key)+len("null"):])
	return bw.Flush()
}

// WriteDiffJSON writes the diff document (schema npuprof.diff/v1), indented.
func WriteDiffJSON(w io.Writer, r *diff.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
