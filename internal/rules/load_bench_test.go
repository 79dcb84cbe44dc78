package rules

import "testing"

// BenchmarkLoadBuiltin is the cost every analyze, check and report run pays
// to load the built-in rules.
func BenchmarkLoadBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadEvaluate is loading the built-in rules and evaluating them
// once over the ep-fc1-cumsum scenario, as `npuprof analyze` does: what
// is compiled on first use (the conditions, the templates of the rules
// that fire) is paid here.
func BenchmarkLoadEvaluate(b *testing.B) {
	res := analyzed(b, "ep-fc1-cumsum")
	fs, err := BuildFacts(res, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		set, err := Load()
		if err != nil {
			b.Fatal(err)
		}
		rep := Evaluate(set, &Input{Result: res, Facts: fs})
		if len(rep.Findings) == 0 || len(rep.Failed()) > 0 {
			b.Fatal("expected findings and no failed rule")
		}
	}
}
