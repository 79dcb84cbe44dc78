package lang

import (
	"testing"
	"testing/fstest"

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
	require.NoError(t, CheckCatalogs(zhFiles, "zh/*.txt", map[string]map[string]string{"zh/phrases.txt": Phrases(ZH)}))
	require.Greater(t, len(Phrases(ZH)), 300)
	require.Nil(t, Phrases(EN))
	require.Equal(t, "按 rank 3 报告", Translate(ZH, "reported as rank 3"))
}

// CheckCatalogs names a catalog that does not parse, a table without its
// file, a file no table reads, and a table the code reads from elsewhere.
func TestCheckCatalogs(t *testing.T) {
	fsys := fstest.MapFS{"zh/a.txt": {Data: []byte("\"a\" \"甲\"\n")}, "zh/b.txt": {Data: []byte("\"b\" \"乙\"\n")}}
	a, b := map[string]string{"a": "甲"}, map[string]string{"b": "乙"}
	require.NoError(t, CheckCatalogs(fsys, "zh/*.txt", map[string]map[string]string{"zh/a.txt": a, "zh/b.txt": b}))
	require.EqualError(t, CheckCatalogs(fsys, "zh/*.txt", map[string]map[string]string{"zh/a.txt": a}), "zh/*.txt: 2 catalogs, 1 tables the code reads")
	require.EqualError(t, CheckCatalogs(fsys, "zh/*.txt", map[string]map[string]string{"zh/a.txt": a, "zh/c.txt": b}), "zh/b.txt: no table of the code reads it")
	require.EqualError(t, CheckCatalogs(fsys, "zh/*.txt", map[string]map[string]string{"zh/a.txt": b, "zh/b.txt": b}), "zh/a.txt: not the table the code reads from it")
	fsys["zh/b.txt"] = &fstest.MapFile{Data: []byte("\"b\"\n")}
	require.ErrorContains(t, CheckCatalogs(fsys, "zh/*.txt", map[string]map[string]string{"zh/a.txt": a, "zh/b.txt": b}), "zh/b.txt:1: string 2")
	fsys["zh/b.txt"] = &fstest.MapFile{Data: []byte("# nothing\n")}
	require.EqualError(t, CheckCatalogs(fsys, "zh/*.txt", map[string]map[string]string{"zh/a.txt": a, "zh/b.txt": b}), "zh/b.txt: no entries")
}
