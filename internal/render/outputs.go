package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
)

// Output is one output: its name (a --format value), one line saying what
// it writes and its writer, which reads the one document D and nothing
// else (a run's options are the document's Run). A table of outputs
// (RunOutputs, DiffOutputs) is the one place an output is added: --format's
// default, its help and the values a wrong one is told to expect come from
// it.
type Output[D any] struct {
	Name  string
	Doc   string
	Write func(w io.Writer, doc D) error
	// Detail: the writer reads the document's detail (results.Detail): a
	// run builds it only when such an output is written.
	Detail bool
	// Timeline: the writer draws the ranks' sampled timelines (the HTML
	// mini timeline), kept only when such an output is written.
	Timeline bool
	// Failed writes, for a check that could not analyze its input, a
	// report of the error (doc: the input, tool, language, gate and the
	// error, results.RunInfo.InputError, only); nil for an output that has
	// none.
	Failed func(w io.Writer, doc D) error
}

// Outputs is a command's table of outputs, the default first.
type Outputs[D any] []Output[D]

// Lookup returns the output named name.
func (o Outputs[D]) Lookup(name string) (Output[D], bool) {
	for _, out := range o {
		if out.Name == name {
			return out, true
		}
	}
	return Output[D]{}, false
}

// Default is the name of the default output, the first.
func (o Outputs[D]) Default() string { return o[0].Name }

// Names lists the values for an error message: "text or json".
func (o Outputs[D]) Names() string {
	names := make([]string, len(o))
	for i, out := range o {
		names[i] = out.Name
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Help is the --format flag's usage: "output format: text (a readable
// table); json (the npuprof.diff/v1 document)".
func (o Outputs[D]) Help() string {
	parts := make([]string, len(o))
	for i, out := range o {
		parts[i] = fmt.Sprintf("%s (%s)", out.Name, out.Doc)
	}
	return "output format: " + strings.Join(parts, "; ")
}

// RunOutputs are the outputs of analyze, check and report, written from
// the results document.
var RunOutputs = Outputs[*results.Document]{
	{Name: "text", Doc: "a readable summary for terminals and CI logs", Write: WriteText, Detail: true},
	{Name: "json", Doc: "the npuprof.analysis/v1 document (stable keys, for tools and CI)", Write: WriteJSON},
	{Name: "json-full", Doc: "the document with its detail: what text and html show beyond json, so that the saved file renders as the profile does",
		Write: WriteJSONFull, Detail: true, Timeline: true},
	{Name: "html", Doc: "the self-contained HTML report", Write: WriteHTML, Detail: true, Timeline: true},
	{Name: "junit", Doc: "a JUnit XML report, one test case per rule", Write: WriteJUnit, Failed: WriteJUnitFailed},
	{Name: "sarif", Doc: "a SARIF 2.1.0 log, one result per finding", Write: WriteSARIF, Failed: WriteSARIFFailed},
}

// DiffOutputs are diff's outputs, written from the comparison.
var DiffOutputs = Outputs[*diff.Result]{
	{Name: "text", Doc: "a readable table", Write: WriteDiffText},
	{Name: "json", Doc: "the npuprof.diff/v1 document", Write: WriteDiffJSON},
	{Name: "html", Doc: "the self-contained HTML diff", Write: WriteDiffHTML},
}
