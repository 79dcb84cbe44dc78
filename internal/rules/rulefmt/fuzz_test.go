package rulefmt

import (
	"io/fs"
	"testing"
)

// The rule loader never panics, whatever the file says.
func FuzzParse(f *testing.F) {
	names, _ := testBuiltin.Files()
	for _, n := range names {
		b, _ := fs.ReadFile(testBuiltin.FS, n)
		f.Add(b)
	}
	f.Add([]byte("budgets:\n  - hccl.total.time_us <= baseline * 1.05\n"))
	f.Add([]byte("rules:\n  - id: a-b\n    title: '{{ x'\n    when: true\n    fix: f\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse("fuzz.yaml", data)
	})
}
