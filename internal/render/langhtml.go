package render

import (
	"bytes"
	"encoding/json"

	"github.com/npuprof/npuprof/internal/lang"
)

// text is a text the report built (a note, a chart's name, a reason) in
// the labels' language: a fixed label's entry, else the phrase table's.
func (l labels) text(s string) string {
	if !l.zh {
		return s
	}
	if z, ok := zhLabels()[s]; ok {
		return z
	}
	if z := l.phrase(s); z != s {
		return z
	}
	return l.phraseHTML(s)
}

// phraseHTML is s by the writers' own phrases (zhHTMLPhrases), a
// message the report or the diff composes with numbers.
func (l labels) phraseHTML(s string) string { return lang.TranslateWith(zhHTMLPhrases(), s) }

// untranslatedView are the view's fields whose text is code: fixes,
// diffs and what their Copy buttons copy, and the charts (translated
// apart, translateCharts).
var untranslatedView = map[string]bool{"Fix": true, "FixCopy": true, "Diff": true, "DiffCopy": true, "DeployDiff": true,
	"DeployDiffCopy": true, "Charts": true, "Path": true}

// translateView puts every text of a Chinese report's view in Chinese
// (labels.text); the template's own texts go through its t function.
func (l labels) translateView(v *htmlView) {
	if !l.zh {
		return
	}
	lang.MapStrings(v, untranslatedView, l.text)
	for _, c := range v.Charts {
		l.translateChart(c)
	}
}

// chartTextKeys are the keys of a chart option whose string values are
// read by a person: series, axis and legend names, titles, labels.
var chartTextKeys = map[string]bool{"name": true, "text": true, "subtext": true, "label": true, "title": true}

// translateChart translates a chart's names and titles, and the
// categories of its axes that are fixed labels.
func (l labels) translateChart(c *chartPayload) {
	c.Label = l.text(c.Label)
	c.seal()
	dec := json.NewDecoder(bytes.NewReader(c.sealed))
	dec.UseNumber()
	var v map[string]any
	if dec.Decode(&v) != nil {
		return
	}
	changed := false
	var walk func(x any, key string) any
	walk = func(x any, key string) any {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e, k)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e, key)
			}
		case string:
			z := t
			if chartTextKeys[key] {
				z = l.text(t)
			} else if key == "data" {
				if y, ok := zhLabels()[t]; ok {
					z = y
				}
			}
			if z != t {
				changed = true
			}
			return z
		}
		return x
	}
	walk(v, "")
	if !changed {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if enc.Encode(v) == nil {
		c.sealed = bytes.TrimRight(b.Bytes(), "\n")
	}
}
