package render

import (
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README shows a screenshot of a real report; keep it there, valid
// and small.
func TestREADMEReportScreenshot(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(readme), "](docs/report.png)"), "README.md shows docs/report.png")
	f, err := os.Open(filepath.Join(root, "docs", "report.png"))
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(300<<10), "docs/report.png must stay under 300 KB")
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err)
	require.Equal(t, 1280, cfg.Width)
}
