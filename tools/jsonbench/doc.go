// Package jsonbench compares ways to read a Chrome-trace trace_view.json
// in Go, on the same generated files npuprof's own benchmarks use, so the
// choice of npuprof's reader (internal/parser/traceview, a hand-written in-place
// scanner) rests on numbers: see docs/performance.md.
//
// It is a separate module so that npuprof does not depend on the
// candidates that lost. Run it with
//
//	cd tools/jsonbench && NPUPROF_BENCH_SIZES=200MB go test -bench . -benchtime 2x
//
// Every candidate extracts the fields npuprof reads (ph, name, pid, tid,
// ts, dur, cat and args' Task Type, Physic Stream Id, Model Id) from every
// event, counts the complete (X) events and sums their durations; a test
// checks that they all agree with the hand-written reader.
package jsonbench
