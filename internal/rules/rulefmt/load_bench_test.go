package rulefmt

import "testing"

// BenchmarkLoadBuiltinEager is loading the built-in rules compiling every
// expression and template at load time, as a --rules file is loaded.
func BenchmarkLoadBuiltinEager(b *testing.B) {
	eager := testBuiltin
	eager.Eager = true
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(&eager); err != nil {
			b.Fatal(err)
		}
	}
}
