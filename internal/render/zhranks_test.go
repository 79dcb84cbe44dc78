package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
)

// The ranks a cross-rank metric used and left out are named in Chinese
// (rank 0-3, as the other notes do), and a rank with no steps has 无, not
// [none] (the a3-tp4dp4-rc1 capture: engines.busy.* from the busy
// engine's ranks 0-3 of 16; ranks 4-15 ran no steps).
func TestZHRanksNotes(t *testing.T) {
	var buf bytes.Buffer
	ew := &errWriter{w: &buf, l: labels{zh: true}}
	doc := &results.Document{Cluster: &results.ClusterDoc{RanksUsed: map[string][]int{"engines.busy.step.time_us": {0, 1, 2, 3}}}}
	for r := range 16 {
		doc.Ranks = append(doc.Ranks, results.RankDoc{Rank: r})
	}
	writeRanksUsed(ew, doc)
	require.Equal(t, "  engines.busy.step.time_us 使用了 16 个中的 rank 0-3；未计入 rank 4-15\n", strings.ReplaceAll(buf.String(), string(widePad), ""))

	note := "ranks have different step sets: ranks 4-15 have steps [none]; ranks 0-3 have steps [2,3,4,5]; per-step comparisons use the ranks that have each step"
	require.Equal(t, "各 rank 的 step 集合不同：rank 4-15 没有 step；rank 0-3 的 step 为 [2,3,4,5]；逐 step 的比较只用包含该 step 的 rank", labels{zh: true}.text(note))
}
