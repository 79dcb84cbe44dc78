package render

import (
	"html/template"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results/assemble"
)

// blobTmpl writes chart payloads the way the report's template used to:
// html/template's own JSON encoding inside a JSON script element.
var blobTmpl = template.Must(template.New("blob").Parse(`<script type="application/json">{{.}}</script>`))

func templateBlob(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, blobTmpl.Execute(&b, v))
	return b.String()
}

func scriptBlob(js template.JS) string {
	return `<script type="application/json">` + string(js) + `</script>`
}

// hostilePayloads are charts whose texts need every escape html/template
// makes in a JSON script element ('<', '>', '&', U+2028, U+2029), with
// variants, box names and numbers that are not integers.
func hostilePayloads() []*chartPayload {
	name := "</script><script>alert(1)</script>&\u2028\u2029\"'"
	return []*chartPayload{
		{ID: "chart-a", Kind: "variants", Height: 300, Label: "a",
			Option: map[string]any{"series": []any{map[string]any{"name": name, "data": []any{1.5, 2e-7, 3e21, "-"}}},
				"xAxis": map[string]any{"name": "<b>"}},
			Variants: []map[string]any{{"title": name}, {"title": "&amp;"}}},
		{ID: "chart-b", Kind: "timeline", Names: []string{name, "x<y"}, Classes: []string{"a&b"}, Colors: []string{"#fff"},
			Option: map[string]any{"k": []int{1, 2}}},
	}
}

// The chart blob written from the sealed payloads is the bytes
// html/template wrote from the payloads' maps: on hostile texts, on a real
// view's charts (sealed while it was built), and with no chart.
func TestChartsBlobSameAsTemplateEncoding(t *testing.T) {
	want := templateBlob(t, hostilePayloads())
	sealed := hostilePayloads()
	for _, c := range sealed {
		c.seal()
		require.Nil(t, c.Option, "sealing releases the option map")
		require.Nil(t, c.Variants)
	}
	require.Equal(t, want, scriptBlob(chartsJS(sealed)))
	require.Contains(t, want, `\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e\u0026\u2028\u2029`)
	// a sealed payload encoded again (the diff page's path) is the same
	require.Equal(t, want, templateBlob(t, sealed))

	res := synthResult(t, synth{ranks: 2, layers: 3, steps: 2})
	view := buildView(htmlInput{Doc: assemble.Doc(res, synthFindings()), Experts: synthExperts(3, 4)})
	require.NotEmpty(t, view.Charts)
	require.Equal(t, templateBlob(t, view.Charts), scriptBlob(chartsJS(view.Charts)))

	var none []*chartPayload
	require.Equal(t, templateBlob(t, none), scriptBlob(chartsJS(none)))
	require.Equal(t, templateBlob(t, []*chartPayload{}), scriptBlob(chartsJS([]*chartPayload{})))
}
