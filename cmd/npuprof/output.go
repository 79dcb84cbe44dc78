package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The output block every command shares: where an output goes (a file
// written beside and renamed over, or standard output) and the checks of
// output and input file flags run before anything is read.

type ioWriter = io.Writer

// writeOutput writes to FILE (created only after the content is ready:
// written beside it, then renamed over it; through a symlink, its file) or
// to standard output. An existing FILE that is not a regular file
// (/dev/null, a FIFO) is written in place, never replaced.
func writeOutput(io *streams, file string, fn func(ioWriter) error) error {
	if file == "" || file == "-" {
		return fn(io.out)
	}
	if err := outputProblem(file); err != nil {
		return err
	}
	target := file
	if st, err := os.Stat(file); err == nil {
		if !st.Mode().IsRegular() {
			// a device (/dev/null, /dev/stdout), FIFO or socket: written
			// in place; renaming over it would replace it with a file
			return writeInPlace(file, fn)
		}
		// a symlink keeps pointing at its file: replace that file
		if real, err := filepath.EvalSymlinks(file); err == nil {
			target = real
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".npuprof-*")
	if err != nil {
		return usageErr("cannot write %s: %v", file, bareError(err))
	}
	defer os.Remove(tmp.Name())
	if err := fn(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes 0600 files; reports are meant to be shared.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return usageErr("cannot write %s: %v", file, bareError(err))
	}
	return nil
}

// writeInPlace writes to an existing file that is not a regular file.
func writeInPlace(file string, fn func(ioWriter) error) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return usageErr("cannot write %s: %v", file, bareError(err))
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// outputProblem says why file cannot be written as an output file, or nil
// ("" and "-" are standard output): it names a folder, or the folder it
// goes into does not exist or is not a folder. Commands call it on their
// output flags before reading the profile, so a typo in -o is not found
// only after minutes of parsing.
func outputProblem(file string) error {
	if file == "" || file == "-" {
		return nil
	}
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return usageErr("cannot write %s: it is a folder; expected a file name", file)
	}
	dir := filepath.Dir(file)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageErr("cannot write %s: folder %s does not exist (create it first)", file, dir)
	case err != nil:
		return usageErr("cannot write %s: %v", file, bareError(err))
	case !st.IsDir():
		return usageErr("cannot write %s: %s is not a folder", file, dir)
	}
	return nil
}

// checkOutputs runs outputProblem on each of a command's output files and
// refuses one that is an input file of the command (the profile file, a
// saved document, a rule file...): writing it would destroy what is read.
func checkOutputs(outputs []string, inputs ...string) error {
	seen := map[string]string{}
	for _, o := range outputs {
		if o == "" || o == "-" {
			continue
		}
		key := filepath.Clean(o)
		if abs, err := filepath.Abs(o); err == nil {
			key = abs
		}
		if prev, ok := seen[key]; ok {
			return usageErr("%s and %s both name the same file: the second would replace the first", prev, o)
		}
		seen[key] = o
	}
	for _, o := range outputs {
		if err := outputProblem(o); err != nil {
			return err
		}
		if o == "" || o == "-" {
			continue
		}
		ost, err := os.Stat(o)
		if err != nil {
			continue // a new file is no input
		}
		for _, in := range inputs {
			if in == "" || in == "-" {
				continue
			}
			if ist, err := os.Stat(in); err == nil && os.SameFile(ost, ist) {
				return usageErr("cannot write %s: it is an input (%s); npuprof never writes into its input", o, in)
			}
		}
	}
	return nil
}

// oneStdout refuses two outputs on standard output, where neither could be
// read back. pairs are flag, value; the main output's value is "" (its
// default) or "-", any other output's is "-".
func oneStdout(mainFlag, mainValue string, pairs ...string) error {
	var on []string
	if mainValue == "" || mainValue == "-" {
		on = append(on, mainFlag)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		switch {
		case pairs[i+1] != "-":
		case strings.HasSuffix(pairs[i], "="): // --format NAME=
			on = append(on, pairs[i]+"-")
		default:
			on = append(on, pairs[i]+" -")
		}
	}
	if len(on) > 1 {
		all := "all"
		if len(on) == 2 {
			all = "both"
		}
		return usageErr("%s would %s write to standard output, one after the other; give all but one a FILE", strings.Join(on, " and "), all)
	}
	return nil
}

// checkInputFiles refuses, before anything is read, an input FILE flag
// that names nothing or a folder. pairs are flag, value; "" is not given.
func checkInputFiles(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		flag, v := pairs[i], pairs[i+1]
		if v == "" {
			continue
		}
		st, err := os.Stat(v)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return usageErr("%s %s: no such file", flag, v)
		case err != nil:
			return usageErr("%s %s: %v", flag, v, bareError(err))
		case st.IsDir():
			return usageErr("%s %s: is a folder; expected a FILE", flag, v)
		}
	}
	return nil
}

// inputFlags are the rule and serving input FILE flags, as
// checkInputFiles pairs.
func inputFlags(r *ruleOptions, s *servingOptions) []string {
	out := []string{"--deploy", r.Deploy}
	for _, f := range r.RuleFiles {
		if f != "" { // an empty --rules is named by the rule loader
			out = append(out, "--rules", f)
		}
	}
	if s != nil {
		out = append(out, "--vllm-log", s.VLLMLog, "--vllm-bench", s.VLLMBench)
	}
	return out
}

// inputs lists the input files the rule and serving flags name.
func (o *ruleOptions) inputs() []string {
	return append([]string{o.Deploy}, o.RuleFiles...)
}

// bareError drops the path from an *fs.PathError or *os.LinkError: the
// message names the user's file, not the temporary one written first.
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
