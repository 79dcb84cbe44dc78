package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A stray quote at the start of a step_trace_time.csv cell (a damaged
// digit) makes that cell run over the rows after it: the row is skipped
// and named (the rows after it, in its cell, are lost).
func TestStepTraceStrayQuoteNamed(t *testing.T) {
	root, out := tinyRank(t)
	p := filepath.Join(out, "step_trace_time.csv")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.Greater(t, len(lines), 3, "a header and two rows at least")
	// the first row's last cell: "266.24\r\n" -> "\"66.24\r\n"
	row := lines[1]
	k := strings.LastIndexByte(row, ',')
	lines[1] = row[:k+1] + `"` + row[k+2:]
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644))
	r := loadOne(t, root)
	require.Contains(t, warningsText(r), "step_trace_time.csv: skipped malformed rows (a quote opens a cell that runs over the next lines: 1)")
	require.Empty(t, r.StepTrace, "the row is skipped, and the rows after the quote are in its cell")
}
