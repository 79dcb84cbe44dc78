package tracegen

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// kernelDetailsHeader is the mid-version Level1 header of kernel_details.csv
// without its leading "Step Id" column (docs/formats.md#kernel-details-and-op-summary-columns, S25).
const kernelDetailsHeader = "Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)"

// numPMU is the number of PipeUtilization PMU columns.
const numPMU = 25

// stepTraceHeader is the mid-version step_trace_time.csv header.
const stepTraceHeader = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing"

// writeKernelHeader writes the kernel_details.csv header line.
func writeKernelHeader(w io.Writer, steps bool) error {
	h := kernelDetailsHeader
	if steps {
		h = "Step Id," + h
	}
	_, err := io.WriteString(w, h+"\r\n")
	return err
}

// writeKernelRows writes the kernel_details rows of one step: every compute
// kernel and every HCCL big op, sorted by start. Wait Time is the gap to
// the end of the previous row of the device (not per stream).
func (o *rankOut) writeKernelRows(st *rankStep) {
	var idx []int
	for i := range st.tasks {
		if k := st.tasks[i].kind; k == tkKernel || k == tkHCCL {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return st.tasks[idx[a]].start < st.tasks[idx[b]].start })
	b := o.kb
	for _, i := range idx {
		t := &st.tasks[i]
		b = b[:0]
		if o.lay == LayoutMsprofText {
			b = strconv.AppendInt(b, int64(o.info.device), 10)
			b = append(b, ',')
		} else if o.s.ProfilerSteps {
			b = strconv.AppendInt(b, int64(st.step), 10)
			b = append(b, ',')
		}
		wait := int64(0)
		if o.kdN > 0 {
			wait = max(0, t.start-o.kdEnd)
		}
		if t.kind == tkHCCL {
			b = append(b, "4294967295,N/A,N/A,"...)
			b = append(b, o.info.opName(t)...)
			b = append(b, ',')
			b = append(b, t.c.opType...)
			if o.lay == LayoutMsprofText {
				b = append(b, ",N/A,COMMUNICATION,"...) // op_summary's Task Type for collectives
			} else {
				b = append(b, ",N/A,HCCL,"...)
			}
		} else {
			b = strconv.AppendUint(b, uint64(t.modelID), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(t.taskID), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(t.stream), 10)
			b = append(b, ',')
			b = append(b, t.k.name...)
			b = append(b, ',')
			b = append(b, t.k.opType...)
			b = append(b, ",dynamic,"...)
			b = append(b, t.k.taskType...)
			b = append(b, ',')
		}
		b = appendTS(b, t.start)
		b = append(b, "\t,"...)
		b = appendUs(b, t.dur)
		b = append(b, ',')
		if o.kdN == 0 {
			b = append(b, '0')
		} else {
			b = appendUs(b, wait)
		}
		if t.kind == tkHCCL {
			b = append(b, ",0"...)
			for i := 0; i < 9+numPMU; i++ {
				b = append(b, ",N/A"...)
			}
		} else {
			sh := o.shapeOf(t)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(t.k.block), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(t.k.mixBlock), 10)
			b = append(b, ",NO,"...)
			b = appendCSVCell(b, quoted(sh.inShapes))
			b = append(b, ',')
			b = appendCSVCell(b, sh.inTypes)
			b = append(b, ',')
			b = appendCSVCell(b, sh.inFormats)
			b = append(b, ',')
			b = appendCSVCell(b, quoted(sh.outShapes))
			b = append(b, ',')
			b = appendCSVCell(b, sh.outTypes)
			b = append(b, ',')
			b = appendCSVCell(b, sh.outFormats)
			b = append(b, ",N/A"...)
			b = appendPMU(b, t.k.taskType, t.dur)
		}
		b = append(b, "\r\n"...)
		o.kd.Write(b)
		o.kdN++
		o.kdEnd = t.start + t.dur
	}
	o.kb = b
}

// shapeOf returns (and caches) the shape cells of a kernel task.
func (o *rankOut) shapeOf(t *devTask) shapes {
	key := shapeKey{t.k.id, t.tokens, t.routed}
	if sh, ok := o.shapes[key]; ok {
		return sh
	}
	c := shapeCtx{t: t.full, routed: t.routed, experts: o.s.localExperts(), interm: o.s.expertInterm(), tokens: t.tokens}
	sh := t.k.shape(c)
	o.shapes[key] = sh
	return sh
}

// appendPMU appends the 25 PipeUtilization columns (leading comma each),
// derived from the duration: AI core columns for AI_CORE/MIX, vector
// columns for AIV/MIX, N/A for AI_CPU.
func appendPMU(b []byte, taskType string, dur int64) []byte {
	if taskType == "AI_CPU" {
		for i := 0; i < numPMU; i++ {
			b = append(b, ",N/A"...)
		}
		return b
	}
	cube := taskType == "AI_CORE" || strings.HasPrefix(taskType, "MIX")
	vec := taskType == "AI_VECTOR_CORE" || strings.HasPrefix(taskType, "MIX")
	if cube {
		b = appendUnitPMU(b, dur, 0.97, []float64{0.55, 0.21, 0.31, 0.82, 0.05}, ",0.002")
	} else {
		b = append(b, ",0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0"...)
	}
	if vec {
		b = appendUnitPMU(b, dur, 0.96, []float64{0.41, 0.24, 0.63, 0.33}, ",0.011")
	} else {
		b = append(b, ",0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0"...)
	}
	if cube {
		return append(b, ",55.31"...)
	}
	return append(b, ",0"...)
}

// appendUnitPMU appends one unit's PipeUtilization columns: its busy time
// (busy of dur) and cycles at 1800 MHz, then each pipe's time and ratio
// (pipe of dur, over busy), then tail.
func appendUnitPMU(b []byte, dur int64, busy float64, pipes []float64, tail string) []byte {
	part := func(f float64) int64 { return int64(float64(dur) * f) }
	t := part(busy)
	b = append(b, ',')
	b = appendUs(b, t)
	b = append(b, ',')
	b = strconv.AppendInt(b, t*1800/1000, 10)
	for _, f := range pipes {
		b = append(b, ',')
		b = appendUs(b, part(f))
		b = append(b, ',')
		b = append(b, pyFloat(round4(f/busy))...)
	}
	return append(b, tail...)
}

// writeStepTrace writes step_trace_time.csv: one row per ProfilerStep, or a
// single row with an empty Step cell over the whole capture (vLLM style).
func writeStepTrace(w io.Writer, s Scenario, acc *truthAcc) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(stepTraceHeader + "\r\n")
	rows := acc.rows
	if !s.ProfilerSteps {
		win := acc.win.end - acc.win.start
		rows = []stepRow{{compute: acc.computeNs, notOv: acc.notOvNs, comm: acc.commNs,
			free: win - acc.unionNs, stage: win}}
	}
	for _, r := range rows {
		cells := []string{r.step, usText(r.compute), usText(r.notOv), usText(r.comm - r.notOv), usText(r.comm),
			usText(r.free), usText(r.stage), "0", usText(r.notOv), usText(r.preparing)}
		bw.WriteString(strings.Join(cells, ",") + "\r\n")
	}
	return bw.Flush()
}

// ------------------------------------------------------ communication.json

// commTotals sums the time info of the ops of one communication.json block.
type commTotals struct {
	elapse, transit, wait, sync int64 // ns
	size                        int64 // bytes
}

// openComm starts a block ("step<N>" or "step").
func (o *rankOut) openComm(key string) {
	if o.cjSteps == 0 {
		o.cj.WriteString("{")
	} else {
		o.cj.WriteString(", ")
	}
	o.cj.WriteString(`"` + key + `": {"p2p": {}, "collective": {`)
	o.cjSteps++
	o.cjOps = 0
	o.cjTot = commTotals{}
}

// closeBlock writes "Total Op Info" and closes the open block.
func (o *rankOut) closeBlock() {
	t := o.cjTot
	if o.cjOps > 0 {
		o.cj.WriteString(", ")
	}
	o.cj.WriteString(`"Total Op Info": {"Communication Time Info": ` + timeInfo(-1, t) + `, "Communication Bandwidth Info": {`)
	for i, tr := range []string{"RDMA", "HCCS", "PCIE", "SDMA", "SIO"} {
		if i > 0 {
			o.cj.WriteString(", ")
		}
		tt, sz := "0", "0"
		if tr == "HCCS" || tr == "SDMA" {
			tt, sz = pyFloat(float64(t.transit)/1e6), pyFloat(float64(t.size)/1e6)
		}
		o.cj.WriteString(`"` + tr + `": {"Transit Time(ms)": ` + tt + `, "Transit Size(MB)": ` + sz + `, "Size Distribution": {}}`)
	}
	o.cj.WriteString("}}}}")
}

// closeComm closes communication.json.
func (o *rankOut) closeComm() {
	if o.cjSteps == 0 {
		o.openComm("step")
	}
	if !o.s.ProfilerSteps {
		o.closeBlock()
	}
	o.cj.WriteString("}")
}

// timeInfo renders "Communication Time Info"; start < 0 omits the start
// timestamp (Total Op Info).
func timeInfo(start int64, t commTotals) string {
	idle := max(0, t.elapse-t.transit-t.wait)
	ms := func(ns int64) string { return pyFloat(float64(ns) / 1e6) }
	ratio := func(a, b int64) string {
		if a+b == 0 {
			return "0"
		}
		return pyFloat(round4(float64(a) / float64(a+b)))
	}
	var sb strings.Builder
	sb.WriteString("{")
	if start >= 0 {
		sb.WriteString(`"Start Timestamp(us)": ` + strconv.FormatFloat(float64(start)/1000, 'f', -1, 64) + ", ")
	}
	sb.WriteString(`"Elapse Time(ms)": ` + ms(t.elapse) + `, "Transit Time(ms)": ` + ms(t.transit) +
		`, "Wait Time(ms)": ` + ms(t.wait) + `, "Synchronization Time(ms)": ` + ms(t.sync) +
		`, "Idle Time(ms)": ` + ms(idle) + `, "Wait Time Ratio": ` + ratio(t.wait, t.transit) +
		`, "Synchronization Time Ratio": ` + ratio(t.sync, t.transit) + "}")
	return sb.String()
}

// writeComm writes the communication.json entries of one step's ops.
func (o *rankOut) writeComm(st *rankStep) {
	if o.s.ProfilerSteps {
		o.openComm("step" + strconv.Itoa(st.step))
	} else if o.cjSteps == 0 {
		o.openComm("step")
	}
	// Per op: transit = SDMA subtasks, wait = Notify Wait subtasks,
	// sync = the first Notify Wait. AIV ops: 70 % transit.
	type opInfo struct {
		t    commTotals
		op   *devTask
		dist map[int64][2]int64
	}
	var ops []*opInfo
	byIdx := map[int]*opInfo{}
	for i := range st.tasks {
		t := &st.tasks[i]
		switch t.kind {
		case tkHCCL:
			oi := &opInfo{op: t, t: commTotals{elapse: t.dur}, dist: map[int64][2]int64{}}
			ops = append(ops, oi)
			byIdx[i] = oi
		case tkAivComm:
			oi := byIdx[t.parent]
			oi.t.transit = t.dur * 7 / 10
			oi.t.wait = t.dur - oi.t.transit
			oi.t.sync = oi.t.wait
			oi.t.size = int64(oi.op.count) * 2
			oi.dist[oi.t.size] = [2]int64{1, oi.t.transit}
		case tkSubtask:
			oi := byIdx[t.parent]
			switch t.name {
			case "SDMA":
				oi.t.transit += t.dur
				oi.t.size += t.size
				d := oi.dist[t.size]
				oi.dist[t.size] = [2]int64{d[0] + 1, d[1] + t.dur}
			case "Notify Wait":
				if oi.t.wait == 0 {
					oi.t.sync = t.dur
				}
				oi.t.wait += t.dur
			}
		}
	}
	sort.SliceStable(ops, func(a, b int) bool { return ops[a].op.start < ops[b].op.start })
	for _, oi := range ops {
		if o.cjOps > 0 {
			o.cj.WriteString(", ")
		}
		o.cjOps++
		g := o.info.coll[oi.op.c.group]
		o.cj.WriteString(`"` + o.info.opName(oi.op) + "@" + g.Hash + `": {"Communication Time Info": ` + timeInfo(oi.op.start, oi.t) +
			`, "Communication Bandwidth Info": {`)
		var sizes []int64
		for s := range oi.dist {
			sizes = append(sizes, s)
		}
		sort.Slice(sizes, func(a, b int) bool { return sizes[a] > sizes[b] })
		for i, tr := range []string{"RDMA", "HCCS", "PCIE", "SDMA", "SIO"} {
			if i > 0 {
				o.cj.WriteString(", ")
			}
			if (tr != "HCCS" && tr != "SDMA") || oi.t.transit == 0 {
				o.cj.WriteString(`"` + tr + `": {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0, "Large Packet Ratio": 0, "Size Distribution": {}}`)
				continue
			}
			mb := float64(oi.t.size) / 1e6
			msT := float64(oi.t.transit) / 1e6
			o.cj.WriteString(`"` + tr + `": {"Transit Size(MB)": ` + pyFloat(mb) + `, "Transit Time(ms)": ` + pyFloat(msT) +
				`, "Bandwidth(GB/s)": ` + pyFloat(round4(mb/msT)) + `, "Large Packet Ratio": `)
			if tr == "SDMA" {
				o.cj.WriteString(`0, "Size Distribution": {}}`)
				continue
			}
			o.cj.WriteString(`0.0, "Size Distribution": {`)
			for j, s := range sizes {
				if j > 0 {
					o.cj.WriteString(", ")
				}
				d := oi.dist[s]
				o.cj.WriteString(`"` + pyFloat(float64(s)/1e6) + `": [` + strconv.FormatInt(d[0], 10) + ", " + pyFloat(float64(d[1])/1e6) + "]")
			}
			o.cj.WriteString("}}")
		}
		o.cj.WriteString("}}")
		o.cjTot.elapse += oi.t.elapse
		o.cjTot.transit += oi.t.transit
		o.cjTot.wait += oi.t.wait
		o.cjTot.sync += oi.t.sync
		o.cjTot.size += oi.t.size
	}
	if o.s.ProfilerSteps {
		o.closeBlock()
	}
}
