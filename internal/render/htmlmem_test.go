package render

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// The report's view holds its charts' encoded JSON and its tables' row
// makers, not the tables' cells: what it keeps a rank stays small while the
// page it writes lists every rank in the breakdown, MoE and collectives
// tables. On 256 synthetic ranks the view held 14.1 KiB a rank when it
// built every cell up front, 3.6 KiB since.
func TestHTMLViewHoldsNoTableCells(t *testing.T) {
	const ranks = 256
	doc := assemble.Doc(synthResult(t, synth{ranks: ranks, layers: 2, steps: 2}), synthFindings())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	view := buildView(htmlInput{Doc: doc})
	runtime.GC()
	runtime.ReadMemStats(&after)
	perRank := float64(after.HeapAlloc-before.HeapAlloc) / ranks
	t.Logf("the view holds %.1f KiB a rank", perRank/1024)
	require.Less(t, perRank, 6.0*1024, "the view must not hold the tables' cells")
	runtime.KeepAlive(view)

	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, doc))
	for _, m := range []string{metric.MetricFreeUs, metric.MetricMoERoutingUs, metric.MetricHCCLTotalUs} {
		require.Equal(t, ranks, strings.Count(page.String(), fmt.Sprintf(`data-metric="%s"`, m)), m)
	}
}
