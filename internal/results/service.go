package results

import (
	"encoding/json"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// ServiceDoc is the serving run as MS Service Profiler's parse output
// recorded it (issue 33; docs/json.md, "service"): the service.* metrics
// (latencies ms, ratios 0..1, throughput tokens/s), why a metric is
// missing, the files read with their column spellings, what of them was
// not read (partial), and the match of the device steps to the batches
// when a device capture of the same run was read with it. Absent when no
// service profile was read.
type ServiceDoc struct {
	Metrics     map[string]float64 `json:"metrics"`
	Unavailable map[string]string  `json:"unavailable"`
	// Source is the folder read; Files the files (or profiler.db tables,
	// "profiler.db:batch") read, in order; Spellings each one's column
	// spelling (microsecond, ms, datetime, profiler.db).
	Source    string            `json:"source"`
	Files     []string          `json:"files"`
	Spellings map[string]string `json:"spellings"`
	// Partial: a file was cut short or had rows that did not parse (the
	// complete rows were read); Issues name each such file.
	Partial bool               `json:"partial"`
	Issues  []ServiceFileIssue `json:"issues,omitempty"`
	// Join matches the device steps of one rank to the service batches;
	// absent without a rank with device steps.
	Join *ServiceJoinDoc `json:"join,omitempty"`
	// DP is each data-parallel domain's forwards (the service.dp.* metrics
	// as a list), by domain.
	DP []ServiceDPDoc `json:"dp,omitempty"`
	// Detail: see Document.Detail.
	Detail ServiceDetail `json:"detail,omitzero"`
}

// ServiceFileIssue says what of one file of the service profile was not
// read (the reader's own type).
type ServiceFileIssue = model.ServiceFileIssue

// ServiceDPDoc is one data-parallel domain's forwards: how many, their
// mean time and batch size, and the share of the run it spent on forwards
// with requests (busy: it ran a forward with requests; else only dummy
// steps).
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type ServiceDPDoc struct {
	DP            int      `json:"dp"`
	Forwards      int      `json:"forwards"`
	Busy          bool     `json:"busy"`
	ForwardMeanMs *float64 `json:"forward_mean_ms,omitempty"`
	BatchSizeMean *float64 `json:"batch_size_mean,omitempty"`
	BusyShare     *float64 `json:"busy_share,omitempty"`
}

// ServiceJoinDoc is the match of one rank's device steps (ProfilerStep#N,
// first to last device work) to the service profile's batches.
// kept: a contract type's own declaration; alike other formats' types in shape (tagged fields), not in logic
type ServiceJoinDoc struct {
	// Rank is the rank whose steps were matched.
	Rank int `json:"rank"`
	// Batches names the batch rows matched: "execution" (modelExec,
	// Execute) or "scheduling" (BatchSchedule, batchFrameworkProcessing).
	Batches string `json:"batches"`
	// ClockOffsetUs is the service clock minus the device clock, estimated
	// as the median start difference of the matched pairs (good to the
	// service profile's microsecond); ToleranceUs the largest start
	// difference a match may have after it.
	ClockOffsetUs float64 `json:"clock_offset_us"`
	ToleranceUs   float64 `json:"tolerance_us"`
	// Steps are the rank's device steps, Matched those matched to a batch.
	Steps   int `json:"steps"`
	Matched int `json:"matched"`
	// MixedSteps and DecodeSteps count the matched steps whose batch mixes
	// prefill into decode, and those of decode-only batches;
	// MixedStepRatio is the mean device step of the first over that of the
	// second (absent when either is empty); MixedShare the first over both.
	MixedSteps     int      `json:"mixed_steps"`
	DecodeSteps    int      `json:"decode_steps"`
	MixedShare     *float64 `json:"mixed_share,omitempty"`
	MixedStepRatio *float64 `json:"mixed_step_ratio,omitempty"`
	// StepBatches is, per matched device step, its batch: the service
	// cause of a slow step (a prefill batched into its decode, a large
	// batch).
	StepBatches []ServiceStepDoc `json:"step_batches"`
}

// ServiceStepDoc is one device step's service batch.
type ServiceStepDoc struct {
	Step int `json:"step"`
	// Row is the batch.csv row (0-based, header excluded).
	Row int `json:"row"`
	// StepUs is the device step (first to last device work).
	StepUs float64 `json:"step_time_us"`
	// Size, Prefill and Decode are the batch's requests, in all and of
	// each phase (absent when the row does not say).
	Size    *int `json:"batch_size,omitempty"`
	Prefill *int `json:"prefill,omitempty"`
	Decode  *int `json:"decode,omitempty"`
	// Cause is the service cause of the step's time: "prefill" (the batch
	// mixes prefill into decode, or is prefill alone), "decode" (decode
	// only), "" when the row does not say its phases.
	Cause string `json:"cause,omitempty"`
}

// ServiceDetail is what the terminal summary and the HTML report show of
// the service profile beyond the contract: the latency distributions and
// the batches and the KV cache over time.
type ServiceDetail struct {
	// Latency are the distributions of TTFT, TPOT, end-to-end and queue
	// wait (ms), by name ("ttft", "tpot", "e2e", "queue_wait").
	Latency []ServiceDistribution `json:"latency,omitempty"`
	// Batches are the scheduling rows over time, in at most
	// ServiceSeriesPoints bins: mean batch size, prefill and decode
	// requests.
	Batches []ServiceBatchPoint `json:"batches,omitempty"`
	// KV is the KV cache over time, in at most ServiceSeriesPoints bins:
	// the least free blocks and the largest usage of each bin.
	KV []ServiceKVPoint `json:"kv,omitempty"`
}

// ServiceSeriesPoints bounds the points of a series over time.
const ServiceSeriesPoints = 120

// ServiceDistribution is one latency's distribution: a histogram of
// Bins equal-width bins from MinMs to MaxMs.
type ServiceDistribution struct {
	Name   string  `json:"name"`
	Count  int     `json:"count"`
	MinMs  float64 `json:"min_ms"`
	MaxMs  float64 `json:"max_ms"`
	Counts []int   `json:"counts"`
}

// ServiceBatchPoint is one bin of the scheduling rows: its start (ms from
// the first row), its rows, mean batch size and mean prefill and decode
// requests (-1: not stated).
type ServiceBatchPoint struct {
	TMs     float64 `json:"t_ms"`
	Rows    int     `json:"rows"`
	Size    float64 `json:"size"`
	Prefill float64 `json:"prefill"`
	Decode  float64 `json:"decode"`
}

// ServiceKVPoint is one bin of the KV cache's rows: its start (ms from
// the first row), the least free blocks (-1: not stated) and the largest
// usage (-1: not stated) in it, and its preemptions.
type ServiceKVPoint struct {
	TMs      float64 `json:"t_ms"`
	Free     int     `json:"free_blocks"`
	Usage    float64 `json:"usage"`
	Preempts int     `json:"preemptions"`
}

// MarshalJSON encodes d's fields. A method, as the detail's parts are
// (detail.go), so that a document without a service profile never builds
// the encoders of its dozen types.
func (d ServiceDoc) MarshalJSON() ([]byte, error) {
	type fields ServiceDoc
	return json.Marshal(fields(d))
}
