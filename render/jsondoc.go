// Package render turns analysis results and findings into output: the
// terminal summary, the JSON document (schema npuprof.analysis/v1) and, in
// later files, HTML, JUnit and SARIF. Renderers never compute metrics.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/rules"
)

// Schema is the JSON document's schema id.
const Schema = "npuprof.analysis/v1"

// Document is the stable JSON document. Field names are a public contract.
type Document struct {
	Schema   string          `json:"schema"`
	Input    Input           `json:"input"`
	Ranks    []RankDoc       `json:"ranks"`
	Findings []rules.Finding `json:"findings"`
	Notes    []string        `json:"notes,omitempty"`
	Errors   []PassErrorDoc  `json:"errors,omitempty"`
}

// Input describes what was read.
type Input struct {
	Path    string            `json:"path"`
	Kind    string            `json:"kind"`
	Ranks   []int             `json:"ranks"`
	Formats map[string]string `json:"formats,omitempty"` // rank -> format
}

// RankDoc is one rank in the document.
type RankDoc struct {
	Rank          int                `json:"rank"`
	Device        *int               `json:"device"`
	Path          string             `json:"path"`
	ProfilerLevel string             `json:"profiler_level,omitempty"`
	TorchNPU      string             `json:"torch_npu_version,omitempty"`
	CANN          string             `json:"cann_version,omitempty"`
	Metrics       map[string]float64 `json:"metrics"`
	Unavailable   map[string]string  `json:"unavailable"`
	Steps         []StepDoc          `json:"steps"`
	Partial       bool               `json:"partial,omitempty"`
	PartialReason string             `json:"partial_reason,omitempty"`
	Warnings      []model.Warning    `json:"warnings,omitempty"`
}

// StepDoc is one step's breakdown (µs).
type StepDoc struct {
	Step                         int     `json:"step"`
	WindowUs                     float64 `json:"window_us"`
	ComputingUs                  float64 `json:"computing_us"`
	CommunicationUs              float64 `json:"communication_us"`
	CommunicationNotOverlappedUs float64 `json:"communication_not_overlapped_us"`
	OverlappedUs                 float64 `json:"overlapped_us"`
	FreeUs                       float64 `json:"free_us"`
	PreparingUs                  float64 `json:"preparing_us"`
	Tasks                        int     `json:"tasks"`
}

// PassErrorDoc is a pass that failed.
type PassErrorDoc = analysis.PassError

func us(ns int64) float64 { return float64(ns) / 1000 }

// BuildDocument assembles the JSON document from results and findings.
func BuildDocument(res *analysis.Result, findings []rules.Finding) *Document {
	doc := &Document{Schema: Schema, Input: Input{Path: res.Path, Ranks: []int{}, Formats: map[string]string{}},
		Ranks: []RankDoc{}, Findings: []rules.Finding{}, Notes: res.Notes}
	kinds := map[string]bool{}
	for _, rr := range res.Ranks {
		doc.Input.Ranks = append(doc.Input.Ranks, rr.Rank)
		doc.Input.Formats[fmt.Sprint(rr.Rank)] = string(rr.Format)
		kinds[string(rr.Format)] = true
		rd := RankDoc{Rank: rr.Rank, Path: rr.Path, ProfilerLevel: rr.ProfilerLevel, TorchNPU: rr.TorchNPU, CANN: rr.CANN,
			Metrics: clean(rr.Metrics), Unavailable: rr.Unavailable, Steps: []StepDoc{},
			Partial: rr.Partial, PartialReason: rr.PartialReason, Warnings: rr.Warnings}
		if rr.Device >= 0 {
			d := rr.Device
			rd.Device = &d
		}
		if rd.Unavailable == nil {
			rd.Unavailable = map[string]string{}
		}
		for _, s := range rr.Steps {
			rd.Steps = append(rd.Steps, StepDoc{Step: s.Step, WindowUs: us(s.Window), ComputingUs: us(s.Computing),
				CommunicationUs: us(s.Communication), CommunicationNotOverlappedUs: us(s.CommunicationNotOverlapped),
				OverlappedUs: us(s.Overlapped), FreeUs: us(s.Free), PreparingUs: us(max(0, s.DeviceStart-s.HostStart)), Tasks: s.Tasks})
		}
		doc.Ranks = append(doc.Ranks, rd)
		doc.Errors = append(doc.Errors, rr.Errors...)
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	switch len(ks) {
	case 0:
		doc.Input.Kind = "unknown"
	case 1:
		doc.Input.Kind = ks[0]
	default:
		doc.Input.Kind = "mixed"
	}
	if findings != nil {
		doc.Findings = findings
	}
	return doc
}

// clean drops NaN/Inf values, which JSON cannot carry.
func clean(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		out[k] = v
	}
	return out
}

// WriteJSON writes the document, indented, with a trailing newline. Map
// keys are sorted by encoding/json, so output is byte-stable.
func WriteJSON(w io.Writer, doc *Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// ReadDocument reads a saved JSON document and checks its schema.
func ReadDocument(r io.Reader, name string) (*Document, error) {
	var doc Document
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: not an npuprof JSON document: %w", name, err)
	}
	if doc.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, expected %q", name, doc.Schema, Schema)
	}
	return &doc, nil
}
