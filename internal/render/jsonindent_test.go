package render

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// indentCases are compact JSON texts as json.Marshal writes them, the
// shapes indentJSON must keep apart: empty and nested containers,
// escapes (quotes, backslashes before a closing quote), punctuation in
// strings, numbers and literals.
var indentCases = []any{
	nil, true, 1.5, -0.0, 1e21, math.MaxInt64, "", `a"b`, `a\`, `\\"\"`, `{[,:]}`, "\u2028<>&\x01",
	[]any{}, map[string]any{}, []any{[]any{}, map[string]any{}},
	map[string]any{"a": []any{1, "x", nil, false}, `k"\`: map[string]any{"": []any{map[string]any{}}}},
	struct {
		A []int          `json:"a"`
		B map[string]int `json:"b"`
		C *struct{}      `json:"c"`
		D json.RawMessage
	}{A: []int{}, B: map[string]int{"z": 1, "y": 2}, C: &struct{}{}, D: json.RawMessage(` { "x" : [ 1 , 2 ] } `)},
	nested(maxDepth + 5), // deeper than lineStarts' string
}

// nested is n arrays one in the other around an object.
func nested(n int) any {
	if n == 0 {
		return map[string]any{"k": 1}
	}
	return []any{nested(n - 1), n}
}

// TestIndentJSONIsIndent holds indentJSON to json.Indent on the cases
// above and on every golden JSON document, with and without a prefix.
func TestIndentJSONIsIndent(t *testing.T) {
	var srcs [][]byte
	for _, v := range indentCases {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, b)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.json"))
	if len(files) == 0 {
		t.Fatal("no golden JSON documents")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		srcs = append(srcs, c.Bytes())
	}
	for _, src := range srcs {
		for _, p := range [][2]string{{"", "  "}, {"    ", "  "}, {"", "\t"}, {">", ""}} {
			var want bytes.Buffer
			if err := json.Indent(&want, src, p[0], p[1]); err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if got := indentJSON([]byte("x"), src, p[0], p[1]); string(got) != "x"+want.String() {
				t.Errorf("indentJSON(%.80q, %q, %q):\n%s\njson.Indent:\n%s", src, p[0], p[1], got[1:], want.Bytes())
			}
		}
	}
}

// FuzzIndentJSON compares indentJSON with json.Indent on any valid
// document once compacted (json.Marshal's output has no whitespace).
func FuzzIndentJSON(f *testing.F) {
	for _, v := range indentCases {
		b, _ := json.Marshal(v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c bytes.Buffer
		if json.Compact(&c, b) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, c.Bytes(), "  ", "\t"); err != nil {
			t.Fatal(err)
		}
		if got := indentJSON(nil, c.Bytes(), "  ", "\t"); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("indentJSON(%q):\n%s\njson.Indent:\n%s", c.Bytes(), got, want.Bytes())
		}
	})
}
