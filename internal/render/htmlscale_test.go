package render

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/results/metric"
	"github.com/stretchr/testify/require"
)

// At 256 ranks the report stays readable: "time by type/group" has one
// row per rank and a column per type (never 256 columns), folded away
// with every per-rank table; the charts per rank become one box per
// metric whose five numbers are the ranks' min, quartiles and max.
func TestHTMLReportAt256Ranks(t *testing.T) {
	res := synthResult(t, synth{ranks: 256, layers: 2, steps: 2})
	doc := assemble.Doc(res, nil)
	page := renderHTML(t, htmlInput{Doc: doc, Version: "test"})

	// the pivots: ranks as rows, at most a handful of columns
	i := strings.Index(page, `<table class="data pivot">`)
	require.Greater(t, i, 0)
	head := page[i : i+strings.Index(page[i:], "</thead>")]
	require.Less(t, strings.Count(head, "<th"), 10, "columns are the collective types, not the ranks")
	body := page[i : i+strings.Index(page[i:], "</tbody>")]
	require.Equal(t, 256, strings.Count(body, `<th scope="row">`), "one row per rank")
	require.Regexp(t, regexp.MustCompile(`<details class="per-rank"><summary>Per rank <span class="dim">256</span></summary>[^<]*<div class="scroll-x"><table class="data pivot">`), page, "the pivot is folded")

	// the charts: boxes over the ranks
	charts := chartOptions(t, page)
	for _, id := range []string{"chart-breakdown", "chart-comm-type"} {
		c, ok := charts[id]
		require.True(t, ok, id)
		s := c["option"].(map[string]any)["series"].([]any)
		require.Len(t, s, 1, id)
		require.Equal(t, "boxplot", s[0].(map[string]any)["type"], id)
	}
	// the window's box is the ranks' min, quartiles and max
	var wins []float64
	for _, rd := range doc.Ranks {
		wins = append(wins, rd.Metrics[metric.MetricDeviceWindowUs])
	}
	sort.Float64s(wins)
	box := charts["chart-breakdown"]["option"].(map[string]any)["series"].([]any)[0].(map[string]any)["data"].([]any)[0].([]any)
	require.InDelta(t, wins[0], box[0].(float64), 1e-6)
	require.InDelta(t, quantile(wins, 0.5), box[2].(float64), 1e-6)
	require.InDelta(t, wins[255], box[4].(float64), 1e-6)
	require.Less(t, box[1].(float64), box[3].(float64)+1e-9)
}

func TestQuantile(t *testing.T) {
	require.Equal(t, 2.5, quantile([]float64{1, 2, 3, 4}, 0.5))
	require.Equal(t, 1.0, quantile([]float64{1, 2, 3, 4}, 0))
	require.Equal(t, 4.0, quantile([]float64{1, 2, 3, 4}, 1))
	require.Equal(t, 1.75, quantile([]float64{1, 2, 3, 4}, 0.25))
}
