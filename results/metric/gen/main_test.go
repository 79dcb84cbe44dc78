package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// entries maps each name declared in a names.go to its declaration, with
// spaces normalized.
func entries(src string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(src, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && strings.HasPrefix(l, "\t") {
			out[f[0]] = strings.Join(f, " ")
		}
	}
	return out
}

// Every name of names.go is declared so in the analysis now (a metric
// renamed or dropped there fails here; one added is picked up by the next
// go generate ./results/metric).
func TestNamesAgreeWithTheAnalysis(t *testing.T) {
	want, err := generate("../../../analysis")
	require.NoError(t, err)
	got, err := os.ReadFile("../names.go")
	require.NoError(t, err)
	w, g := entries(string(want)), entries(string(got))
	require.NotEmpty(t, g)
	for name, decl := range g {
		require.Equal(t, w[name], decl, "results/metric/names.go disagrees with the analysis on %s: go generate ./results/metric", name)
	}
}

// analysis/metrics_gen.go is what the analysis's metric constants give
// now: a metric added, renamed, redocumented or dropped there fails here
// until go generate ./results/metric rewrites it.
func TestRowsAgreeWithTheAnalysis(t *testing.T) {
	want, err := generateRows("../../../analysis")
	require.NoError(t, err)
	got, err := os.ReadFile("../../../analysis/metrics_gen.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "analysis/metrics_gen.go disagrees with the analysis's metric constants: go generate ./results/metric")
}

// A metric constant without its unit and doc is refused, naming it.
func TestRowsRefuseAnUndocumentedMetric(t *testing.T) {
	dir := t.TempDir()
	src := "package analysis\n\n// Metrics of the x pass.\nconst (\n\tMetricXCount = \"x.count\" // count: xs\n\tMetricXUs = \"x.time_us\"\n)\n"
	require.NoError(t, os.WriteFile(dir+"/x.go", []byte(src), 0o644))
	_, err := generateRows(dir)
	require.ErrorContains(t, err, "MetricXUs: a metric's line comment is its unit and doc")
	src = strings.Replace(src, "\"x.time_us\"", "\"x.time_us\" // µs: the xs' time", 1)
	require.NoError(t, os.WriteFile(dir+"/x.go", []byte(src), 0o644))
	b, err := generateRows(dir)
	require.NoError(t, err)
	require.Contains(t, string(b), `{Name: string(MetricXUs), Unit: "µs", Doc: "the xs' time", Base: ""},`)
	require.Contains(t, string(b), "xMetrics = metricRows[0:2:2] // x.go")
}
