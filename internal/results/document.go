// Package results holds the results document (schema npuprof.analysis/v1):
// one run's analysis results, findings, rule outcomes and facts, built once
// per run (package internal/results/assemble) and read back from a saved file (Read).
// It holds the document alone, no rule engine's working state, and
// imports no analysis: the contract that every writer (package render),
// `npuprof diff` and `check --baseline` (package compare) and other tools
// read, the detail the terminal summary and the HTML report read beyond it
// (detail.go, written by --format json-full only), the gate (gate.go) and
// what a run's writers read of the run (run.go, never saved). Field names
// are a public contract (docs/json.md).
package results

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/npuprof/npuprof/internal/buildinfo"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Schema is the JSON document's schema id.
const Schema = "npuprof.analysis/v1"

// Document is the stable JSON document. Field names are a public contract.
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type Document struct {
	Schema string `json:"schema"`
	// Tool names the npuprof that wrote the document: name, module
	// version and VCS revision (absent from documents written before it).
	Tool *buildinfo.Tool `json:"tool,omitempty"`
	// Lang is the language of the findings' texts and of the summary's
	// and the report's labels: "en" or "zh" (--lang). A document written
	// before it has none: English.
	Lang  string `json:"lang,omitempty"`
	Input Input  `json:"input"`
	// Context is what kind of job was profiled, from the profile alone.
	Context  ContextDoc     `json:"context"`
	Ranks    []RankDoc      `json:"ranks"`
	Findings []Finding      `json:"findings"`
	Notes    []string       `json:"notes,omitempty"`
	Errors   []PassErrorDoc `json:"errors,omitempty"`
	Cluster  *ClusterDoc    `json:"cluster,omitempty"`
	// Experts holds the expert-load and EP-rank skew results (their
	// metrics are in cluster.metrics).
	Experts *ExpertsDoc `json:"experts"`
	// Facts are the deployment facts rules saw, each with its source.
	Facts []FactValue `json:"facts,omitempty"`
	// Rules is every rule's outcome: fired, clear, not_evaluated, failed.
	Rules []Outcome `json:"rules,omitempty"`
	// DeployDiff is the --deploy script's change as one unified diff: the
	// fix plan's (plan.deploy_diff) when there is a plan, else every
	// finding's.
	DeployDiff string `json:"deploy_diff,omitempty"`
	// Plan is the fix plan: the predicted fixes in order, applied
	// cumulatively, what was left out and the combined changes; its
	// deploy_diff equals DeployDiff. Absent when nothing could be predicted.
	Plan *Plan `json:"plan,omitempty"`
	// Warnings are about the inputs of the rule evaluation (rules.Report.
	// Warnings): a --deploy script with several `vllm serve` commands names
	// each one's lines and the one the facts and deploy_diff use.
	Warnings []string `json:"warnings,omitempty"`
	// Serving is the serving context from vLLM's server log and `vllm bench
	// serve` results: serving.* metrics with their sources. Absent when no
	// log or bench result was read.
	Serving *ServingDoc `json:"serving,omitempty"`
	// Service is the serving run as MS Service Profiler recorded it: the
	// service.* metrics, the files read and the match of the device steps
	// to the batches (service.go). Absent when no service profile was read.
	Service *ServiceDoc `json:"service,omitempty"`
	// BaselineDiff is, for `check --baseline`, the comparison with the
	// baseline document (schema npuprof.diff/v1, package internal/results/diff).
	BaselineDiff json.RawMessage `json:"baseline_diff,omitempty"`
	// Detail is what the terminal summary and the HTML report show beyond
	// the contract (detail.go): only in --format json-full.
	Detail Detail `json:"detail,omitzero"`
	// Run is what the writers read of the run that writes them (run.go):
	// never saved.
	Run RunInfo `json:"-"`
}

// ContextDoc is what the profile says about the job: its workload (vllm,
// training or unknown) and the evidence for it.
type ContextDoc struct {
	Workload string   `json:"workload"`
	Evidence []string `json:"evidence"`
	// Conflicts are the facts the --deploy script or --fact gave that the
	// profile contradicts; the rules use the profile's value (also in
	// warnings, as text).
	Conflicts []Conflict `json:"conflicts,omitempty"`
}

// ServingDoc is the serving context (see internal/parser/model.Serving for each
// metric's definition): metrics (rates are ratios 0..1, throughputs
// tokens/s, latencies ms), why a key metric is missing, each metric's
// source, the files read, the statistics-line formats seen and the line
// numbers of the first malformed statistics lines.
type ServingDoc = model.Serving

// ClusterDoc is the cross-rank analysis.
type ClusterDoc struct {
	Ranks int `json:"ranks"`
	// Metrics: skew.<computing|communication|free>.max_over_median,
	// .median_us, .mad_us, .max_us, .max_rank; collectives.matched,
	// collectives.wait.time_us; slow_ranks.count.
	Metrics     map[string]float64 `json:"metrics"`
	Unavailable map[string]string  `json:"unavailable"`
	// RanksUsed names the ranks each cross-rank metric was computed from.
	RanksUsed map[string][]int `json:"ranks_used,omitempty"`
	SlowRanks []SlowRankDoc    `json:"slow_ranks"`
	// Stages are the pipeline stages and StageImbalance the imbalance
	// between them (analysis.SkewResult), absent without pipeline
	// parallelism.
	Stages         []StageDoc `json:"stages,omitempty"`
	StageImbalance string     `json:"stage_imbalance,omitempty"`
	Groups         []GroupDoc `json:"groups"`
	// Worst are the matched collectives with the longest total wait.
	Worst []CollectiveDoc `json:"worst_collectives"`
	Steps []StepSkewDoc   `json:"steps"`
	// Engines are the vLLM engines (data-parallel replicas: the tp groups
	// of parallel_group_info), by first rank.
	Engines []EngineDoc `json:"engines"`
	// Detail: see Document.Detail.
	Detail ClusterDetail `json:"detail,omitzero"`
}

// StageDoc is one pipeline stage: its ranks, and the medians over them of
// the computing time and of the p2p collectives (absent when unmeasured).
type StageDoc struct {
	Stage       int      `json:"stage"`
	Ranks       []int    `json:"ranks"`
	ComputingUs float64  `json:"computing_us"`
	P2PUs       *float64 `json:"p2p_us,omitempty"`
}

// EngineDoc is one vLLM engine: its ranks, whether it served requests (its
// ranks ran the sampler; the others ran dummy steps), its decode batch
// (largest decode.batch.observed of its ranks; absent when unknown) and
// its mean decode step (absent when unknown).
type EngineDoc struct {
	Ranks       []int    `json:"ranks"`
	Busy        bool     `json:"busy"`
	DecodeBatch *int     `json:"decode_batch,omitempty"`
	StepUs      *float64 `json:"step_time_us,omitempty"`
}

// SlowRankDoc names a slow rank and why.
type SlowRankDoc struct {
	Rank     int     `json:"rank"`
	Step     *int    `json:"step,omitempty"` // absent: over the window
	Quantity string  `json:"quantity"`       // computing, free, arrival
	Value    float64 `json:"value"`          // µs (arrival: collectives arrived last at)
	Median   float64 `json:"median"`
	Z        float64 `json:"robust_z,omitempty"`
	Reason   string  `json:"reason"`
}

// GroupDoc is one communicator instance across its ranks.
type GroupDoc struct {
	Comm        string             `json:"comm"`
	Group       string             `json:"group,omitempty"`
	Ranks       []int              `json:"ranks"`
	Collectives int                `json:"collectives"`
	LastRank    *int               `json:"last_rank,omitempty"`
	LastCount   map[string]int     `json:"last_arrivals"` // rank -> collectives it arrived last at
	WaitUs      map[string]float64 `json:"wait_us"`       // rank -> time it waited for the last arrival
}

// CollectiveDoc is one matched collective.
type CollectiveDoc struct {
	Comm        string  `json:"comm"`
	Group       string  `json:"group,omitempty"`
	Type        string  `json:"type"`
	Index       int     `json:"index"`
	LastRank    int     `json:"last_rank"`
	MaxWaitUs   float64 `json:"max_wait_us"`
	TotalWaitUs float64 `json:"total_wait_us"`
}

// StepSkewDoc is one step's skew per quantity.
type StepSkewDoc struct {
	Step int           `json:"step"`
	Skew []SkewStatDoc `json:"skew"`
}

// SkewStatDoc is one quantity over ranks (µs).
type SkewStatDoc struct {
	Quantity      string  `json:"quantity"`
	Ranks         int     `json:"ranks"`
	MedianUs      float64 `json:"median_us"`
	MADUs         float64 `json:"mad_us"`
	MaxUs         float64 `json:"max_us"`
	MaxRank       int     `json:"max_rank"`
	MaxOverMedian float64 `json:"max_over_median,omitempty"`
}

// Input describes what was read.
type Input struct {
	Path    string            `json:"path"`
	Kind    string            `json:"kind"`
	Ranks   []int             `json:"ranks"`
	Formats map[string]string `json:"formats,omitempty"` // rank -> format
	// WorldSize is the job's world size the ranks state and
	// WorldSizeFrom where (parallel_group_info, profiler_info, a Kineto
	// header); absent when none does. MissingRanks are the ranks of that
	// world the input lacks (check --require-all-ranks fails on them).
	WorldSize     int    `json:"world_size,omitempty"`
	WorldSizeFrom string `json:"world_size_from,omitempty"`
	MissingRanks  []int  `json:"missing_ranks,omitempty"`
}

// RankDoc is one rank in the document.
type RankDoc struct {
	Rank   int  `json:"rank"`
	Device *int `json:"device"`
	// Path is where the rank was read from: its profile folder, or for a
	// rank read back from an npuprof Parquet export, the export folder
	// (ExportedFrom then says where the capture was).
	Path string `json:"path"`
	// ExportedFrom is set for a rank read back from a Parquet export.
	ExportedFrom  *ExportedFromDoc   `json:"exported_from,omitempty"`
	ProfilerLevel string             `json:"profiler_level,omitempty"`
	TorchNPU      string             `json:"torch_npu_version,omitempty"`
	CANN          string             `json:"cann_version,omitempty"`
	Metrics       map[string]float64 `json:"metrics"`
	Unavailable   map[string]string  `json:"unavailable"`
	// Sources maps each metric (and "steps") to the file it was
	// computed from, relative to path.
	Sources       model.Sources `json:"sources,omitzero"`
	Steps         []StepDoc     `json:"steps"`
	Partial       bool          `json:"partial,omitempty"`
	PartialReason string        `json:"partial_reason,omitempty"`
	// PartialMetrics names the metrics measured over only the complete
	// part of a truncated input (see README, Robustness).
	PartialMetrics []string        `json:"partial_metrics,omitempty"`
	Warnings       []model.Warning `json:"warnings,omitempty"`
	// Kernels are the rank's top compute kernels by total time (at most
	// analysis.TopKernels), from the kernels pass. Absent when the rank has
	// no compute kernels (kernel.compute.time_us is then unavailable).
	Kernels []KernelDoc `json:"kernels,omitempty"`
	// Collectives are the HCCL big ops by type and group together (the
	// metrics split them by type or by group only); group "?" when it
	// could not be resolved. Sorted by type, then group.
	Collectives []CollectiveTypeDoc `json:"collectives,omitempty"`
	// Awaited is, per waiting stream (key event_wait.stream.<id>.awaited),
	// what its EVENT_WAITs waited for, most wait first (the waitpair pass).
	Awaited map[string][]AwaitedDoc `json:"awaited,omitempty"`
	// Detail: see Document.Detail.
	Detail RankDetail `json:"detail,omitzero"`
}

// AwaitedDoc is one task a stream's EVENT_WAITs waited for: kind
// collective (name type@group), kernel (op type, on a side stream), memcpy
// or host (nothing on the device ended the wait; stream -1).
type AwaitedDoc struct {
	Kind   string  `json:"kind"`
	Name   string  `json:"name"`
	Stream int32   `json:"stream"`
	Count  int     `json:"count"`
	WaitUs float64 `json:"wait_us"`
}

// ExportedFromDoc is where a rank read back from a Parquet export was
// exported from: the rank folder as given to npuprof export, that folder
// made absolute at export time and the exporting host (the last two absent
// for exports written before npuprof.parquet/v1.1).
type ExportedFromDoc struct {
	Path    string `json:"path"`
	AbsPath string `json:"abs_path,omitempty"`
	Host    string `json:"host,omitempty"`
}

// CollectiveTypeDoc is one (type, group) pair of HCCL big ops on one rank.
type CollectiveTypeDoc struct {
	Type   string  `json:"type"`
	Group  string  `json:"group"`
	Count  int     `json:"count"`
	TimeUs float64 `json:"time_us"`
}

// KernelDoc is one compute kernel name on one rank: what `npuprof diff`
// matches (by op_type and name) between two documents.
type KernelDoc struct {
	Name    string  `json:"name"`
	OpType  string  `json:"op_type,omitempty"`
	Core    string  `json:"core,omitempty"` // task type: AI_CORE, AI_VECTOR_CORE, AI_CPU, ...
	Count   int     `json:"count"`
	TotalUs float64 `json:"total_us"`
	MeanUs  float64 `json:"mean_us"`
	P50Us   float64 `json:"p50_us"`
	P99Us   float64 `json:"p99_us"`
}

// StepDoc is one step's breakdown (µs). CommunicationUs,
// CommunicationNotOverlappedUs, OverlappedUs and FreeUs are nil (JSON
// null) when the rank has no collective data; the rank's unavailable map
// then says why under analysis.StepCommKeys (steps.communication_us, ...).
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type StepDoc struct {
	Step                         int      `json:"step"`
	WindowUs                     float64  `json:"window_us"`
	ComputingUs                  float64  `json:"computing_us"`
	CommunicationUs              *float64 `json:"communication_us"`
	CommunicationNotOverlappedUs *float64 `json:"communication_not_overlapped_us"`
	OverlappedUs                 *float64 `json:"overlapped_us"`
	FreeUs                       *float64 `json:"free_us"`
	// PreparingUs is null when unknown (a step_trace_time.csv without
	// a Preparing column); Tasks is null for a step read from
	// step_trace_time.csv or analysis.db StepTraceTime (sources.steps
	// names the file), which counts no tasks.
	PreparingUs *float64 `json:"preparing_us"`
	Tasks       *int     `json:"tasks"`
	// Phase is decode, prefill or mixed (from the step's attention
	// kernels); absent when the step has none.
	Phase string `json:"phase,omitempty"`
}

// Value is the step's time field by its JSON key (window_us, computing_us,
// communication_us, communication_not_overlapped_us, overlapped_us,
// free_us, preparing_us); ok is false when the field was not measured
// (null) or key names none.
func (s StepDoc) Value(key string) (v float64, ok bool) {
	var p *float64
	switch key {
	case "window_us":
		return s.WindowUs, true
	case "computing_us":
		return s.ComputingUs, true
	case "communication_us":
		p = s.CommunicationUs
	case "communication_not_overlapped_us":
		p = s.CommunicationNotOverlappedUs
	case "overlapped_us":
		p = s.OverlappedUs
	case "free_us":
		p = s.FreeUs
	case "preparing_us":
		p = s.PreparingUs
	}
	if p == nil {
		return math.NaN(), false
	}
	return *p, true
}

// PassErrorDoc is a pass that failed: its name, the rank (-1: none) and
// what went wrong (analysis.PassError's fields).
type PassErrorDoc = model.PassError

// Read reads a saved JSON document and checks its schema. The
// schema is checked before the rest is decoded, so a document of another
// schema (npuprof.diff/v1) is named as such, not by a Go type error.
func Read(r io.Reader, name string) (*Document, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var probe struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: not an npuprof JSON document: %s", name, jsonProblem(data, err))
	}
	switch {
	case probe.Schema == nil:
		return nil, fmt.Errorf("%s: not an npuprof analysis document: no \"schema\" (expected %q, written by npuprof analyze --format json)", name, Schema)
	case *probe.Schema != Schema:
		return nil, fmt.Errorf("%s: schema %q, expected %q (a document written by npuprof analyze --format json)", name, *probe.Schema, Schema)
	}
	var doc Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not an npuprof JSON document: %s", name, jsonProblem(data, err))
	}
	return &doc, nil
}
