package render

import (
	"embed"
	"strings"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/results"
)

// labels give the fixed texts of the terminal summary and the HTML report
// in the document's language (results.Document.Lang): an English text is
// itself, its Chinese the entry of zhLabels (a text without one stays
// English). Rule ids, metric names, flags, commands and units are never
// translated; the findings' texts come translated in the document.
type labels struct{ zh bool }

// zhFiles are the Chinese catalogs (internal/lang's format, read on first
// use: a run in English never reads them): zh/labels.txt, zhLabels, the
// summary's and the report's fixed texts keyed by the English exactly as
// the code writes it (a printf format keeps its verbs, in order;
// TestZHLabels checks that every key is still a text of the code and that
// the verbs match); zh/phrases.txt, zhHTMLPhrases, the notes the report
// composes with numbers, printf formats as internal/lang's phrase table
// takes them.
//
//go:embed zh/*.txt
var zhFiles embed.FS

var (
	zhLabels      = lang.CatalogOf(zhFiles, "zh/labels.txt")
	zhHTMLPhrases = lang.CatalogOf(zhFiles, "zh/phrases.txt")
)

// labelsOf are the labels in doc's language.
func labelsOf(doc *results.Document) labels { return labels{zh: doc.Lang == lang.ZH} }

// t is the fixed text s in the labels' language.
func (l labels) t(s string) string {
	if l.zh {
		if z, ok := zhLabels()[s]; ok {
			return z
		}
	}
	return s
}

// phrase is a message composed from data (a reason, a basis, a source)
// in the labels' language: the phrase table of internal/lang.
func (l labels) phrase(s string) string {
	if !l.zh {
		return s
	}
	return lang.Translate(lang.ZH, s)
}

// widePad follows each wide (two-column) rune of a table cell written in
// Chinese, so that text/tabwriter, which counts runes, counts it twice;
// the summary's wrapWriter drops it again before the line is written.
const widePad = '\uE000'

// padWide is s with widePad after each wide rune.
func padWide(s string) string {
	if !strings.ContainsFunc(s, isWide) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
		if isWide(r) {
			b.WriteRune(widePad)
		}
	}
	return b.String()
}

// isWide is lang.IsWide: whether r takes two terminal columns.
func isWide(r rune) bool { return lang.IsWide(r) }

// runeWidth is how many terminal columns r takes (widePad none).
func runeWidth(r rune) int {
	switch {
	case r == widePad:
		return 0
	case isWide(r):
		return 2
	}
	return 1
}

// DisplayWidth is how many terminal columns s takes (a wide rune, Chinese,
// two).
func DisplayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}
