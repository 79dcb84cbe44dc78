package parser

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A kernel_details.csv read without a trace, cut short: at 5 kB (inside a
// row, which then has too few cells) and inside the last cell of a row
// (which still has every cell). Both were read as a complete file; the
// second gave no warning at all. Now the rank is partial with the file and
// line, and every metric computed from the file is partial.
func TestCutKernelDetailsIsPartial(t *testing.T) {
	root, out := tinyRank(t)
	require.NoError(t, os.Remove(filepath.Join(out, "trace_view.json")))
	kd := filepath.Join(out, "kernel_details.csv")
	full, err := os.ReadFile(kd)
	require.NoError(t, err)
	whole := loadOne(t, root)
	require.False(t, whole.Partial)
	require.False(t, whole.Have.KernelPartial)

	// inside the last cell of a row: just before a row's final newline
	end := bytes.IndexByte(full[len(full)/2:], '\n') + len(full)/2
	for name, cut := range map[string]int{"at 5 kB": 5000, "in a row's last cell": end - 1} {
		require.NoError(t, os.WriteFile(kd, full[:cut], 0o644))
		r := loadOne(t, root)
		require.True(t, r.Partial, name)
		require.True(t, r.Have.KernelPartial, name)
		require.Less(t, len(r.Tasks), len(whole.Tasks), name)
		line := bytes.Count(full[:cut], []byte{'\n'}) + 1
		require.Contains(t, r.PartialReason, fmt.Sprintf("%s ends inside line %d, without a newline (cut short?)", kd, line), name)
		require.Contains(t, warningsText(r), fmt.Sprintf("%s: the file ends inside line %d, without a newline", kd, line), name)
	}
	// a complete file without a final newline is still partial: nothing
	// says its last row is whole
	require.NoError(t, os.WriteFile(kd, bytes.TrimRight(full, "\r\n"), 0o644))
	r := loadOne(t, root)
	require.True(t, r.Have.KernelPartial)
	require.Len(t, r.Tasks, len(whole.Tasks))
}
