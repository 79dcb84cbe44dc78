package render

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/results"
)

//go:embed assets/report.html.tmpl
var reportTemplate string

//go:embed assets/report.css
var reportCSS string

//go:embed assets/report.js
var reportJS string

// reportTmpl is the report's template, parsed on first use (a run that
// writes no HTML does not parse it); its t function (a fixed text in the
// report's language, labels.t) is bound per report on a clone.
var reportTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{"t": labels{}.t}).Parse(reportTemplate))
})

// htmlPage is what the template executes on.
type htmlPage struct {
	*htmlView
	CSS       template.CSS
	EChartsJS template.JS
	ReportJS  template.JS
	// Charts is the page's chart data blob (chartsJS), in place of the
	// view's payloads.
	Charts template.JS
}

// WriteHTML writes the self-contained HTML report: one file with the
// ECharts library, the chart data, styles and scripts inlined, so it opens
// with no network. Text from traces is escaped by html/template; chart data
// is JSON inside a <script type="application/json"> element, where
// html/template's JSON encoding escapes '<', '>' and '&' so a name cannot
// close the element. Numbers are the JSON document's.
//
// The header's facts are the document's (those of the deployment script
// and --fact, with their sources; the profile's own and the serving
// context are drawn from the document itself), the footer's version the
// npuprof that wrote the document.
func WriteHTML(w io.Writer, doc *results.Document) error {
	return writeHTML(w, htmlInput{Doc: doc, Version: toolOf(doc).Version, Facts: givenFacts(doc.Facts)})
}

// givenFacts are the facts the HTML header cannot read from the document's
// ranks: those of the deployment script (--deploy) and of --fact.
func givenFacts(facts []results.FactValue) []Fact {
	var out []Fact
	for _, f := range facts {
		if strings.HasPrefix(f.Source, "profile: ") || strings.HasPrefix(f.Source, "vLLM: ") {
			continue
		}
		out = append(out, Fact{Name: f.Name, Value: FactText(f.Value), Source: f.Source})
	}
	return out
}

// writeHTML writes the report of in.
func writeHTML(w io.Writer, in htmlInput) error {
	if err := needDetail(in.Doc); err != nil {
		return err
	}
	view := buildView(in)
	view.l.translateView(view)
	tmpl := template.Must(reportTmpl().Clone()).Funcs(template.FuncMap{"t": view.l.t})
	ew := &errWriter{w: w}
	err := tmpl.Execute(ew, htmlPage{htmlView: view, CSS: template.CSS(reportCSS),
		EChartsJS: template.JS(echartsJS), ReportJS: template.JS(reportJS), Charts: chartsJS(view.Charts)})
	if err != nil {
		return err
	}
	return ew.err
}

// htmlInput is everything the HTML report shows. Doc is required; the
// rest is optional.
type htmlInput struct {
	// Doc is the run's results document (assemble.New): every metric,
	// finding (largest estimated saving first), the fix plan, the deploy
	// diff (the one to apply: the findings' own diffs may touch the same
	// lines) and the rule evaluation's warnings are read from it.
	Doc *results.Document
	// Facts are deployment facts (TP/DP/EP sizes, FLASHCOMM1, capture
	// sizes, ...) found by other parts of npuprof, each with its source.
	// They are listed in the header after the facts the report reads
	// itself from profiler_metadata.json (parallel_group_info and env).
	Facts []Fact
	// Experts adds the expert-load heatmap (layer × expert). The section
	// appears only when Experts is non-nil and has loads. Profiles carry
	// no per-expert token counts; the expert-load reader (vLLM-Ascend
	// moe_load dumps, MindIE expert_hotspot files) fills this. Nil: the
	// document's (ExpertLoadsOf).
	Experts *ExpertLoads
	// Version is npuprof's version, printed in the footer.
	Version string
}

// Fact is one deployment fact and where it was read.
type Fact struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// ExpertLoads is the load of each expert in each MoE layer: the render-side
// input of the expert heatmap. Load[i][j] is the load of expert Experts[j]
// in layer Layers[i]; rows may be shorter than Experts (missing experts
// are drawn empty).
type ExpertLoads struct {
	// Source names the files or method the loads come from.
	Source string
	// Unit of Load ("tokens" by default).
	Unit    string
	Layers  []string
	Experts []string
	Load    [][]float64
}

func (e *ExpertLoads) empty() bool {
	if e == nil || len(e.Layers) == 0 || len(e.Experts) == 0 {
		return true
	}
	for _, row := range e.Load {
		if len(row) > 0 {
			return false
		}
	}
	return true
}
