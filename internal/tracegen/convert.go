package tracegen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Layouts written by turning the torch_npu text layout into another one
// (the same device work, so the same ground truth where the files give it).
const (
	// LayoutMindSporeText is MindSpore 2.3+'s output: {worker}_ascend_ms
	// folders with torch_npu's ASCEND_PROFILER_OUTPUT files, the framework
	// process named "MindSpore", mindspore_to_npu flows, kernel_details.csv
	// with a leading Device_id and "Step ID", and the MoE routing Cumsum
	// under its graph-mode name (Default/network/model/moe/CumSum-op17).
	LayoutMindSporeText Layout = "mindspore_text"
	// LayoutTorchNPUChrome is torch.profiler's Kineto Chrome trace with
	// torch_npu, one {worker}.{time_ns}.pt.trace.json per rank, as
	// tensorboard_trace_handler writes them into one folder: an object with
	// baseTimeNanoseconds, distributedInfo and traceEvents; the device as
	// the process "NPU" (pid = device id, threads "NPU stream {id}") with
	// cat "kernel" slices typed KERNEL_* and the collectives as kernels
	// named hcom_*; ts numbers of µs relative to baseTimeNanoseconds. It
	// has no EVENT_WAIT / EVENT_RECORD tasks, HCCL plane tasks, Overlap
	// Analysis, CANN API or op -> kernel flows.
	LayoutTorchNPUChrome Layout = "torch_npu_chrome"
	// LayoutSummariesHalf is torch_npu's text export in which every odd
	// rank is summaries-only: no trace_view.json and no kernel_details.csv
	// (too big to copy off the cluster), only step_trace_time.csv,
	// communication.json and the metadata.
	LayoutSummariesHalf Layout = "torch_npu_text_half_summaries"
)

// MoreLayouts lists the layouts written by conversion.
func MoreLayouts() []Layout {
	return []Layout{LayoutMindSporeText, LayoutTorchNPUChrome, LayoutSummariesHalf}
}

// generateConverted writes the torch_npu text capture and converts it.
func generateConverted(dir string, s Scenario, lay Layout) (*Truth, error) {
	t, err := GenerateLayout(dir, s, LayoutTorchNPUText)
	if err != nil {
		return nil, err
	}
	if err := convertLayout(dir, s, lay, t); err != nil {
		return nil, err
	}
	return t, writeTruth(dir, t)
}

// convertLayout turns the torch_npu text capture in dir into lay, and
// updates the truth's rank folder names.
func convertLayout(dir string, s Scenario, lay Layout, t *Truth) error {
	for i := range t.Ranks {
		rt := &t.Ranks[i]
		var err error
		switch lay {
		case LayoutMindSporeText:
			err = toMindSpore(dir, rt)
		case LayoutTorchNPUChrome:
			err = toChrome(dir, s, rt)
		case LayoutSummariesHalf:
			if rt.Rank%2 == 1 {
				out := filepath.Join(dir, rt.Dir, OutputDir)
				for _, f := range []string{"trace_view.json", "kernel_details.csv"} {
					if err = os.Remove(filepath.Join(out, f)); err != nil {
						break
					}
				}
			}
		default:
			err = fmt.Errorf("tracegen: %s is not a converted layout", lay)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// toMindSpore renames a rank folder to *_ascend_ms and rewrites its trace
// and kernel_details.csv with MindSpore's names.
func toMindSpore(dir string, rt *RankTruth) error {
	old := filepath.Join(dir, rt.Dir)
	device := -1
	for _, f := range []string{"trace_view.json", "kernel_details.csv"} {
		p := filepath.Join(old, OutputDir, f)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(`"name": "Python"`), []byte(`"name": "MindSpore"`))
		b = bytes.ReplaceAll(b, []byte(`"torch_to_npu"`), []byte(`"mindspore_to_npu"`))
		b = bytes.ReplaceAll(b, []byte("aclnnCumsum_CumsumAiCpu_Cumsum"), []byte("Default/network/model/moe/CumSum-op17"))
		if f == "trace_view.json" {
			device = labelDevice(b)
		} else {
			b = msKernelDetails(b, device)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	ms := strings.TrimSuffix(rt.Dir, "_ascend_pt") + "_ascend_ms"
	if err := os.Rename(old, filepath.Join(dir, ms)); err != nil {
		return err
	}
	rt.Dir = ms
	return nil
}

// reHardwarePid finds the pid of a trace's Ascend Hardware process.
var reHardwarePid = regexp.MustCompile(`"pid": (\d+), "tid": \d+, "args": \{"name": "Ascend Hardware"\}`)

// labelDevice is the device of a generated trace: its "NPU {id}" process
// label, else the low 5 bits of the packed Ascend Hardware pid.
func labelDevice(trace []byte) int {
	if i := bytes.Index(trace, []byte(`"labels": "NPU `)); i >= 0 {
		rest := trace[i+len(`"labels": "NPU `):]
		if d, err := strconv.Atoi(string(rest[:max(bytes.IndexByte(rest, '"'), 0)])); err == nil {
			return d
		}
	}
	if m := reHardwarePid.FindSubmatch(trace); m != nil {
		if pid, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil {
			return int(pid & 31)
		}
	}
	return -1
}

// msKernelDetails gives kernel_details.csv MindSpore's leading Device_id
// and its "Step ID" spelling.
func msKernelDetails(b []byte, device int) []byte {
	if device < 0 {
		device = 0
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	var out bytes.Buffer
	for k, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			out.Write(l)
			continue
		}
		if k == 0 {
			out.WriteString("Device_id,")
			out.Write(bytes.Replace(l, []byte("Step Id"), []byte("Step ID"), 1))
			continue
		}
		fmt.Fprintf(&out, "%d,", device)
		out.Write(l)
	}
	return out.Bytes()
}

// chromeProc is what the conversion knows of one trace_view process.
type chromeProc struct {
	name   string
	device int
}

// toChrome writes a rank's trace as a Kineto Chrome trace beside the rank
// folders, and removes the folder.
func toChrome(dir string, s Scenario, rt *RankTruth) error {
	src := filepath.Join(dir, rt.Dir, OutputDir, "trace_view.json")
	procs, threads, first, err := chromeScan(src)
	if err != nil {
		return err
	}
	// Kineto's base: the capture's start rounded down to the second
	base := first / 1e9 * 1e9
	worker := rt.Dir
	if i := strings.LastIndexByte(worker, '_'); i > 0 {
		worker = worker[:i] // drop the timestamp and _ascend_pt
		if j := strings.LastIndexByte(worker, '_'); j > 0 {
			worker = worker[:j]
		}
	}
	name := fmt.Sprintf("%s.%d.pt.trace.json", worker, first+int64(s.Steps+1)*1e9)
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	cw := &chromeWriter{w: w, base: base, procs: procs, threads: threads, streams: map[int64]bool{}}
	fmt.Fprintf(w, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n  \"distributedInfo\": {\"backend\": \"hccl\", \"rank\": %d, \"world_size\": %d},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %d,\n  \"traceEvents\": [\n", rt.Rank, s.Ranks, base)
	err = eachEvent(src, cw.event)
	if err == nil {
		cw.meta()
		fmt.Fprintf(w, "\n  ],\n  \"traceName\": %q\n}\n", name)
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	old := rt.Dir
	rt.Dir = name
	return os.RemoveAll(filepath.Join(dir, old))
}

// tvEvent is one trace_view.json event, numbers kept as their text.
type tvEvent struct {
	Ph   string                     `json:"ph"`
	Name string                     `json:"name"`
	Cat  string                     `json:"cat"`
	Pid  json.Number                `json:"pid"`
	Tid  json.Number                `json:"tid"`
	Ts   json.RawMessage            `json:"ts"`
	Dur  json.Number                `json:"dur"`
	Args map[string]json.RawMessage `json:"args"`
}

// eachEvent streams the events of a trace_view.json array to fn.
func eachEvent(path string, fn func(*tvEvent) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		var ev tvEvent
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		if err := fn(&ev); err != nil {
			return err
		}
	}
	return nil
}

// chromeScan reads the process and thread names and the first slice's
// start of a trace.
func chromeScan(path string) (map[string]*chromeProc, map[[2]string]string, int64, error) {
	procs := map[string]*chromeProc{}
	threads := map[[2]string]string{}
	first := int64(-1)
	err := eachEvent(path, func(ev *tvEvent) error {
		switch {
		case ev.Ph == "M" && ev.Name == "process_name":
			p := procOf(procs, ev.Pid.String())
			p.name = argString(ev.Args["name"])
		case ev.Ph == "M" && ev.Name == "process_labels":
			l := argString(ev.Args["labels"])
			if d, err := strconv.Atoi(strings.TrimPrefix(l, "NPU ")); err == nil && strings.HasPrefix(l, "NPU ") {
				procOf(procs, ev.Pid.String()).device = d
			}
		case ev.Ph == "M" && ev.Name == "thread_name":
			threads[[2]string{ev.Pid.String(), ev.Tid.String()}] = argString(ev.Args["name"])
		case ev.Ph == "X":
			if ts, ok := nsOf(rawTsText(ev.Ts)); ok && (first < 0 || ts < first) {
				first = ts
			}
		}
		return nil
	})
	for pid, p := range procs {
		if n, err := strconv.ParseInt(pid, 10, 64); err == nil && p.device < 0 && p.name == "Ascend Hardware" {
			p.device = int(n & 31) // the packed pid's device
		}
	}
	return procs, threads, first, err
}

func procOf(m map[string]*chromeProc, pid string) *chromeProc {
	p := m[pid]
	if p == nil {
		p = &chromeProc{device: -1}
		m[pid] = p
	}
	return p
}

func argString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.Trim(string(raw), `"`)
}

func rawTsText(raw json.RawMessage) string { return strings.Trim(string(raw), `"`) }

// nsOf parses decimal µs text into int64 ns exactly.
func nsOf(us string) (int64, bool) {
	whole, frac, _ := strings.Cut(us, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, false
	}
	frac = (frac + "000")[:3]
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, false
	}
	return w*1000 + f, true
}

// chromeWriter writes the Kineto events of one rank.
type chromeWriter struct {
	w       *bufio.Writer
	base    int64
	n       int
	procs   map[string]*chromeProc
	threads map[[2]string]string
	device  int
	host    string
	streams map[int64]bool
}

// kinetoTypes maps trace_view task types to the kernel types a Kineto
// trace names (the real one: KERNEL_AICORE, KERNEL_AIVEC, KERNEL_MIX_AIV).
var kinetoTypes = map[string]string{
	"AI_CORE": "KERNEL_AICORE", "AI_VECTOR_CORE": "KERNEL_AIVEC", "MIX_AIV": "KERNEL_MIX_AIV",
	"MIX_AIC": "KERNEL_MIX_AIC", "AI_CPU": "KERNEL_AICPU",
}

func (c *chromeWriter) sep() {
	if c.n > 0 {
		c.w.WriteString(",\n")
	}
	c.n++
}

// us writes ns as Kineto's µs number with 3 decimals, relative to base.
func (c *chromeWriter) us(ns int64) string {
	return fmt.Sprintf("%d.%03d", ns/1000, ns%1000)
}

// event converts one trace_view event (metadata is written at the end).
func (c *chromeWriter) event(ev *tvEvent) error {
	if ev.Ph != "X" {
		return nil
	}
	p := c.procs[ev.Pid.String()]
	if p == nil {
		return nil
	}
	ts, ok := nsOf(rawTsText(ev.Ts))
	dur, ok2 := nsOf(ev.Dur.String())
	if !ok || !ok2 {
		return fmt.Errorf("tracegen: bad ts or dur in %v", ev)
	}
	rel := ts - c.base
	switch p.name {
	case "Python":
		c.host = ev.Pid.String()
		cat := ev.Cat
		if strings.HasPrefix(ev.Name, "ProfilerStep#") {
			cat = "user_annotation"
		} else if cat != "cpu_op" {
			return nil
		}
		c.sep()
		fmt.Fprintf(c.w, `  {"ph": "X", "cat": %q, "name": %q, "pid": %s, "tid": %s, "ts": %s, "dur": %s, "args": {"External id": %d}}`,
			cat, ev.Name, ev.Pid, ev.Tid, c.us(rel), c.us(dur), c.n)
	case "Ascend Hardware":
		c.device = p.device
		tt := argString(ev.Args["Task Type"])
		stream, _ := strconv.ParseInt(strings.Trim(string(ev.Args["Physic Stream Id"]), `"`), 10, 64)
		cls := model.ClassifyTask(tt, ev.Name)
		cat, typ := "kernel", kinetoTypes[tt]
		switch {
		case cls == model.ClassMemcpy:
			cat, typ = "gpu_memcpy", ""
		case cls != model.ClassCompute && cls != model.ClassCommKernel:
			return nil // syncs, placeholders, HCCL subtasks: not in Kineto
		}
		c.kernel(cat, ev.Name, stream, rel, dur, typ)
	case "HCCL", "Communication":
		if !strings.HasPrefix(c.threads[[2]string{ev.Pid.String(), ev.Tid.String()}], "Group") {
			return nil // plane tasks
		}
		tid, _ := strconv.ParseInt(ev.Tid.String(), 10, 64)
		c.kernel("kernel", ev.Name, 100+tid, rel, dur, "")
	}
	return nil
}

// kernel writes one device slice on the NPU process.
func (c *chromeWriter) kernel(cat, name string, stream, rel, dur int64, typ string) {
	c.streams[stream] = true
	c.sep()
	fmt.Fprintf(c.w, `  {"ph": "X", "cat": %q, "name": %q, "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": {"streamId": %d`,
		cat, name, max(c.device, 0), stream, c.us(rel), c.us(dur), stream)
	if typ != "" {
		fmt.Fprintf(c.w, `, "type": %q`, typ)
	}
	c.w.WriteString("}}")
}

// meta writes the process and thread names, after the slices (Kineto
// writes them first; a reader must not depend on it).
func (c *chromeWriter) meta() {
	m := func(name, pid, tid, args string) {
		c.sep()
		fmt.Fprintf(c.w, `  {"ph": "M", "name": %q, "ts": 0, "pid": %s, "tid": %s, "args": {%s}}`, name, pid, tid, args)
	}
	dev := strconv.Itoa(max(c.device, 0))
	m("process_name", dev, "0", `"name": "NPU"`)
	m("process_labels", dev, "0", `"labels": "Ascend NPU"`)
	for _, s := range slices.Sorted(maps.Keys(c.streams)) {
		m("thread_name", dev, strconv.FormatInt(s, 10), fmt.Sprintf(`"name": "NPU stream %d"`, s))
	}
	if c.host != "" {
		m("process_name", c.host, "0", `"name": "python3"`)
		m("process_labels", c.host, "0", `"labels": "CPU"`)
	}
}
