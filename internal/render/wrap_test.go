package render

import (
	"strings"

	"github.com/npuprof/npuprof/internal/results"
)

// squash drops all white space: the terminal summary wraps its lines at
// TextWidth columns (a long path even mid-word), so a test that looks for a
// sentence in it compares the text without line breaks and indents.
func squash(s string) string { return strings.Join(strings.Fields(s), "") }

// withTables is doc with the summary's tables on (--detail tables).
func withTables(doc *results.Document) *results.Document {
	doc.Run.Text.Tables = true
	return doc
}
