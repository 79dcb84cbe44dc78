package deploy

import (
	"os"
	"strings"
	"testing"
)

// Reading a script and applying edits never panics; an edited script
// always reads back.
func FuzzParseAndEdit(f *testing.F) {
	if b, err := os.ReadFile("../../testdata/deploy/field-report-1.sh"); err == nil {
		f.Add(string(b))
	}
	f.Add("export A=1 B='x y'\nvllm serve m --x=1 --flag \\\n  --cc '{\"a\":1}'\n")
	f.Add("A=$(x; y)\nbash -c 'vllm serve m --flag --cc '\\''{}'\\'' -tp $((1+1))' && echo \"$A\"\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse("fuzz.sh", text)
		if err != nil {
			return
		}
		s.Facts()
		edits := []Edit{
			{Op: OpRemoveFlag, Name: "--flag"}, {Op: OpUnsetEnv, Name: "A"}, {Op: OpSetEnv, Name: "B", Value: "2"},
			{Op: OpMergeJSON, Name: "--cc", Value: `{"k":[1]}`, Create: true}, {Op: OpSetFlag, Name: "--x", Value: "9"},
		}
		for _, e := range edits {
			if _, err := s.Apply([]Edit{e}); err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s: %v", e, err)
			}
		}
	})
}
