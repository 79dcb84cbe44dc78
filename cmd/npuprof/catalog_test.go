package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
)

// Every Chinese catalog parses, entry by entry, and is a table the code
// reads; every message key is a format the code still writes (a changed
// English would silently stay English). The help's keys are checked by
// the zh help tests (no English left), the progress line's by
// TestProgressLine.
func TestZHCatalogs(t *testing.T) {
	require.NoError(t, lang.CheckCatalogs(zhFiles, "zh/*.txt", map[string]map[string]string{
		"zh/help.txt": zhHelp(), "zh/messages.txt": zhMessages(), "zh/progress.txt": zhProgress()}))
	srcs, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var src strings.Builder
	for _, f := range srcs {
		if !strings.HasSuffix(f, "_test.go") {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			src.Write(b)
		}
	}
	for en := range zhMessages() {
		require.Contains(t, src.String(), strconv.Quote(en), "zh/messages.txt: a key the code no longer writes")
	}
}
