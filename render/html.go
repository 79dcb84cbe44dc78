package render

import (
	_ "embed"
	"html/template"
	"io"
)

//go:embed assets/report.html.tmpl
var reportTemplate string

//go:embed assets/report.css
var reportCSS string

//go:embed assets/report.js
var reportJS string

var reportTmpl = template.Must(template.New("report").Parse(reportTemplate))

// htmlPage is what the template executes on.
type htmlPage struct {
	*htmlView
	CSS       template.CSS
	EChartsJS template.JS
	ReportJS  template.JS
}

// WriteHTML writes the self-contained HTML report: one file with the
// ECharts library, the chart data, styles and scripts inlined, so it opens
// with no network. Text from traces is escaped by html/template; chart data
// is JSON inside a <script type="application/json"> element, where
// html/template's JSON encoding escapes '<', '>' and '&' so a name cannot
// close the element. Numbers are the JSON document's.
func WriteHTML(w io.Writer, in HTMLInput) error {
	view := buildView(in)
	ew := &errWriter{w: w}
	err := reportTmpl.Execute(ew, htmlPage{htmlView: view, CSS: template.CSS(reportCSS),
		EChartsJS: template.JS(echartsJS), ReportJS: template.JS(reportJS)})
	if err != nil {
		return err
	}
	return ew.err
}
