package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A diff report input as package compare builds it, with a hostile kernel
// name.
func synthDiffInput() DiffHTMLInput {
	return DiffHTMLInput{
		Before:  DiffSideInfo{Path: "/runs/before", Detail: "8 rank(s), torch_npu_text, 4 step(s)/rank"},
		After:   DiffSideInfo{Path: "/runs/after", Detail: "8 rank(s), torch_npu_text, 4 step(s)/rank"},
		Version: "test",
		Cards:   []DiffCard{{K: "Step time", V: "3.67ms → 3.00ms", Class: "good"}, {K: "New findings", V: "1", Class: "bad"}},
		Notes:   []string{"rank(s) 8 only after"},
		StepBars: &DiffBars{Labels: []string{"window", "computing", "free"},
			Before: []float64{3668.9, 2340.0, 277.5}, After: []float64{3003.8, 2075.0, 210.2}},
		Sections: []DiffSection{
			{ID: "steps", Title: "Step time", Columns: []DiffColumn{{Name: "Quantity"}, {Name: "Before", Num: true}},
				Rows: [][]DiffCell{{{Text: "window"}, {Text: "3.67ms", Num: true, Value: fptr(3668.9)}}}},
			{ID: "kernels", Title: "Kernels", Columns: []DiffColumn{{Name: "Kernel"}, {Name: "Change", Num: true}},
				Rows: [][]DiffCell{{{Text: `<img src=x onerror=alert(1)>Cumsum`}, {Text: "-204.1µs", Num: true, Value: fptr(-204.1), Class: "good"}}}},
			{ID: "findings", Title: "Findings", Empty: "neither document has findings"},
		},
	}
}

func TestDiffHTML(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeDiffHTML(&b, synthDiffInput()))
	page := b.String()
	require.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
	require.NotContains(t, page, "<img src=x")
	require.Contains(t, page, "&lt;img src=x onerror=alert(1)&gt;Cumsum")
	require.Contains(t, page, `data-v="-204.1"`)
	require.Contains(t, page, `<td class="num good" data-v="-204.1">`)
	require.Contains(t, page, `<p class="empty-state">neither document has findings</p>`)
	require.Contains(t, page, `id="chart-diff-steps"`)
	require.Equal(t, 1, strings.Count(page, echartsJS), "ECharts is inlined once")
	var b2 bytes.Buffer
	require.NoError(t, writeDiffHTML(&b2, synthDiffInput()))
	require.Equal(t, page, b2.String(), "byte-stable")
}

func TestDiffHTMLInChromium(t *testing.T) {
	bctx := browser(t)
	f := filepath.Join(t.TempDir(), "diff.html")
	var b bytes.Buffer
	require.NoError(t, writeDiffHTML(&b, synthDiffInput()))
	require.NoError(t, os.WriteFile(f, b.Bytes(), 0o644))
	rep := openReport(t, bctx, f, filepath.Join(artifactsDir(t), "diff-synthetic.png"))
	rep.mu.Lock()
	defer rep.mu.Unlock()
	require.Empty(t, rep.errors, "console errors, exceptions or dialogs")
	require.Empty(t, rep.requests, "network requests")
	require.True(t, rep.sawPage)
}
