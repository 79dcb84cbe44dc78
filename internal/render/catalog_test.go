package render

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
)

// Every Chinese catalog parses, entry by entry, and is a table the code
// reads: labels and the report's phrases (TestZHLabels checks the labels'
// keys against the code).
func TestZHCatalogs(t *testing.T) {
	require.NoError(t, lang.CheckCatalogs(zhFiles, "zh/*.txt", map[string]map[string]string{
		"zh/labels.txt": zhLabels(), "zh/phrases.txt": zhHTMLPhrases()}))
	require.Equal(t, "问题与修复", labels{zh: true}.t("\nFindings\n")[1:len("问题与修复")+1])
}
