package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/inputs/vllmserve"
	"os"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/compare"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/results/diff"
)

// DefaultKernels is how many kernels a comparison lists by default.
const DefaultKernels = compare.DefaultKernels

// DiffRequest is one run of npuprof diff: two sides, each a profile or a
// saved document, compared.
type DiffRequest struct {
	Before, After DiffSide
	// Load is how a side that is a profile is read; Loading, when set, is
	// called before each such side is read (to draw its progress: it may
	// set the options' Progress and BytesRead) and returns what to call
	// once it is.
	Load    pipeline.Options
	Loading func(*pipeline.Options) (done func())
	// Rules run on a side that is a profile (a saved document keeps its
	// findings), in Lang.
	Rules RuleSelection
	Lang  string
	// Kernels is how many kernels the comparison lists.
	Kernels int
}

// DiffSide is one side: its path, its vLLM server log (--vllm-log-
// before/after; else, unless NoAuto, one found in the profile folder) and
// its service profile folder (--service-before/after; else one found at
// or beside the rank folders).
type DiffSide struct {
	Path, VLLMLog string
	NoAuto        bool
	Service       string
}

// Diff compares the two sides of req. failed is the internal error (exit
// 3) naming the passes and rules that failed on a side that is a profile
// (a saved document's are its own), returned beside the comparison: the
// outputs are written first.
func Diff(ctx context.Context, req *DiffRequest) (r *diff.Result, failed error, err error) {
	var docs, analyzed [2]*results.Document
	for i, side := range []DiffSide{req.Before, req.After} {
		doc, profile, err := diffSide(ctx, side, req)
		if err != nil {
			return nil, nil, err
		}
		docs[i] = doc
		if profile {
			analyzed[i] = doc
		}
	}
	return compare.Compare(docs[0], docs[1], compare.Options{Kernels: req.Kernels}), failures(analyzed[:]...), nil
}

// diffSide reads a saved document, or analyzes a profile into one with
// the rules run on it (findings, rule outcomes and facts, the serving
// context included), as analyze --format json would write it.
func diffSide(ctx context.Context, side DiffSide, req *DiffRequest) (doc *results.Document, profile bool, err error) {
	path := side.Path
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && IsDocument(path) {
		doc, err = ReadDocument(path, "")
		if err != nil {
			return nil, false, err
		}
		if side.VLLMLog != "" {
			res := &analysis.Result{}
			if err := loadServing(res, path, vllmserve.Inputs{Log: side.VLLMLog, NoAuto: true}); err != nil {
				return nil, false, err
			}
			doc.Serving = res.Serving
		}
		return doc, false, nil
	}
	opts := req.Load
	opts.Service = side.Service
	res, err := load(ctx, path, opts, req.Loading)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && !st.IsDir() && (errkind.Is(err, errkind.Usage) || errkind.Is(err, errkind.Input)) {
			// a file diff read as a profile: it was not a saved document either
			err = fmt.Errorf("%w; nor a document saved by npuprof analyze --format json (no \"schema\": %q)", err, results.Schema)
		}
		return nil, false, err
	}
	if err := loadServing(res, path, vllmserve.Inputs{Log: side.VLLMLog, NoAuto: side.NoAuto}); err != nil {
		return nil, false, err
	}
	set, err := LoadRules(req.Rules)
	if err != nil {
		return nil, false, err
	}
	rep, facts, err := judge(res, set, &Request{Rules: req.Rules, Lang: req.Lang}, nil)
	if err != nil {
		return nil, false, err
	}
	return assemble.NewContract(res, rep, facts), true, nil
}

// IsDocument reports whether a file is a saved npuprof document: a JSON
// object whose top-level "schema" names an npuprof schema, wherever the
// key sits and however the file is laid out (indented, compacted by jq -c,
// keys sorted by jq -S or Python). A trace in object form is told apart
// at its "traceEvents" key, before its events are read.
func IsDocument(path string) bool {
	f, err := infile.Open(path, infile.Document, infile.Opts{})
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		switch key {
		case "schema":
			var v string
			return dec.Decode(&v) == nil && strings.HasPrefix(v, "npuprof.")
		case "traceEvents":
			return false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
