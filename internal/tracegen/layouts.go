package tracegen

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Layout is the on-disk form a scenario is written in. The same scenario
// (seed included) gives the same device work, and so the same ground
// truth, in every layout.
type Layout string

// Layouts tracegen writes (the values are npuprof's input format names).
const (
	// LayoutTorchNPUText is torch_npu's text export: *_ascend_pt folders with
	// ASCEND_PROFILER_OUTPUT/trace_view.json, kernel_details.csv, ...
	LayoutTorchNPUText Layout = "torch_npu_text"
	// LayoutMsprofText is msprof's text export, one folder per rank:
	//
	//	PROF_{n}_{YYYYmmddHHMMSSfff}_{16 letters}/
	//	    device_{d}/info.json.{d}          {"rank_id": r, ...}
	//	    host/info.json
	//	    mindstudio_profiler_output/
	//	        msprof_{ts}.json              (or msprof_slice_{k}_{ts}.json, Scenario.MsprofSlice)
	//	        op_summary_{ts}.csv           new header (Device_id, Op Name, OP Type, Task Type, ...)
	//	        task_time_{ts}.csv            every device task, EVENT_WAIT included
	//	        communication_statistic_{ts}.csv
	//	        api_statistic_{ts}.csv
	//	    analyze/communication.json        msprof's raw shape ({op@hash: ...})
	//
	// The timeline has no framework (Python) events and no flows, and the
	// collectives' process is named "Communication" (new versions).
	LayoutMsprofText Layout = "msprof_text"
	// LayoutTorchNPUDB is torch_npu's db export: *_ascend_pt folders with
	// profiler_info_{r}.json and ASCEND_PROFILER_OUTPUT/
	// ascend_pytorch_profiler_{r}.db (the pristine schema of the real
	// sample's rank1 DB) and analysis.db (StepTraceTime).
	LayoutTorchNPUDB Layout = "torch_npu_db"
)

// Layouts lists every layout.
func Layouts() []Layout { return []Layout{LayoutTorchNPUText, LayoutMsprofText, LayoutTorchNPUDB} }

// ParseLayout returns the layout with the given name.
func ParseLayout(name string) (Layout, error) {
	all := append(Layouts(), MoreLayouts()...)
	for _, l := range all {
		if string(l) == name {
			return l, nil
		}
	}
	names := make([]string, len(all))
	for i, l := range all {
		names[i] = string(l)
	}
	return "", fmt.Errorf("tracegen: unknown layout %q (want one of %s)", name, strings.Join(names, ", "))
}

// opSummaryHeader is the new-version op_summary header (docs/formats.md#kernel-details-and-op-summary-columns): the
// kernel_details header with op_summary's column names and Device_id.
var opSummaryHeader = "Device_id," + strings.NewReplacer(
	",Name,", ",Op Name,", ",Type,", ",OP Type,", ",Accelerator Core,", ",Task Type,",
	",Start Time(us),", ",Task Start Time(us),", ",Duration(us),", ",Task Duration(us),",
	",Wait Time(us),", ",Task Wait Time(us),", ",Block Dim,", ",Block Num,", ",Mix Block Dim,", ",Mix Block Num,",
).Replace(kernelDetailsHeader)

const taskTimeHeader = "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)"

// statAcc accumulates one row of a statistics CSV.
type statAcc struct {
	level           string
	count           int
	total, min, max int64
}

func (a *statAcc) add(d int64) {
	if a.count == 0 || d < a.min {
		a.min = d
	}
	if d > a.max {
		a.max = d
	}
	a.count++
	a.total += d
}

// addStats folds one step into communication_statistic and api_statistic.
func (o *rankOut) addStats(st *rankStep) {
	if o.commStat == nil {
		return
	}
	get := func(m map[string]*statAcc, k, level string) *statAcc {
		a := m[k]
		if a == nil {
			a = &statAcc{level: level}
			m[k] = a
		}
		return a
	}
	for i := range st.tasks {
		if t := &st.tasks[i]; t.kind == tkHCCL {
			get(o.commStat, t.c.opType, "").add(t.dur)
		}
	}
	if st.syncDur > 0 {
		get(o.apiStat, "aclrtSynchronizeStream", "acl").add(st.syncDur)
	}
}

// writeTaskTime writes one task_time row (every Ascend Hardware task; HCCL
// big ops are not device tasks). Ops have a kernel_name, other tasks N/A.
func (o *rankOut) writeTaskTime(t *devTask) {
	if t.kind == tkHCCL {
		return
	}
	name, typ := "N/A", t.taskType
	switch t.kind {
	case tkKernel:
		name, typ = binaryKernelName(t.k.opType, t.k.name), t.k.taskType
	case tkAivComm:
		name = t.name
	case tkPlaceholder:
		name = t.name
	}
	b := o.kb[:0]
	b = strconv.AppendInt(b, int64(o.info.device), 10)
	b = append(b, ',')
	b = appendCSVCell(b, name)
	b = append(b, ',')
	b = appendCSVCell(b, typ)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(t.stream), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(t.taskID), 10)
	b = append(b, ',')
	b = appendUs(b, t.dur)
	b = append(b, ',')
	b = appendTS(b, t.start)
	b = append(b, "\t,"...)
	b = appendTS(b, t.start+t.dur)
	b = append(b, "\t\n"...)
	o.tt.Write(b)
	o.kb = b
}

// binaryKernelName is the name task_time gives a kernel: its op type and the
// hash of the kernel binary (GroupedMatmul_0d2d43751f81d7f29646a862147967c9
// in a real msprof run), not op_summary's Op Name.
func binaryKernelName(opType, name string) string {
	sum := md5.Sum([]byte(name))
	return opType + "_" + hex.EncodeToString(sum[:])
}

// profilingDisableGap is how long after the last device task msprof's
// PROFILING_DISABLE bookkeeping task runs in task_time (898 ms in a real
// single-device msprof run).
const profilingDisableGap = 898_000_000

// writeProfilingDisable writes the PROFILING_DISABLE row that closes a
// real task_time_*.csv, far after the last kernel.
func (o *rankOut) writeProfilingDisable() {
	o.writeTaskTime(&devTask{kind: tkPlaceholder, name: "PROFILING_DISABLE", taskType: "PLACE_HOLDER_SQE",
		stream: streamPlaceholder, start: o.lastEnd + profilingDisableGap, dur: 20, taskID: 1})
}

// writeStats writes the communication_statistic and api_statistic CSVs.
func writeStats(out, ts string, o *rankOut) error {
	write := func(name, header string, m map[string]*statAcc, api bool) error {
		keys := make([]string, 0, len(m))
		var all int64
		for k, a := range m {
			keys = append(keys, k)
			all += a.total
		}
		sort.Slice(keys, func(i, j int) bool {
			if m[keys[i]].total != m[keys[j]].total {
				return m[keys[i]].total > m[keys[j]].total
			}
			return keys[i] < keys[j]
		})
		var b strings.Builder
		b.WriteString(header + "\n")
		for _, k := range keys {
			a := m[k]
			avg := a.total / int64(a.count)
			if api {
				fmt.Fprintf(&b, "host,%s,%s,%s,%d,%s,%s,%s,0\n", a.level, k, usText(a.total), a.count, usText(avg), usText(a.min), usText(a.max))
			} else {
				ratio := 0.0
				if all > 0 {
					ratio = round4(100 * float64(a.total) / float64(all))
				}
				fmt.Fprintf(&b, "%d,%s,%d,%s,%s,%s,%s,%s\n", o.info.device, k, a.count, usText(a.total), usText(a.min), usText(avg), usText(a.max), pyFloat(ratio))
			}
		}
		return os.WriteFile(filepath.Join(out, name+"_"+ts+".csv"), []byte(b.String()), 0o644)
	}
	if err := write("communication_statistic", "Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)", o.commStat, false); err != nil {
		return err
	}
	return write("api_statistic", "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance", o.apiStat, true)
}

// profDir is the PROF_{n}_{YYYYmmddHHMMSSfff}_{16 letters} name of rank r.
func (j *job) profDir(r int) string {
	t := time.Unix(0, j.t0).UTC()
	stamp := t.Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/1_000_000)
	var letters [16]byte
	h := splitmix(uint64(j.s.Seed)*977 + uint64(r)*131)
	for i := range letters {
		letters[i] = byte('A' + h%26)
		h = splitmix(h)
	}
	return fmt.Sprintf("PROF_%06d_%s_%s", r+1, stamp, letters[:])
}

// msprofStamp is the {YYYYmmddHHMMSS} suffix of msprof's export files.
func (j *job) msprofStamp() string {
	return time.Unix(0, j.t0+90_000_000_000).UTC().Format("20060102150405")
}

// msprofFiles opens one rank's msprof text outputs.
type msprofFiles struct {
	files []*os.File
}

func (m *msprofFiles) create(p string) (*os.File, error) {
	f, err := os.Create(p)
	if err == nil {
		m.files = append(m.files, f)
	}
	return f, err
}

func (m *msprofFiles) close() error {
	var first error
	for _, f := range m.files {
		if err := f.Close(); err != nil && first == nil && !strings.Contains(err.Error(), "already closed") {
			first = err
		}
	}
	m.files = nil
	return first
}

// newMsprofOut prepares one rank's PROF_* folder and its writers.
func newMsprofOut(dir string, s Scenario, j *job, info *rankInfo) (*rankOut, *msprofFiles, error) {
	prof := filepath.Join(dir, info.dir)
	out := filepath.Join(prof, "mindstudio_profiler_output")
	for _, d := range []string{out, filepath.Join(prof, "analyze"), filepath.Join(prof, "host"), filepath.Join(prof, fmt.Sprintf("device_%d", info.device))} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, err
		}
	}
	ts := j.msprofStamp()
	mf := &msprofFiles{}
	traceName := func(k int) string {
		if s.MsprofSlice > 0 {
			return filepath.Join(out, fmt.Sprintf("msprof_slice_%d_%s.json", k, ts))
		}
		return filepath.Join(out, "msprof_"+ts+".json")
	}
	trace, err := mf.create(traceName(0))
	if err != nil {
		return nil, mf, err
	}
	kd, err := mf.create(filepath.Join(out, "op_summary_"+ts+".csv"))
	if err != nil {
		return nil, mf, err
	}
	if _, err := io.WriteString(kd, opSummaryHeader+"\n"); err != nil {
		return nil, mf, err
	}
	tt, err := mf.create(filepath.Join(out, "task_time_"+ts+".csv"))
	if err != nil {
		return nil, mf, err
	}
	if _, err := io.WriteString(tt, taskTimeHeader+"\n"); err != nil {
		return nil, mf, err
	}
	var cj io.Writer
	if s.CommJSON {
		f, err := mf.create(filepath.Join(prof, "analyze", "communication.steps.json"))
		if err != nil {
			return nil, mf, err
		}
		cj = f
	}
	o := newRankOut(s, info, trace, kd, cj)
	o.lay = LayoutMsprofText
	o.hcclProc = "Communication"
	o.tt = bufio.NewWriterSize(tt, 1<<18)
	o.commStat, o.apiStat = map[string]*statAcc{}, map[string]*statAcc{}
	if s.MsprofSlice > 0 {
		o.sliceEvery = s.MsprofSlice
		k := 0
		o.nextSlice = func() (io.Writer, error) {
			k++
			return mf.create(traceName(k))
		}
	}
	return o, mf, nil
}

// finishMsprof writes the small files of a PROF_* folder after the passes.
func finishMsprof(dir string, s Scenario, j *job, o *rankOut) error {
	prof := filepath.Join(dir, o.info.dir)
	out := filepath.Join(prof, "mindstudio_profiler_output")
	if err := writeStats(out, j.msprofStamp(), o); err != nil {
		return err
	}
	dev := o.info.device
	info := obj{{"jobInfo", "NA"}, {"devices", strconv.Itoa(dev)}, {"rank_id", o.info.rank},
		{"hostUid", "3538958389648580163"}, {"platform_version", "5"}, {"pid", strconv.FormatInt(o.info.pid, 10)},
		{"DeviceInfo", []obj{{{"id", dev}, {"ai_core_num", 24}, {"aic_frequency", "1850"}, {"hwts_frequency", "50"}}}}}
	if err := writeJSON(filepath.Join(prof, fmt.Sprintf("device_%d", dev), fmt.Sprintf("info.json.%d", dev)), info); err != nil {
		return err
	}
	hostInfo := obj{{"jobInfo", "NA"}, {"hostUid", "3538958389648580163"}, {"pid", strconv.FormatInt(o.info.pid, 10)}}
	if err := writeJSON(filepath.Join(prof, "host", "info.json"), hostInfo); err != nil {
		return err
	}
	if !s.CommJSON {
		return nil
	}
	// msprof's analyze/communication.json is keyed by op directly
	steps := filepath.Join(prof, "analyze", "communication.steps.json")
	data, err := os.ReadFile(steps)
	if err != nil {
		return err
	}
	var stepped map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &stepped); err != nil {
		return fmt.Errorf("tracegen: internal error: communication.json: %w", err)
	}
	flat := map[string]json.RawMessage{}
	for _, kinds := range stepped {
		for _, ops := range kinds {
			for k, v := range ops {
				if k != "Total Op Info" {
					flat[k] = v
				}
			}
		}
	}
	b, err := json.MarshalIndent(flat, "", "    ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(prof, "analyze", "communication.json"), b, 0o644); err != nil {
		return err
	}
	return os.Remove(steps)
}
