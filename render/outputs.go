package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/npuprof/npuprof/results"
	"github.com/npuprof/npuprof/results/diff"
)

// Output is one value of a command's --format: its name, one line saying
// what it writes and its writer. A command's table of outputs (RunOutputs,
// DiffOutputs) is the one place a format is added: the flag's default, its
// help and the values a wrong one is told to expect come from it.
type Output[In any] struct {
	Name  string
	Doc   string
	Write func(w io.Writer, in In) error
	// View: the writer reads the results document's view (results.View,
	// built by results/build.AddView); the command builds it only then.
	View bool
}

// Outputs is a command's table of --format values, the default first.
type Outputs[In any] []Output[In]

// Lookup returns the output named name.
func (o Outputs[In]) Lookup(name string) (Output[In], bool) {
	for _, out := range o {
		if out.Name == name {
			return out, true
		}
	}
	return Output[In]{}, false
}

// Default is the name of the default output, the first.
func (o Outputs[In]) Default() string { return o[0].Name }

// Names lists the values for an error message: "text or json".
func (o Outputs[In]) Names() string {
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
func (o Outputs[In]) Help() string {
	parts := make([]string, len(o))
	for i, out := range o {
		parts[i] = fmt.Sprintf("%s (%s)", out.Name, out.Doc)
	}
	return "output format: " + strings.Join(parts, "; ")
}

// RunOutput is what analyze's and check's --format outputs are written
// from.
type RunOutput struct {
	// Doc is the run's results document (build.New): every output is
	// written from it.
	Doc *results.Document
	// Baseline is check --baseline's comparison, summarised under the
	// text (the document carries it as baseline_diff).
	Baseline *diff.Result
	// Verdict is the line check's text output ends with ("" for analyze).
	Verdict string
	// Text caps the terminal summary (--steps all, --ranks all lift them).
	Text TextOptions
}

// RunOutputs are analyze's and check's --format values.
var RunOutputs = Outputs[RunOutput]{
	{Name: "text", Doc: "a readable summary for terminals and CI logs", Write: writeRunText, View: true},
	{Name: "json", Doc: "the npuprof.analysis/v1 document (stable keys, for tools and CI)",
		Write: func(w io.Writer, in RunOutput) error { return WriteJSON(w, in.Doc) }},
}

// writeRunText writes the terminal summary, then check's comparison with
// its baseline and its verdict.
func writeRunText(w io.Writer, in RunOutput) error {
	if err := WriteTextWith(w, in.Doc, in.Text); err != nil {
		return err
	}
	if in.Baseline != nil {
		if err := WriteDiffSummary(w, in.Baseline); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, in.Verdict)
	return err
}

// DiffOutput is what diff's --format outputs are written from.
type DiffOutput struct {
	Result *diff.Result
	Text   DiffTextOptions
}

// DiffOutputs are diff's --format values.
var DiffOutputs = Outputs[DiffOutput]{
	{Name: "text", Doc: "a readable table",
		Write: func(w io.Writer, in DiffOutput) error { return WriteDiffText(w, in.Result, in.Text) }},
	{Name: "json", Doc: "the npuprof.diff/v1 document",
		Write: func(w io.Writer, in DiffOutput) error { return WriteDiffJSON(w, in.Result) }},
}
