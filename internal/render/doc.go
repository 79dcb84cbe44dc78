// Package render writes npuprof's outputs, one file per format, over the
// shared formatting helpers of format.go. Renderers never compute metrics:
// they read only the results document (package results; what the terminal
// and HTML show beyond the JSON contract is its detail, internal/results/detail.go) and
// the diff document that compares two of them (package internal/results/diff,
// which package compare fills).
//
//	outputs.go     the tables of --format values (RunOutputs, DiffOutputs)
//	format.go      units, metric values, the sanitizer, first lines
//	text.go        the terminal summary (analyze, check)
//	textexperts.go its expert-load section
//	serving.go     the serving context: values and order (every format), text section
//	json.go        the JSON documents: npuprof.analysis/v1 and npuprof.diff/v1
//	html*.go       the self-contained HTML report (html.go: its input and
//	               entry point; htmlexperts.go: its expert load)
//	junit.go       check's JUnit XML report
//	sarif.go       check's SARIF 2.1.0 log
//	difftext.go    the terminal diff (diff) and check --baseline's summary
//	diffview.go    the HTML diff's view of a comparison
//	diffhtml.go    the HTML diff page
package render
