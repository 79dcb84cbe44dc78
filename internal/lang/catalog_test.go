package lang

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A catalog's line is two Go string literals; comments and blank lines
// are skipped; a malformed line or a key given twice is an error with the
// file and line.
func TestParseCatalog(t *testing.T) {
	m, err := ParseCatalog("c.txt", "# a comment\n\n\"a %d\\tb\\n\" \"甲 %d\\t乙\\n\"\n  `say \"x\"`\t\"说 \\\"x\\\"\"  \n")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a %d\tb\n": "甲 %d\t乙\n", `say "x"`: `说 "x"`}, m)
	for data, want := range map[string]string{
		"\"a\" \"b\"\n\"a\" \"c\"": `c.txt:2: "a" is given twice`,
		"\n\"a\"":                  `c.txt:2: string 2 of "\"a\"": not a Go string literal`,
		"\"a\"\"b\"":               `c.txt:1: "\"a\"\"b\"": no space between the two strings`,
		"\"a\" \"b\" \"c\"":        `c.txt:1: "\"a\" \"b\" \"c\"": more after the two strings`,
		"'a' \"b\"":                `c.txt:1: string 1 of "'a' \"b\"": not a Go string literal`,
		"\"a \"b\"":                `c.txt:1: "\"a \"b\"": no space between the two strings`,
	} {
		_, err := ParseCatalog("c.txt", data)
		require.EqualError(t, err, want, "%q", data)
	}
	require.Panics(t, func() { Catalog("c.txt", "x") })
}

// The phrase catalog parses (every entry), and its table is the one
// Phrases gives and Translate reads.
func TestZHPhrasesCatalog(t *testing.T) {
	b, err := zhFiles.ReadFile("zh/phrases.txt")
	require.NoError(t, err)
	m, err := ParseCatalog("zh/phrases.txt", string(b))
	require.NoError(t, err)
	require.Greater(t, len(m), 300)
	require.Equal(t, m, Phrases(ZH))
	require.Nil(t, Phrases(EN))
	require.Equal(t, "按 rank 3 报告", Translate(ZH, "reported as rank 3"))
}
