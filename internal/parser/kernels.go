package parser

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/summary"
)

// readKernels joins kernel_details rows onto the timeline (op type, core,
// shapes) or, with no timeline, builds compute tasks and HCCL ops from them.
func readKernels(r *model.Rank, path string) {
	var devs rowDevices
	readKernelsOnto(r, path, false, &devs)
	kernelDevices(r, path, &devs)
}

// readKernelsOnto is readKernels; byStream joins the rows onto the tasks of
// task_time_*.csv, whose kernel names are the binaries' hashed names
// (GroupedMatmul_0d2d4375...): a row matches the task with its stream and
// start and gives it the row's Op Name, OP Type and shapes. Without a
// timeline each task and collective carries its row's Device_id, and devs
// collects the devices of the rows (of every file of the rank: msprof's
// slices); kernelDevices then splits the rank or drops the devices.
func readKernelsOnto(r *model.Rank, path string, byStream bool, devs *rowDevices) {
	haveTimeline := r.Have.Timeline
	// collectives come from the rows unless the timeline already holds
	// them (trace_view / msprof json; task_time has no big ops); after
	// one file's rows gave them, from the next file's too (msprof's
	// op_summary slices)
	hcclFromRows := !r.Have.HCCL || r.Have.HCCLFile != ""
	var j *kernelJoin
	if haveTimeline {
		j = newKernelJoin(r)
		if byStream {
			j.indexByStream()
		}
	}
	rows := 0
	// without a timeline, the rows' Step Id bounds the steps (of each
	// device), and their Device_id says the device of each kernel
	var steps map[deviceStep][2]int64
	devs.last = -2
	var issues summary.RowIssues
	// collectives whose name does not start with their OP Type (a
	// damaged name: the name says the collective's kind)
	misnamed, firstMisnamed := 0, 0
	err := withFile(r, path, func(f io.Reader) error {
		var err error
		issues, err = summary.ReadKernelDetails(f, path, func(k *summary.KernelRow) {
			rows++
			if !haveTimeline {
				if k.Device != devs.last {
					devs.note(k.Device)
				}
				if k.StepID >= 0 {
					if steps == nil {
						steps = map[deviceStep][2]int64{}
					}
					key := deviceStep{k.Device, k.StepID}
					b, ok := steps[key]
					if !ok || k.Start < b[0] {
						b[0] = k.Start
					}
					if !ok || k.Start+k.Dur > b[1] {
						b[1] = k.Start + k.Dur
					}
					steps[key] = b
				}
			}
			if hcclFromRows && k.IsCollective() {
				if strings.HasPrefix(k.Type, "hcom_") && !strings.HasPrefix(k.Name, k.Type) {
					if misnamed == 0 {
						firstMisnamed = k.Line
					}
					misnamed++
				}
				h := hcclFromRow(r, k.Start, k.Dur, k.Name)
				if !haveTimeline {
					h.Device = int16(max(k.Device, 0))
				}
				r.HCCL = append(r.HCCL, h)
				return
			}
			if haveTimeline && byStream {
				j.rowByStream(k)
				return
			}
			if haveTimeline {
				j.row(k.Start, k.NameID, k.Name, k.TypeID, k.Type, k.ShapesID, k.InputShapes)
				return
			}
			if k.IsCollective() {
				return
			}
			opType := k.Type
			if opType == "" {
				opType = model.OpTypeFromName(k.Name)
			}
			r.Tasks = append(r.Tasks, r.NewTask(k.Start, k.Dur, model.TaskExtra{Name: r.Intern(k.Name),
				Stream: k.Stream, Class: model.ClassifyTask(k.Core, k.Name),
				OpType: r.Intern(opType), TaskType: r.Intern(k.Core),
				InputShapes: r.Intern(k.InputShapes), ModelID: 4294967295,
				Device: int16(max(k.Device, 0))}))
		})
		r.Warnings = append(r.Warnings, issues.Warnings(path)...)
		return err
	})
	if err == nil && rows == 0 {
		// a header and no row (or none that could be used): nothing was
		// measured from it, not zero kernels
		err = noRows(path, issues)
	}
	kernelsRead(r, path, rows, err, hcclFromRows)
	if len(r.Steps) == 0 && len(steps) > 0 {
		// the profiler's steps: each from its first row's start to its
		// last row's end (device bounds; a timeline's ProfilerStep#N is
		// the host's), over every device, and each device's own
		// (DevicePart.Steps, dropped by kernelDevices unless the rank
		// splits into one per device)
		all := map[int][2]int64{}
		for k, b := range steps {
			if k.device >= 0 {
				p := r.Part(k.device)
				p.Steps = append(p.Steps, model.Step{ID: k.step, Start: b[0], End: b[1]})
			}
			a, ok := all[k.step]
			if !ok || b[0] < a[0] {
				a[0] = b[0]
			}
			if !ok || b[1] > a[1] {
				a[1] = b[1]
			}
			all[k.step] = a
		}
		for id, b := range all {
			r.Steps = append(r.Steps, model.Step{ID: id, Start: b[0], End: b[1]})
		}
		byStart := func(a, b model.Step) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.ID, b.ID)) }
		slices.SortFunc(r.Steps, byStart)
		for i := range r.PerDevice {
			slices.SortFunc(r.PerDevice[i].Steps, byStart)
		}
	}
	if err == nil && rows > 0 && issues.Partial() {
		// rows skipped, or the file cut inside its last line: what is
		// computed from it is partial, as from a cut trace
		r.Have.KernelPartial = true
		if !r.Have.Timeline {
			r.Partial = true
			if r.PartialReason == "" {
				r.PartialReason = issues.PartialReason(path, rows)
			}
		}
	}
	if misnamed > 0 {
		r.Warn(path, "%d collective row(s) have a Name that does not start with their OP Type (first at line %d; damaged names?): their kind is read from the Name", misnamed, firstMisnamed)
	}
	if byStream && j != nil && j.unmatched() > 0 {
		r.Warn(path, "%d compute task(s) of task_time_*.csv match no row (stream and start) here: they keep task_time's kernel names and op types", j.unmatched())
	}
}

// deviceStep keys a step of kernel_details.csv's Step Id by the device of
// its rows (-1: no Device_id).
type deviceStep struct{ device, step int }

// rowDevices collects the Device_id values of a kernel_details.csv's (or
// op_summary's) rows: the distinct device ids, ascending, and the number
// of rows without one. last is the latest value noted (rows of one device
// come in runs: a run costs one compare a row).
type rowDevices struct {
	ids  []int
	none int
	last int
}

// note records the Device_id d of a row (-1: none) that differs from the
// previous row's.
func (ds *rowDevices) note(d int) {
	ds.last = d
	if d < 0 {
		ds.none++
		return
	}
	if i, found := slices.BinarySearch(ds.ids, d); !found {
		ds.ids = slices.Insert(ds.ids, i, d)
	}
}

// kernelDevices splits a rank without a timeline whose kernel rows (of
// path, and its slices) name several devices (devs) into one rank per
// device (model.Rank.Devices). When the rows name one device, or some
// name none, the tasks and collectives carry no device and the rank keeps
// the steps of every device; a warning says why rows of several devices
// are one rank.
func kernelDevices(r *model.Rank, path string, devs *rowDevices) {
	if r.Have.Timeline {
		return
	}
	if len(devs.ids) > 1 && devs.none == 0 {
		for _, d := range devs.ids {
			r.AddDevice(d)
		}
		return
	}
	if len(devs.ids) > 1 {
		list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(devs.ids)), ", "), "[]")
		r.Warn(path, "holds the rows of %d devices (Device_id %s), but %d row(s) name no device: npuprof cannot split the rows by device and reads them as one rank, so its totals add the devices together; analyze each device's capture apart", len(devs.ids), list, devs.none)
	}
	for i := range r.PerDevice {
		r.PerDevice[i].Steps = nil
	}
	if len(devs.ids) == 0 || devs.ids[len(devs.ids)-1] == 0 {
		return
	}
	r.ClearTaskDevices()
	for i := range r.HCCL {
		r.HCCL[i].Device = 0
	}
}

// noRows says why a kernel_details.csv read without error gave no row.
func noRows(path string, issues summary.RowIssues) error {
	if issues.Skipped > 0 {
		return fmt.Errorf("%s: every row was skipped as malformed (%d): no kernel or collective was measured from it", path, issues.Skipped)
	}
	return fmt.Errorf("%s holds only its header: no kernel or collective row, so none was measured from it", path)
}

// hcclFromRow is the collective of a kernel_details row.
func hcclFromRow(r *model.Rank, start, dur int64, name string) model.HCCLOp {
	return model.HCCLOp{Start: start, Dur: dur, Name: r.Intern(name),
		Type: r.Intern(model.HCCLTypeFromName(name)), HashSuffix: r.Intern(model.HCCLHashSuffix(name)), Variant: r.Intern(model.HCCLVariant(name))}
}

// kernelsRead records what reading kernel_details.csv gave: rows is how
// many were used, err how the read ended.
func kernelsRead(r *model.Rank, path string, rows int, err error, hcclFromRows bool) {
	if err != nil && rows == 0 {
		// empty, unreadable or an unknown header: nothing was measured
		// from it, so nothing may be reported as measured
		r.Have.KernelNote = err.Error()
		return
	}
	if err != nil {
		// read stopped part-way (an over-long line, an I/O error)
		r.Have.KernelPartial = true
		r.Partial = true
		if r.PartialReason == "" {
			r.PartialReason = fmt.Sprintf("%s was read only up to a problem (%v); the %d rows before it were used", path, err, rows)
		}
	}
	r.Have.KernelDetails = true
	r.Have.KernelFile = path
	if hcclFromRows {
		r.Have.HCCL = true
		if r.Have.HCCLFile == "" {
			r.Have.HCCLFile = path
		}
	}
}

// kernelJoin gives every compute task with a row's (start, name) the
// row's op type and shapes (duplicated events, dropped later by finish,
// must stay identical). Strings come with the reader's numbers
// (summary.KernelRow.NameID...), so a name is looked up in the rank's
// table once, not once per row, and an op type or shapes string is
// interned once, when a task first takes it (the order the rank's symbols
// are numbered in is the order of the rows).
type kernelJoin struct {
	r  *model.Rank
	ti *taskIndex
	// names: by number, 0 until looked up, 1 when the timeline never
	// interned the name (it matches no task), else 2 + its symbol
	names []uint32
	// names2: by number, the symbol of a row's name once interned
	// (rowByStream)
	names2 []model.Sym
	// types, shapes: by number, the symbol once interned (0 before)
	types, shapes []model.Sym
	// at: compute tasks by (stream, start), for rowByStream; named marks
	// the tasks a row has named
	at    map[[2]int64][]int32
	named []bool
	// joined: by the index of a task's extra before the row, what row gave it last
	// (op type, shapes) and the extra it made: a kernel repeats at
	// every layer and step, and most rows then need no table look-up
	joined []joinedExtra
}

type joinedExtra struct {
	op, shapes model.Sym
	to         model.Extra
	set        bool
}

// indexByStream indexes the compute tasks by (stream, start).
func (j *kernelJoin) indexByStream() {
	j.at = map[[2]int64][]int32{}
	j.named = make([]bool, len(j.r.Tasks))
	for i := range j.r.Tasks {
		if t := &j.r.Tasks[i]; j.r.Class(t) == model.ClassCompute {
			k := [2]int64{int64(j.r.Stream(t)), t.Start}
			j.at[k] = append(j.at[k], int32(i))
		}
	}
}

// rowByStream names the tasks with the row's stream and start.
func (j *kernelJoin) rowByStream(k *summary.KernelRow) {
	for _, i := range j.at[[2]int64{int64(k.Stream), k.Start}] {
		t := &j.r.Tasks[i]
		x := j.r.Extra(t)
		x.Name = j.intern(&j.names2, k.NameID, k.Name)
		if k.TypeID != 0 {
			x.OpType = j.intern(&j.types, k.TypeID, k.Type)
		}
		if k.ShapesID != 0 {
			x.InputShapes = j.intern(&j.shapes, k.ShapesID, k.InputShapes)
		}
		j.r.SetExtra(t, x)
		j.named[i] = true
	}
}

// unmatched counts the compute tasks no row named (rowByStream).
func (j *kernelJoin) unmatched() int {
	n := 0
	for _, ids := range j.at {
		for _, i := range ids {
			if !j.named[i] {
				n++
			}
		}
	}
	return n
}

func newKernelJoin(r *model.Rank) *kernelJoin {
	return &kernelJoin{r: r, ti: newTaskIndex(r)}
}

// row joins one kernel_details row.
func (j *kernelJoin) row(start int64, nameID uint32, name string, typeID uint32, typ string, shapesID uint32, shapes string) {
	lo, hi := j.ti.matches(start)
	// no compute task starts there (a collective's row meets its
	// kernels): the row names none, and its name is not looked up
	for lo < hi && j.ti.task(lo) == nil {
		lo++
	}
	if lo == hi {
		return
	}
	for int(nameID) >= len(j.names) {
		j.names = append(j.names, 0)
	}
	ns := j.names[nameID]
	if ns == 0 {
		ns = 1
		if sym, ok := j.r.Syms.Lookup(name); ok {
			ns = 2 + uint32(sym)
		}
		j.names[nameID] = ns
	}
	if ns == 1 {
		return // a name the timeline never interned matches no task
	}
	sym := model.Sym(ns - 2)
	var opType, inShapes model.Sym
	resolved := false
	for i := lo; i < hi; i++ {
		t := j.ti.task(i)
		if t == nil || j.r.Name(t) != sym {
			continue
		}
		if !resolved {
			opType = j.intern(&j.types, typeID, typ)
			inShapes = j.intern(&j.shapes, shapesID, shapes)
			resolved = true
		}
		if typeID != 0 || shapesID != 0 {
			op, sh := opType, inShapes
			if typeID == 0 {
				op = j.r.OpType(t)
			}
			if shapesID == 0 {
				sh = j.r.InputShapes(t)
			}
			old := t.Extra.Index()
			if old < len(j.joined) {
				if s := &j.joined[old]; s.set && s.op == op && s.shapes == sh {
					t.Extra = s.to
					continue
				}
			}
			x := j.r.Extra(t)
			x.OpType, x.InputShapes = op, sh
			j.r.SetExtra(t, x)
			if old >= len(j.joined) {
				j.joined = append(j.joined, make([]joinedExtra, max(old+1, j.r.Extras.Len())-len(j.joined))...)
			}
			j.joined[old] = joinedExtra{op: op, shapes: sh, to: t.Extra, set: true}
		}
	}
}

// intern returns the rank's symbol of string number id (s), interning it
// the first time.
func (j *kernelJoin) intern(tab *[]model.Sym, id uint32, s string) model.Sym {
	if id == 0 {
		return 0
	}
	for int(id) >= len(*tab) {
		*tab = append(*tab, 0)
	}
	if (*tab)[id] == 0 {
		(*tab)[id] = j.r.Intern(s)
	}
	return (*tab)[id]
}
