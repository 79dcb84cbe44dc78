package parser

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/msprof"
	"github.com/npuprof/npuprof/internal/parser/sqlitedb"
	"github.com/npuprof/npuprof/internal/parser/summary"
	"github.com/npuprof/npuprof/internal/parser/traceview"
)

// A format is one kind of rank source: which sources it takes and how it
// reads one, onto the rank ParseRank named from the source. ParseRank
// reads a source with the first row that takes it. Detect makes the
// sources: a file named alone by its row of fileFormats, a rank folder by
// asRank, the ranks of an npuprof export by detectExport (detect.go).
type format struct {
	name  string
	takes func(Source) bool
	read  func(*model.Rank, Source) (*model.Rank, error)
}

// formats are the kinds of rank source ParseRank reads, in the order they
// are tried.
var formats = []format{
	{"a *_ascend_pt folder torch_npu collected but never parsed",
		func(s Source) bool { return s.Unparsed }, readUnparsed},
	{"a rank of an npuprof Parquet export",
		func(s Source) bool { return s.Parquet != "" }, parseExport},
	{"a trace file named alone (torch_npu trace_view.json, msprof_*.json, a Kineto trace)",
		func(s Source) bool { return s.TraceFile != "" }, parseTraceFile},
	{"a torch_npu db export (ascend_pytorch_profiler_{rank}.db, analysis.db)",
		func(s Source) bool { return s.Format == model.FormatTorchNPUDB }, parseTorchDB},
	{"an msprof PROF_* folder (mindstudio_profiler_output or msprof_{ts}.db)",
		func(s Source) bool { return s.Format == model.FormatMsprofText || s.Format == model.FormatMsprofDB }, parseMsprof},
	{"a torch_npu or MindSpore text export (ASCEND_PROFILER_OUTPUT)",
		func(Source) bool { return true }, parseOutput},
}

// readUnparsed refuses a folder torch_npu never parsed, saying how to.
func readUnparsed(_ *model.Rank, src Source) (*model.Rank, error) {
	return nil, errkind.New(errkind.Usage, unparsedMessage(src.Root))
}

// parseTorchDB reads a torch_npu db export: ascend_pytorch_profiler_{rank}.db
// and, beside it, analysis.db.
func parseTorchDB(r *model.Rank, src Source) (*model.Rank, error) {
	if st, err := os.Stat(src.Root); err == nil && st.IsDir() {
		readMeta(r, src.Root)
	}
	if err := sqlitedb.Read(src.DB, r); err != nil {
		return nil, err
	}
	noteDevice(r, src.DB)
	if p := filepath.Join(filepath.Dir(src.DB), "analysis.db"); exists(p) {
		if err := sqlitedb.ReadAnalysis(p, r); err != nil {
			r.Warn(p, "%v", err)
		}
		if len(r.StepTrace) > 0 {
			r.Have.StepTraceFile = p
			deviceFromStepTrace(r, p)
		}
		if len(r.Communication) > 0 {
			r.Have.CommFile = p
		}
	}
	finish(r)
	return validate(r)
}

// parseMsprof reads an msprof PROF_* folder: the DB export, or the text
// export (msprof_*.json timeline, else task_time_*.csv; op_summary_*.csv;
// communication_statistic_*.csv; api_statistic_*.csv;
// analyze/communication.json). When the PROF_* folder sits in a
// *_ascend_pt folder, that folder's profiler_info/profiler_metadata are
// read too.
func parseMsprof(r *model.Rank, src Source) (*model.Rank, error) {
	prof := src.Prof
	if prof == "" {
		prof = src.Root
	}
	if src.Root != prof {
		readMeta(r, src.Root)
	} else {
		r.Have.GroupsNote = fmt.Sprintf("%s is an msprof capture: the tp/ep/dp groups (parallel_group_info) are in torch_npu's profiler_metadata.json, which only a *_ascend_pt folder has", prof)
	}
	files := msprof.Find(prof)
	// several devices: the timeline (msprof_*.json's NPU processes, the
	// DB's deviceId) splits into one rank per device
	// (model.Rank.SplitDevices); what did not split is one rank
	defer func() {
		if len(files.Devices) > 1 && len(r.Devices) == 0 {
			r.Warn(prof, "holds %d devices (%v), but its timeline does not name the device of each task, so it cannot be split into one rank per device: npuprof reads it as one rank; capture one PROF_* folder per rank (one process per device) to compare ranks", len(files.Devices), files.Devices)
		}
	}()
	if r.Device < 0 && len(files.Devices) == 1 {
		r.Device = files.Devices[0]
		noteDevice(r, filepath.Join(prof, fmt.Sprintf("device_%d", files.Devices[0])))
	}
	if src.Format == model.FormatMsprofDB {
		if err := sqlitedb.Read(src.DB, r); err != nil {
			return nil, err
		}
		noteDevice(r, src.DB)
		finish(r)
		return validate(r)
	}
	out := filepath.Join(prof, msprof.OutputDir)
	if !files.OutputFound {
		r.Warn(prof, "no %s folder: the raw data was never exported (run `msprof --export=on --output=%s`); nothing to measure", msprof.OutputDir, prof)
		finish(r)
		return validate(r)
	}
	taskTime := false
	switch {
	case len(files.Timeline) > 0:
		name := files.Timeline[0]
		if n := len(files.Timeline); n > 1 {
			name = fmt.Sprintf("%s (+%d slices)", name, n-1)
		}
		sr := msprof.NewSliceReader(files.Timeline)
		_, err := traceview.ReadWithOverlap(sr, name, r)
		sr.Close()
		if err != nil {
			return nil, err
		}
		r.Have.TimelineFile = files.Timeline[0]
		noteDevice(r, files.Timeline[0])
	case len(files.TaskTime) > 0:
		var marks profilingMarks
		for _, p := range files.TaskTime {
			readTaskTime(r, p, &marks)
		}
		marks.check(r, files.TaskTime)
		r.Have.Timeline = len(r.Tasks) > 0
		r.Have.TimelineFile = files.TaskTime[0]
		taskTime = r.Have.Timeline
	}
	var devs rowDevices
	for _, p := range files.OpSummary {
		readKernelsOnto(r, p, taskTime, &devs)
	}
	if len(files.OpSummary) > 0 {
		kernelDevices(r, files.OpSummary[0], &devs)
	}
	if r.Device < 0 && len(files.OpSummary) > 0 {
		// op_summary's Device_id, when no device_{id} folder said it
		if d, ok := firstDevice(files.OpSummary[0], "Device_id"); ok {
			r.Device, r.Have.DeviceFile = d, files.OpSummary[0]
		}
	}
	if taskTime && len(files.OpSummary) == 0 {
		r.Warn(files.TaskTime[0], "no op_summary_*.csv: kernel names and op types are task_time's (the kernel binaries' hashed names, e.g. GroupedMatmul_0d2d4375...), not the ops' names")
	}
	for _, p := range files.CommStat {
		readStatFile(r, p, msprof.ReadCommStatistic, &r.CommStats)
	}
	for _, p := range files.APIStat {
		readStatFile(r, p, msprof.ReadAPIStatistic, &r.APIStats)
		if len(r.APIStats) > 0 && r.Have.APIStatFile == "" {
			r.Have.APIStatFile = p
		}
	}
	// the analysis reads analyze/communication.json only when no other
	// file gives the collectives (model.Rank.NeedsCommOps)
	if p := files.CommJSON; p != "" && (!src.SkipCommunication || r.NeedsCommOps()) {
		readComm(r, p, msprof.ReadCommunication)
		if len(r.Communication) > 0 {
			r.Have.CommFile = p
		}
	}
	if !r.Have.Timeline && !r.Have.KernelDetails {
		// op_statistic_*.csv gives the compute totals, as torch_npu's
		// op_statistic.csv does (AI CPU from its Core Type)
		for _, p := range files.OpStat {
			readOpStatistic(r, p)
		}
		if len(r.OpStats) == 0 {
			r.Warn(out, "no msprof_*.json, task_time_*.csv, op_summary_*.csv or op_statistic_*.csv: nothing to measure")
		}
	}
	checkCommStats(r, files.CommStat)
	finish(r)
	return validate(r)
}

// readTaskTime builds device tasks from task_time_*.csv. A row without a
// kernel name belongs to no op, so it is never Computing. Rows of a
// kernel_type npuprof does not know (model.KnownTaskType: a damaged cell,
// or a type newer than npuprof) are counted as other device tasks and
// warned about.
func readTaskTime(r *model.Rank, path string, marks *profilingMarks) {
	var unknown, firstLine int
	var firstType string
	var same sameTask
	defer func() {
		if unknown > 0 {
			r.Warnings = append(r.Warnings, model.Warning{File: path, Count: unknown, Lines: []int{firstLine}, Message: fmt.Sprintf(
				"%d row(s) with a kernel_type npuprof does not know (first: %q), expected a device task type (AI_CORE, AI_VECTOR_CORE, MIX_AIV, AI_CPU, EVENT_WAIT_SQE, ...): counted neither as compute nor as collectives or waits",
				unknown, clipCell(firstType))})
		}
		if same.n > 0 {
			r.Warnings = append(r.Warnings, model.Warning{File: path, Count: same.n, Lines: []int{same.firstLine}, Message: fmt.Sprintf(
				"%d row(s) repeat the stream_id, task_id and task_start(us) of another row with other cells, where each task is one row: duplicated or damaged lines? counted as they are",
				same.n)})
		}
		if same.times > 0 {
			r.Warnings = append(r.Warnings, model.Warning{File: path, Count: same.times, Lines: []int{same.timesLine}, Message: fmt.Sprintf(
				"%d row(s) repeat the stream_id, task_start(us) and task_stop(us) of another row with another task_id, where a stream runs one task at a time: duplicated or damaged lines? counted as they are",
				same.times)})
		}
	}()
	withFile(r, path, func(f io.Reader) error {
		issues, err := msprof.ReadTaskTime(f, path, func(t *msprof.TaskRow) {
			if !model.KnownTaskType(t.TaskType) {
				if unknown == 0 {
					firstType, firstLine = t.TaskType, t.Line
				}
				unknown++
			}
			same.add(t)
			name := t.Name
			if name == "" {
				name = t.TaskType
			}
			switch name {
			case "PROFILING_ENABLE":
				marks.enable++
			case "PROFILING_DISABLE":
				marks.disable++
			}
			c := model.ClassifyTask(t.TaskType, name)
			if c == model.ClassCompute && t.Name == "" {
				c = model.ClassOther
			}
			r.Tasks = append(r.Tasks, r.NewTask(t.Start, t.Dur, model.TaskExtra{Name: r.Intern(name), Stream: t.Stream, Class: c,
				OpType: r.Intern(binaryOpType(name)), TaskType: r.Intern(t.TaskType), ModelID: 4294967295}))
		})
		r.Warnings = append(r.Warnings, issues.Warnings(path)...)
		if err == nil && issues.Partial() {
			// task_time is the timeline: cut, every metric is partial
			r.Have.TimelinePartial = true
			r.Partial = true
			if r.PartialReason == "" {
				r.PartialReason = issues.PartialReason(path, len(r.Tasks))
			}
		}
		return err
	})
}

// sameTask finds task_time rows that repeat another row's stream, task id
// and start: one hardware task is one row, so such a row is a duplicated
// or damaged line (the cells of two rows joined), unless it is an exact
// duplicate (model.Rank.DropDuplicates counts those). So is a row of
// another task id with the stream, start and (non-zero) duration of
// another: a stream runs its tasks one after another. The rows are sorted
// by start, so only the rows of the current start are kept.
type sameTask struct {
	start        int64
	at           []sameTaskKey
	n, firstLine int
	// times counts the rows of another task id with the stream, start
	// and duration (not 0) of another row; timesLine is the first's line
	times, timesLine int
}

type sameTaskKey struct {
	stream int32
	task   int64
	dur    int64
	name   string
	typ    string
}

func (s *sameTask) add(t *msprof.TaskRow) {
	if t.TaskID < 0 {
		return
	}
	if t.Start != s.start || len(s.at) == 0 {
		s.start, s.at = t.Start, s.at[:0]
	}
	k := sameTaskKey{stream: t.Stream, task: t.TaskID, dur: t.Dur, name: t.Name, typ: t.TaskType}
	for _, o := range s.at {
		if o.stream != k.stream || o == k {
			continue
		}
		if o.task == k.task {
			if s.n == 0 {
				s.firstLine = t.Line
			}
			s.n++
			return
		}
		if k.dur > 0 && o.dur == k.dur {
			// another task id over the same time on one stream, which
			// runs one task at a time: a line that took another's times
			if s.times == 0 {
				s.timesLine = t.Line
			}
			s.times++
			return
		}
	}
	s.at = append(s.at, k)
}

// profilingMarks counts task_time's PROFILING_ENABLE and PROFILING_DISABLE
// rows: msprof writes one of each per device, the DISABLE row last of all
// (after the last kernel), so a file that holds an ENABLE row without its
// DISABLE row ends early: cut at a line boundary, which no cell shows.
type profilingMarks struct{ enable, disable int }

// check makes the rank partial when a PROFILING_DISABLE row is missing.
func (m profilingMarks) check(r *model.Rank, files []string) {
	if m.enable == 0 || m.disable >= m.enable {
		return
	}
	p := files[len(files)-1]
	r.Warn(p, "holds %d PROFILING_ENABLE row(s) but %d PROFILING_DISABLE row(s), which msprof writes last: the file ends early (cut at a line boundary?), so its last tasks may be missing", m.enable, m.disable)
	r.Have.TimelinePartial = true
	r.Partial = true
	if r.PartialReason == "" {
		r.PartialReason = fmt.Sprintf("%s has no PROFILING_DISABLE row (cut short?); the metrics from it cover the %d tasks read", p, len(r.Tasks))
	}
}

// readStatFile appends the rows of one msprof statistic CSV to *to.
func readStatFile(r *model.Rank, p string, read func(io.Reader, string) ([]model.StatRow, summary.RowIssues, error), to *[]model.StatRow) {
	withFile(r, p, func(f io.Reader) error {
		rows, issues, err := read(f, p)
		*to = append(*to, rows...)
		r.Warnings = append(r.Warnings, issues.Warnings(p)...)
		if err == nil && len(rows) > 0 && issues.Partial() {
			r.Have.PartialFiles = append(r.Have.PartialFiles, p)
		}
		return err
	})
}

// reBinaryName is task_time's kernel name: the op type and the kernel
// binary's hash (GroupedMatmul_0d2d43751f81d7f29646a862147967c9).
var reBinaryName = lazyre.New(`^(.+)_[0-9a-f]{32}$`)

// binaryOpType is the op type of a task_time kernel name: the name without
// the binary's hash, else what the aclnn pattern gives.
func binaryOpType(name string) string {
	if m := reBinaryName().FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return model.OpTypeFromName(name)
}

// checkCommStats compares communication_statistic totals with the
// collectives read, and warns when they disagree by more than 1%.
func checkCommStats(r *model.Rank, files []string) {
	if len(r.CommStats) == 0 || !r.Have.HCCL {
		return
	}
	var stat, got int64
	for _, s := range r.CommStats {
		stat += s.Total
	}
	for i := range r.HCCL {
		got += r.HCCL[i].Dur
	}
	d := stat - got
	if d < 0 {
		d = -d
	}
	if float64(d) > 0.01*float64(max(stat, got)) {
		r.Warn(strings.Join(files, ", "), "collectives total %.3f µs, but communication_statistic says %.3f µs", float64(got)/1000, float64(stat)/1000)
	}
}
