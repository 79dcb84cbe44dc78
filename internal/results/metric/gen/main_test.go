package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The generated files are what the analysis's constants give now: a
// metric added, renamed, redocumented or dropped there fails here until go
// generate ./internal/results/metric rewrites them.
func TestGeneratedFilesAgreeWithTheAnalysis(t *testing.T) {
	for file, gen := range map[string]func(string) ([]byte, error){
		"../names.go":                      generate,
		"../../../analysis/metrics_gen.go": generateRows,
	} {
		want, err := gen("../../../analysis")
		require.NoError(t, err)
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s disagrees with the analysis's metric constants: go generate ./internal/results/metric", file)
	}
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
