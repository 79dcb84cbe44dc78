package render

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
)

// Every Chinese catalog parses, entry by entry, and is a table the code
// reads: labels and the report's phrases (TestZHLabels checks the labels'
// keys against the code).
func TestZHCatalogs(t *testing.T) {
	files, err := fs.Glob(zhFiles, "zh/*.txt")
	require.NoError(t, err)
	tables := map[string]map[string]string{"zh/labels.txt": zhLabels(), "zh/phrases.txt": zhHTMLPhrases()}
	require.Len(t, files, len(tables))
	for _, f := range files {
		b, err := zhFiles.ReadFile(f)
		require.NoError(t, err)
		m, err := lang.ParseCatalog(f, string(b))
		require.NoError(t, err)
		require.NotEmpty(t, m, f)
		require.Equal(t, m, tables[f], f)
	}
	require.Equal(t, "问题与修复", labels{zh: true}.t("\nFindings\n")[1:len("问题与修复")+1])
}
