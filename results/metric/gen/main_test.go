package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// results/metric/names.go is what the analysis's constants give now: a
// metric added, renamed or dropped there fails here until go generate
// ./results/metric rewrites it.
func TestNamesAgreeWithTheAnalysis(t *testing.T) {
	want, err := generate("../../../analysis")
	require.NoError(t, err)
	got, err := os.ReadFile("../names.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "results/metric/names.go disagrees with the analysis: go generate ./results/metric")
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
