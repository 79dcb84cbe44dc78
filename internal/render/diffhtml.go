package render

import (
	_ "embed"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/results/diff"
	"html/template"
	"io"
	"math"
	"sync"
)

// The diff report (`npuprof diff --html`): the comparison engine (package
// compare) fills DiffHTMLInput; this file lays it out with the report's
// pieces: its template definitions (cells, charts), styles, scripts
// (sortable tables) and the inlined ECharts.

//go:embed assets/diff.html.tmpl
var diffTemplate string

// diffTmpl is the diff report's template, the report's with the diff's
// definitions, parsed on first use.
var diffTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.Must(reportTmpl().Clone()).New("diff").Parse(diffTemplate))
})

// DiffHTMLInput is everything the diff report shows.
type DiffHTMLInput struct {
	Before, After DiffSideInfo
	Version       string
	// Cards are the headline changes (step time, findings resolved, ...).
	Cards []DiffCard
	Notes []string
	// Partial are the caveats when a side was measured on a file cut short
	// (one per partial rank, then what the marked rows mean); shown above
	// the notes.
	Partial []string
	// StepBars draws the per-step quantities before and after (µs).
	StepBars *DiffBars
	Sections []DiffSection
	// Lang is the page's language (diff.RunInfo.Lang).
	Lang string
}

// DiffSideInfo describes one side.
type DiffSideInfo struct{ Path, Detail string }

// DiffCard is one headline number; Class "good" or "bad" colours it.
type DiffCard struct{ K, V, Class string }

// DiffBars are grouped bars: one group per label, before and after (µs).
type DiffBars struct {
	Labels        []string
	Before, After []float64
}

// DiffSection is one table of the diff.
type DiffSection struct {
	ID, Title, Lede string
	// Empty is shown instead of the table when there are no rows.
	Empty   string
	Columns []DiffColumn
	Rows    [][]DiffCell
}

// DiffColumn is a table header.
type DiffColumn struct {
	Name string
	Num  bool
}

// DiffCell is one table cell. Value, when set, is the exact number
// (data-v, for sorting and for readers checking the JSON).
type DiffCell struct {
	Text  string
	Num   bool
	Value *float64
	Class string
}

type diffPage struct {
	DiffHTMLInput
	HTMLLang       string
	Secs           []diffSecView
	Charts         []*chartPayload
	CSS            template.CSS
	EChartsJS      template.JS
	ReportJS       template.JS
	EChartsVersion string
	EChartsNotice  string
}

type diffSecView struct {
	DiffSection
	Cells [][]cell
}

// WriteDiffHTML writes the self-contained diff report.
func WriteDiffHTML(w io.Writer, r *diff.Result) error {
	return writeDiffHTML(w, NewDiffHTMLInput(r, r.Run.Version))
}

// writeDiffHTML writes the diff report of in.
func writeDiffHTML(w io.Writer, in DiffHTMLInput) error {
	l := labels{zh: in.Lang == lang.ZH}
	if l.zh {
		lang.MapStrings(&in, map[string]bool{"Path": true, "Version": true}, l.text)
	}
	p := diffPage{DiffHTMLInput: in, HTMLLang: "en", CSS: template.CSS(reportCSS), EChartsJS: template.JS(echartsJS), ReportJS: template.JS(reportJS),
		EChartsVersion: EChartsVersion, EChartsNotice: echartsNotice, Charts: []*chartPayload{}}
	p.Before.Path, p.After.Path = cleanText(p.Before.Path, 300), cleanText(p.After.Path, 300)
	p.Partial = make([]string, len(in.Partial))
	for i, c := range in.Partial {
		p.Partial[i] = cleanText(c, 600)
	}
	for _, s := range in.Sections {
		sv := diffSecView{DiffSection: s}
		for _, row := range s.Rows {
			var cs []cell
			for _, c := range row {
				x := cell{Text: cleanText(c.Text, maxTextLen), Num: c.Num, Class: c.Class}
				if c.Value != nil && !math.IsNaN(*c.Value) && !math.IsInf(*c.Value, 0) {
					x.Sort = raw(*c.Value)
				}
				cs = append(cs, x)
			}
			sv.Cells = append(sv.Cells, cs)
		}
		p.Secs = append(p.Secs, sv)
	}
	if b := in.StepBars; b != nil && len(b.Labels) > 0 {
		o := map[string]any{
			"animation":       false,
			"backgroundColor": "transparent",
			"textStyle":       map[string]any{"fontFamily": fontStack},
			"color":           []string{"#94a3b8", colComputing},
			"legend":          map[string]any{"show": true, "top": "0", "right": "0"},
			"tooltip":         map[string]any{"trigger": "axis", "valueFormatter": "fn:dur"},
			"grid":            []any{map[string]any{"left": "8", "right": "16", "top": "36", "bottom": "8", "containLabel": true}},
			"xAxis":           []any{map[string]any{"type": "category", "data": b.Labels}},
			"yAxis":           []any{map[string]any{"type": "value", "axisLabel": map[string]any{"formatter": "fn:dur"}}},
			"series": []any{
				map[string]any{"type": "bar", "name": "before", "data": finite(b.Before), "barMaxWidth": 36},
				map[string]any{"type": "bar", "name": "after", "data": finite(b.After), "barMaxWidth": 36},
			},
		}
		titled(o, axisStepStat, "", "yAxis", axisStepTime, stackMax(listOf(o["series"])))
		p.Charts = append(p.Charts, &chartPayload{ID: "chart-diff-steps", Kind: "plain", Height: 320, Label: "Step time before and after", Option: o})
	}
	if l.zh {
		p.HTMLLang = "zh-CN"
		for _, c := range p.Charts {
			l.localAxes(c)
			l.translateChart(c)
		}
	}
	ew := &errWriter{w: w}
	tmpl := template.Must(diffTmpl().Clone()).Funcs(template.FuncMap{"t": l.t})
	if err := tmpl.ExecuteTemplate(ew, "diff", p); err != nil {
		return err
	}
	return ew.err
}

func finite(v []float64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			out[i] = "-"
		} else {
			out[i] = x
		}
	}
	return out
}
