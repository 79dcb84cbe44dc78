package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/render"
)

// formats are a command's outputs: --format NAME[=FILE], repeatable, over
// its table of outputs (render.Outputs), and the aliases of --format
// NAME=FILE (--html FILE, --junit FILE, --sarif FILE). The main output is
// the one --format value without =FILE (default: the table's first) and
// goes to -o; each NAME=FILE and alias writes one more output to FILE.
type formats[D any] struct {
	outs   render.Outputs[D]
	values []string
	// specs are the outputs to write, the main one first (parse).
	specs []outputSpec[D]
	// pairs are flag, value of every output but the main one, for
	// oneStdout.
	pairs []string
}

// outputSpec is one output to write and its file ("" or "-": standard
// output).
type outputSpec[D any] struct {
	render.Output[D]
	file string
}

func (f *formats[D]) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.values, "format", nil, f.outs.Help()+
		"; default "+f.outs.Default()+". `NAME[=FILE]`, repeatable: NAME=FILE writes one more output to FILE, NAME alone is the output -o names")
}

// main is the main output's name.
func (f *formats[D]) main() string {
	for _, v := range f.values {
		if !strings.Contains(v, "=") {
			return v
		}
	}
	return f.outs.Default()
}

// parse reads the --format values and the aliases (flag, output name,
// FILE; "" not given) into specs: the main output to output (-o), then
// each NAME=FILE in order, then each alias given.
func (f *formats[D]) parse(output string, aliases ...string) error {
	main, ok := f.outs.Lookup(f.main())
	if !ok {
		return usageErr("--format %q: expected %s", f.main(), f.outs.Names())
	}
	f.specs, f.pairs = []outputSpec[D]{{Output: main, file: output}}, nil
	seenMain := false
	for _, v := range f.values {
		name, file, extra := strings.Cut(v, "=")
		out, ok := f.outs.Lookup(name)
		switch {
		case !ok:
			return usageErr("--format %q: expected %s (optionally =FILE)", name, f.outs.Names())
		case !extra && seenMain:
			return usageErr("--format %s and --format %s: only one output goes to -o (standard output by default); give the other =FILE", main.Name, name)
		case !extra:
			seenMain = true
		case file == "":
			return usageErr("--format %s=: expected a FILE after =", name)
		default:
			f.specs = append(f.specs, outputSpec[D]{Output: out, file: file})
			f.pairs = append(f.pairs, "--format "+name+"=", file)
		}
	}
	for i := 0; i+2 < len(aliases); i += 3 {
		if aliases[i+2] == "" {
			continue
		}
		out, _ := f.outs.Lookup(aliases[i+1])
		f.specs = append(f.specs, outputSpec[D]{Output: out, file: aliases[i+2]})
		f.pairs = append(f.pairs, aliases[i], aliases[i+2])
	}
	return nil
}

// check refuses, before anything is read, an output that cannot be
// written, two outputs naming one file or an input (inputs), and two
// outputs on standard output. main names the main output in messages.
func (f *formats[D]) check(main string, inputs ...string) error {
	files := make([]string, len(f.specs))
	for i, s := range f.specs {
		files[i] = s.file
	}
	if err := checkOutputs(files, inputs...); err != nil {
		return err
	}
	return oneStdout(main, f.specs[0].file, f.pairs...)
}

// terminal reports whether the main output is the terminal summary.
func (f *formats[D]) terminal() bool { return f.specs[0].Name == "text" }

// needs reports whether an output reads the document's detail and draws
// the ranks' sampled timelines.
func (f *formats[D]) needs() (detail, timeline bool) {
	for _, s := range f.specs {
		detail, timeline = detail || s.Detail, timeline || s.Timeline
	}
	return detail, timeline
}

// write writes every output of doc, the main one first.
func (f *formats[D]) write(io *streams, doc D) error {
	for _, s := range f.specs {
		if err := writeOutput(io, s.file, func(w ioWriter) error { return s.Write(w, doc) }); err != nil {
			return err
		}
	}
	return nil
}
