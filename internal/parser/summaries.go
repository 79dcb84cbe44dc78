package parser

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/msprof"
	"github.com/npuprof/npuprof/internal/parser/sqlitedb"
	"github.com/npuprof/npuprof/internal/parser/summary"
)

// readStepTrace reads step_trace_time.csv into r.StepTrace and takes the
// rank's device from its Device_id column (new headers) when unknown.
func readStepTrace(r *model.Rank, p string) {
	var issues summary.RowIssues
	err := withFile(r, p, func(f io.Reader) error {
		var rows []model.StepTraceRow
		var err error
		rows, issues, err = summary.ReadStepTraceTime(f, p)
		r.Warnings = append(r.Warnings, issues.Warnings(p)...)
		r.StepTrace = rows
		return err
	})
	if err == nil && len(r.StepTrace) > 0 {
		r.Have.StepTraceFile = p
		partialFile(r, p, &issues, len(r.StepTrace))
	}
	if err == nil && len(r.StepTrace) == 0 {
		// a header and no row: no step was measured from it (not zero
		// steps), said once (skipped rows were warned about already)
		if issues.Skipped == 0 {
			r.Warn(p, "holds only its header: no step row, so no step was measured from it")
		}
	}
	deviceFromStepTrace(r, p)
}

// partialFile records that the summary file p was read only in part
// (issues say why; rows were used): the metrics computed from it are
// partial, and so is the rank when it has no timeline (the file is then
// its device data), with the file and line in partial_reason.
func partialFile(r *model.Rank, p string, issues *summary.RowIssues, rows int) {
	if !issues.Partial() {
		return
	}
	r.Have.PartialFiles = append(r.Have.PartialFiles, p)
	if !r.Have.Timeline {
		r.Partial = true
		if r.PartialReason == "" {
			r.PartialReason = issues.PartialReason(p, rows)
		}
	}
}

// deviceFromStepTrace sets r.Device from the rows' Device_id, when
// unknown. A file of several devices (one process driving them) splits
// with the rank (model.Rank.Devices) when the rank's device data does too
// (a timeline of several devices) or there is none (a summaries-only
// rank); beside device data of one known device it keeps that device's
// rows; else it is read as one device, and a warning says so.
func deviceFromStepTrace(r *model.Rank, file string) {
	devs := map[string]bool{}
	for _, row := range r.StepTrace {
		if row.Device != "" {
			devs[row.Device] = true
		}
	}
	if len(devs) > 1 {
		ids := slices.Sorted(maps.Keys(devs))
		var nums []int
		for _, d := range ids {
			if n, err := strconv.Atoi(d); err == nil && n >= 0 && n < 1<<15 {
				nums = append(nums, n)
			}
		}
		switch {
		case len(nums) != len(ids):
			r.Warn(file, "holds the rows of %d devices (Device_id %s), not each a device id: npuprof reads them as one rank, so its step totals add the devices together; analyze each device's capture apart", len(devs), strings.Join(ids, ", "))
		case len(r.Devices) > 0 || !r.Have.Timeline && !r.Have.KernelDetails:
			for _, n := range nums {
				r.AddDevice(n)
			}
		case r.Device >= 0 && devs[strconv.Itoa(r.Device)]:
			// the timeline is one device's: its rows only
			keep := r.StepTrace[:0]
			for _, row := range r.StepTrace {
				if row.Device == strconv.Itoa(r.Device) {
					keep = append(keep, row)
				}
			}
			r.StepTrace = keep
			r.Warn(file, "holds the rows of %d devices (Device_id %s); the rank's timeline is device %d's, so its rows only are read", len(devs), strings.Join(ids, ", "), r.Device)
		default:
			r.Warn(file, "holds the rows of %d devices (Device_id %s), but the rank's other files hold one device and do not say which: npuprof cannot split the rows by device and reads them as one rank, so its step totals add the devices together; analyze each device's capture apart", len(devs), strings.Join(ids, ", "))
		}
	}
	if r.Device >= 0 {
		return
	}
	for _, row := range r.StepTrace {
		if d, err := strconv.Atoi(row.Device); err == nil && d >= 0 {
			r.Device, r.Have.DeviceFile = d, file
			return
		}
	}
}

// readSummaries reads, from the torch_npu output folder out, the summary
// files that give what the timeline and kernel_details.csv did not:
// communication.json (skipped by the analysis when collectives are known:
// skipComm), op_statistic.csv (the compute totals when there are no
// kernels), and analysis.db (StepTraceTime and CommAnalyzerTime when the
// text files lack them).
func readSummaries(r *model.Rank, out string, skipComm bool) {
	// (also when kernel_details.csv gave the collectives: a cross-check,
	// cheap beside it)
	if skipComm && r.NeedsCommOps() {
		if p := findInput(out, "communication.json"); p != "" {
			readComm(r, p, summary.ReadCommunication)
			if len(r.Communication) > 0 {
				r.Have.CommFile = p
			}
		}
	}
	if !r.Have.Timeline && !r.Have.KernelDetails {
		if p := findInput(out, "op_statistic.csv"); p != "" {
			readOpStatistic(r, p)
			opStatDevices(r, p)
		}
	}
	needSteps := len(r.StepTrace) == 0
	needComm := !r.Have.HCCL && len(r.Communication) == 0
	// MindSpore names torch_npu's analysis.db communication_analyzer.db
	for _, n := range []string{"analysis.db", "communication_analyzer.db"} {
		if p := filepath.Join(out, n); (needSteps || needComm) && exists(p) {
			readAnalysisDB(r, p, needSteps, needComm)
			break
		}
	}
}

// readOpStatistic appends the rows of op_statistic.csv (torch_npu) or
// op_statistic_*.csv (msprof) to r.OpStats: the compute totals of a rank
// without a timeline or kernel_details.csv.
func readOpStatistic(r *model.Rank, p string) {
	var issues summary.RowIssues
	n := len(r.OpStats)
	withFile(r, p, func(f io.Reader) error {
		rows, is, err := msprof.ReadOpStatistic(f, p)
		r.OpStats, issues = append(r.OpStats, rows...), is
		r.Warnings = append(r.Warnings, is.Warnings(p)...)
		return err
	})
	if len(r.OpStats) > n {
		if r.Have.OpStatFile == "" {
			r.Have.OpStatFile = p
		}
		partialFile(r, p, &issues, len(r.OpStats)-n)
	}
}

// opStatDevices splits a summaries-only rank whose op_statistic rows
// name several devices (Device_id) into one rank per device
// (model.Rank.Devices), as step_trace_time.csv's rows do.
func opStatDevices(r *model.Rank, p string) {
	devs := map[string]bool{}
	for _, s := range r.OpStats {
		if s.Device != "" {
			devs[s.Device] = true
		}
	}
	if len(devs) < 2 || r.Have.Timeline || r.Have.KernelDetails {
		return
	}
	var nums []int
	for d := range devs {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n >= 1<<15 {
			r.Warn(p, "holds the rows of %d devices (Device_id %s), not each a device id: npuprof reads them as one rank, so its compute totals add the devices together", len(devs), strings.Join(slices.Sorted(maps.Keys(devs)), ", "))
			return
		}
		nums = append(nums, n)
	}
	for _, n := range nums {
		r.AddDevice(n)
	}
}

// readAnalysisDB takes StepTraceTime (want steps) and CommAnalyzerTime
// (want comm) from torch_npu's analysis.db.
func readAnalysisDB(r *model.Rank, p string, steps, comm bool) {
	tmp := model.NewRank(r.Path)
	if err := sqlitedb.ReadAnalysis(p, tmp); err != nil {
		r.Warn(p, "%v", err)
	}
	r.Warnings = append(r.Warnings, tmp.Warnings...)
	if steps && len(tmp.StepTrace) > 0 {
		r.StepTrace, r.Have.StepTraceFile = tmp.StepTrace, p
		deviceFromStepTrace(r, p)
	}
	if comm && len(tmp.Communication) > 0 {
		r.Communication, r.Have.CommFile = tmp.Communication, p
	}
}

// deviceFromProf sets r.Device from the device_{id} folder of a raw
// PROF_* folder inside the rank folder (torch_npu keeps it there), when
// there is exactly one device.
func deviceFromProf(r *model.Rank, root string, name string) {
	if r.Device >= 0 || !strings.HasPrefix(name, "PROF_") {
		return
	}
	prof := filepath.Join(root, name)
	if devs := msprof.Devices(prof); len(devs) == 1 {
		r.Device, r.Have.DeviceFile = devs[0], filepath.Join(prof, fmt.Sprintf("device_%d", devs[0]))
	}
}
