// Package parquetio writes npuprof's normalized per-rank model as Parquet
// tables and reads it back, so that a cluster too big for one machine can
// be exported rank by rank (one `npuprof export` per node) and queried as
// one data set with DuckDB, Spark or Trino, and so that `npuprof analyze`
// can re-analyze an export without parsing JSON again.
//
// Layout (Hive-style partitions by rank; docs/parquet.md is the reference):
//
//	OUTDIR/device_tasks/rank=3/part-0.parquet
//	OUTDIR/hccl_ops/rank=3/part-0.parquet
//	OUTDIR/framework_ops/rank=3/part-0.parquet
//	OUTDIR/steps/rank=3/part-0.parquet
//	OUTDIR/metrics/rank=3/part-0.parquet
//	OUTDIR/links/rank=3/part-0.parquet
//	OUTDIR/comm_ops/rank=3/part-0.parquet
//	OUTDIR/step_trace/rank=3/part-0.parquet
//	OUTDIR/statistics/rank=3/part-0.parquet
//	OUTDIR/ranks/rank=3/part-0.parquet
//	OUTDIR/rank_state/part-<run>.parquet         (node tables, node.go: one
//	OUTDIR/rank_metrics/part-<run>.parquet        file per export run, the
//	OUTDIR/groups/part-<run>.parquet              rank a column)
//	OUTDIR/_npuprof/export-<first>-<last>.json   (schema version, notes)
//
// The rank is the partition value only (it is not a column inside the
// files); Hive-aware readers add it as a column. Row order is the model's
// order, and `links` refers to rows by their 0-based position in the rank's
// device_tasks / hccl_ops / framework_ops files.
package parquetio

import "github.com/npuprof/npuprof/internal/parser/model"

// Schema is the version of the table layout written. A reader refuses an
// export of a major version it does not know (SchemaV1, SchemaMajor);
// adding a column is a minor change (vN.M). v1.1 added the ranks columns
// abs_path and host; v1.2 the metrics column source, the ranks column
// device_file and the manifests' experts; v1.3 the ranks columns
// own_overlap_json, world_size and world_size_from, hccl_plane_tasks,
// _sdma and _rdma, and the statistics column max_ns; v1.4 the service
// profile's tables service_requests and service_batches (service.go) and
// the manifests' service; v1.5 the service tables service_batch_dp,
// service_kvcache and service_forwards and the manifests'
// service_profile, so that analyze reads the service profile back whole;
// v2 the node tables (node.go: rank_state,
// rank_metrics, groups, one file per export run), and groups_json of the
// ranks table without the member ranks (global_ranks is in groups).
const Schema = SchemaMajor

// SchemaMajor is the major version written; this npuprof reads it and
// SchemaV1 (with their minor versions vN.M).
const SchemaMajor = "npuprof.parquet/v2"

// SchemaV1 is the first major version, still read: an export of per-rank
// tables only, each rank's groups_json with its member ranks.
const SchemaV1 = "npuprof.parquet/v1"

// Table names (folder names under OUTDIR). Public contract.
const (
	TableDeviceTasks  = "device_tasks"
	TableHCCLOps      = "hccl_ops"
	TableFrameworkOps = "framework_ops"
	TableSteps        = "steps"
	TableMetrics      = "metrics"
	TableLinks        = "links"
	TableCommOps      = "comm_ops"
	TableStepTrace    = "step_trace"
	TableRanks        = "ranks"
	TableStatistics   = "statistics"
)

// Tables lists every table in the order they are written.
var Tables = []string{TableRanks, TableDeviceTasks, TableHCCLOps, TableFrameworkOps, TableLinks, TableSteps, TableCommOps, TableStepTrace, TableStatistics, TableMetrics}

// ManifestDir holds one JSON manifest per export run (Hive readers skip
// folders starting with '_').
const ManifestDir = "_npuprof"

// DeviceTask is one row of device_tasks (model.DeviceTask).
type DeviceTask struct {
	StartNs     int64  `parquet:"start_ns,delta"`
	DurNs       int64  `parquet:"dur_ns"`
	Name        string `parquet:"name,dict"`
	OpType      string `parquet:"op_type,dict"`
	TaskType    string `parquet:"task_type,dict"`
	InputShapes string `parquet:"input_shapes,dict"`
	Stream      int32  `parquet:"stream"`
	Class       string `parquet:"class,dict"`
	ModelID     int64  `parquet:"model_id"`
}

// HCCLOp is one row of hccl_ops (model.HCCLOp).
type HCCLOp struct {
	StartNs    int64  `parquet:"start_ns,delta"`
	DurNs      int64  `parquet:"dur_ns"`
	Name       string `parquet:"name,dict"`
	Type       string `parquet:"type,dict"`
	HashSuffix string `parquet:"hash_suffix,dict"`
	GroupName  string `parquet:"group_name,dict"`
	Variant    string `parquet:"variant,dict"`
}

// FrameworkOp is one row of framework_ops (model.FrameworkOp).
type FrameworkOp struct {
	StartNs int64  `parquet:"start_ns,delta"`
	DurNs   int64  `parquet:"dur_ns"`
	Name    string `parquet:"name,dict"`
	Tid     int64  `parquet:"tid"`
}

// Link is one row of links (model.Link): row numbers, -1 for none.
type Link struct {
	Op   int32 `parquet:"op"`
	Task int32 `parquet:"task"`
	HCCL int32 `parquet:"hccl"`
}

// Step is one row of steps: the model's ProfilerStep#N bounds and, when the
// steps pass measured it, the step's device breakdown (null otherwise).
// kept: the Parquet schema's own rows; alike the JSON contract's types in shape (tagged fields), not in logic
type Step struct {
	Step                       int64  `parquet:"step"`
	StartNs                    int64  `parquet:"start_ns"`
	EndNs                      int64  `parquet:"end_ns"`
	WindowNs                   *int64 `parquet:"window_ns,optional"`
	ComputingNs                *int64 `parquet:"computing_ns,optional"`
	CommunicationNs            *int64 `parquet:"communication_ns,optional"`
	CommunicationNotOverlapped *int64 `parquet:"communication_not_overlapped_ns,optional"`
	OverlappedNs               *int64 `parquet:"overlapped_ns,optional"`
	FreeNs                     *int64 `parquet:"free_ns,optional"`
	Tasks                      *int64 `parquet:"tasks,optional"`
}

// Metric is one row of metrics: a metric npuprof measured (value set) or
// could not measure (value null, unavailable says why), with the file it
// was computed from (source, the JSON document's sources; null when none
// is known; v1.2). Names are the metric names of the JSON document.
type Metric struct {
	Name        string   `parquet:"name,dict"`
	Value       *float64 `parquet:"value,optional"`
	Unavailable *string  `parquet:"unavailable,optional"`
	Source      *string  `parquet:"source,optional,dict"`
}

// CommOp is one row of comm_ops (communication.json, model.CommOpInfo).
type CommOp struct {
	Step      string  `parquet:"step,dict"`
	Kind      string  `parquet:"kind,dict"`
	Op        string  `parquet:"op,dict"`
	GroupHash string  `parquet:"group_hash,dict"`
	StartNs   int64   `parquet:"start_ns"`
	ElapseMs  float64 `parquet:"elapse_ms"`
	TransitMs float64 `parquet:"transit_ms"`
	WaitMs    float64 `parquet:"wait_ms"`
	SyncMs    float64 `parquet:"sync_ms"`
	IdleMs    float64 `parquet:"idle_ms"`
}

// StepTrace is one row of step_trace (step_trace_time.csv, model.StepTraceRow).
type StepTrace struct {
	Step                       string  `parquet:"step"`
	Computing                  float64 `parquet:"computing_us"`
	CommunicationNotOverlapped float64 `parquet:"communication_not_overlapped_us"`
	Overlapped                 float64 `parquet:"overlapped_us"`
	Communication              float64 `parquet:"communication_us"`
	Free                       float64 `parquet:"free_us"`
	Stage                      float64 `parquet:"stage_us"`
	Bubble                     float64 `parquet:"bubble_us"`
	Preparing                  float64 `parquet:"preparing_us"`
	HasPreparing               bool    `parquet:"has_preparing"`
}

// Statistic is one row of statistics: msprof's communication_statistic
// (kind "communication"), api_statistic (kind "api") and op_statistic
// (kind "op") tables (model.StatRow, Rank.CommStats, Rank.APIStats and
// Rank.OpStats).
// kept: the Parquet schema's own rows; alike the JSON contract's types in shape (tagged fields), not in logic
type Statistic struct {
	Kind    string `parquet:"kind,dict"`
	Level   string `parquet:"level,dict"`
	Name    string `parquet:"name,dict"`
	Count   int64  `parquet:"count"`
	TotalNs int64  `parquet:"total_ns"`
	// MaxNs is the longest single call (api_statistic's Max), 0 when
	// unknown (v1.3; 0 in older exports).
	MaxNs int64 `parquet:"max_ns,optional"`
}

// Statistic kinds.
const (
	StatCommunication = "communication"
	StatAPI           = "api"
	StatOp            = "op"
)

// Rank is the one row of ranks: everything about the rank that is not a
// table, with the small nested parts as JSON text.
// kept: the Parquet schema's own rows; alike the JSON contract's types in shape (tagged fields), not in logic
type Rank struct {
	Schema string `parquet:"schema"`
	Device int32  `parquet:"device"`
	// DeviceFile is the file that named Device, as the JSON document's
	// sources["device"] gives it (relative to the rank folder when in it),
	// "" when unknown (v1.2; have_json's DeviceFile is the path as read).
	DeviceFile string `parquet:"device_file,optional"`
	// Path is the rank folder as given to npuprof export (relative paths
	// are relative to the directory the export ran in).
	Path string `parquet:"path"`
	// AbsPath is Path made absolute when it was exported and Host the
	// host name of the machine that exported it (v1.1; "" when read from
	// an older export, where the columns are missing).
	AbsPath           string `parquet:"abs_path,optional"`
	Host              string `parquet:"host,optional"`
	Format            string `parquet:"format"`
	DirTimestamp      string `parquet:"dir_timestamp"`
	ProfilerLevel     string `parquet:"profiler_level"`
	TorchNPUVersion   string `parquet:"torch_npu_version"`
	CANNVersion       string `parquet:"cann_version"`
	HaveTimeline      bool   `parquet:"have_timeline"`
	HaveKernelDetails bool   `parquet:"have_kernel_details"`
	HaveHCCL          bool   `parquet:"have_hccl"`
	HaveFramework     bool   `parquet:"have_framework"`
	TimelineFile      string `parquet:"timeline_file"`
	KernelFile        string `parquet:"kernel_file"`
	// HaveJSON is model.Availability whole (the columns above repeat its
	// main flags for SQL): notes on why inputs were unusable, partial
	// flags, and whatever it gains later.
	HaveJSON      string `parquet:"have_json"`
	Partial       bool   `parquet:"partial"`
	PartialReason string `parquet:"partial_reason"`
	GroupsJSON    string `parquet:"groups_json"`
	EnvJSON       string `parquet:"env_json"`
	MetadataJSON  string `parquet:"metadata_json"`
	WarningsJSON  string `parquet:"warnings_json"`
	// OwnOverlapJSON is model.OwnOverlap, the capture's own Overlap
	// Analysis, "" when it has none (v1.3; "" in older exports).
	OwnOverlapJSON string `parquet:"own_overlap_json,optional"`
	// WorldSize and WorldSizeFrom are model.Rank's: the world size a
	// Kineto header or profiler_info states (v1.3; 0 and "" in older
	// exports).
	WorldSize     int32  `parquet:"world_size,optional"`
	WorldSizeFrom string `parquet:"world_size_from,optional"`
	// HCCLPlane* are model.Rank.HCCLPlane: the HCCL plane tasks and those
	// whose transport is SDMA or RDMA (v1.3; 0 when read from an older
	// export, where the columns are missing).
	HCCLPlaneTasks int64 `parquet:"hccl_plane_tasks,optional"`
	HCCLPlaneSDMA  int64 `parquet:"hccl_plane_sdma,optional"`
	HCCLPlaneRDMA  int64 `parquet:"hccl_plane_rdma,optional"`
}

// Manifest is OUTDIR/_npuprof/export-<first>-<last>.json: what one export
// run wrote.
type Manifest = manifestOf[*model.ExpertLoads]

// manifestOf is a manifest with its expert loads as E: the loads written
// (Manifest), or their JSON text, which the reader decodes only when they
// are used (manifestIn).
type manifestOf[E any] struct {
	Schema  string `json:"schema"`
	Npuprof string `json:"npuprof_version"`
	// Revision is the VCS revision npuprof was built from.
	Revision string `json:"npuprof_revision"`
	// Run is the export run that wrote it (and stamped its ranks).
	Run    string   `json:"run,omitempty"`
	Source string   `json:"source"`
	Ranks  []int    `json:"ranks"`
	Notes  []string `json:"notes"`
	// Experts are the expert loads found in the profile folder exported
	// (MindIE dumps or a layer,expert,tokens CSV in it or one folder
	// below, as analyze finds them), nil when there were none; ExpertsNote
	// says what was read or why it could not be (v1.2).
	Experts     E      `json:"experts,omitempty"`
	ExpertsNote string `json:"experts_note,omitempty"`
	// Service is the service profile folder whose requests and batches
	// the export wrote (service_requests, service_batches), "" when none
	// (v1.3).
	Service string `json:"service,omitempty"`
	// ServiceProfile is what the service profile read says of itself: its
	// folder, the files read with their spellings and what of them was not
	// read (v1.5; its tables are service_requests, service_batches,
	// service_batch_dp, service_kvcache and service_forwards).
	ServiceProfile *model.ServiceProfile `json:"service_profile,omitempty"`
}

// SourceFormat names a Parquet export as a parser source. A rank read back
// keeps the format it was captured in (model.Rank.Format).
const SourceFormat = "npuprof_parquet"
