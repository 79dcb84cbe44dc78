// Package traceview reads torch_npu's trace_view.json and msprof's
// msprof_*.json timelines as a stream and fills a model.Rank.
//
// The file is a JSON array of Chrome-trace events, often gigabytes. The
// reader pulls one event at a time (never a DOM), parses `ts` from its
// decimal text straight into int64 ns, interns names, skips counter events
// and every `args` key no pass reads, and stops cleanly at the last complete
// event of a truncated file.
package traceview

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/timeparse"
)

// Stats describes what one read saw.
type Stats struct {
	Events int64 // complete events read
	// Skipped counts events larger than MaxEventBytes, skipped unread.
	Skipped   int64
	Bytes     int64 // bytes of complete events consumed
	Truncated bool
	// TruncatedAt is the byte offset where the last incomplete event began.
	TruncatedAt int64
	// Malformed: the read stopped (Truncated is set too) because the bytes
	// at TruncatedAt are not an event, rather than because the file ended.
	Malformed bool
}

// intern tables keep one copy of every name.
type interner struct {
	m    map[string]uint32
	strs []string
}

func newInterner() *interner {
	in := &interner{m: make(map[string]uint32, 1024)}
	in.id(nil)
	return in
}

func (in *interner) id(b []byte) uint32 {
	if id, ok := in.m[string(b)]; ok {
		return id
	}
	s := unquote(b)
	if id, ok := in.m[s]; ok {
		in.m[string(b)] = id
		return id
	}
	id := uint32(len(in.strs))
	in.strs = append(in.strs, s)
	in.m[s] = id
	if string(b) != s {
		in.m[string(b)] = id
	}
	return id
}

// rawX is a compact complete-slice event kept until process names are
// known (metadata events may come last in the file).
type rawX struct {
	ts, dur  int64
	tid      int64
	name     uint32
	taskType uint32
	pid      uint16 // index into pids
	stream   int32  // from args, -1 when absent
	modelID  uint32
	cat      uint8
}

const (
	catOther uint8 = iota
	catCPUOp
	catPyFunc
)

type flow struct {
	id  uint64
	ts  int64
	tid int64
	pid uint16
	end bool
}

// dropped counts events of one kind the reader could not use, and where
// the first one was, for a single warning per kind.
type dropped struct {
	n, first int64
}

func (d *dropped) add(off int64) {
	if d.n == 0 {
		d.first = off
	}
	d.n++
}

type reader struct {
	off          int64 // byte offset of the event being read
	in           *interner
	pidIdx       map[int64]uint16
	pids         []int64
	strPids      map[string]int64
	procs        map[uint16]string
	threads      map[[2]int64]string
	xs           []rawX
	flows        []flow
	stats        Stats
	device       int
	malformedWhy string
	// events dropped or repaired, reported once each
	badTs, outOfRange, badDur, large, malformed dropped
}

// Read parses one trace file into rank. A truncated file is read up to its
// last complete event; the rank is then marked partial with the byte offset.
// An error is returned only when the input is not a trace at all or cannot
// be read.
func Read(r io.Reader, file string, rank *model.Rank) (Stats, error) {
	rd := &reader{
		in:      newInterner(),
		pidIdx:  map[int64]uint16{},
		strPids: map[string]int64{},
		procs:   map[uint16]string{},
		threads: map[[2]int64]string{},
		device:  -1,
	}
	sc := newScanner(r)
	if err := sc.start(); err != nil {
		return rd.stats, fmt.Errorf("%s: not a trace: expected a JSON array of events ('[' ...) or an object with \"traceEvents\"", file)
	}
	var it objIter
	for {
		ev, off, err := sc.next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, errEventLarge) {
			rd.large.add(off)
			rd.stats.Skipped++
			continue
		}
		if err != nil {
			if errors.Is(err, errTruncated) {
				rd.stats.Truncated = true
				rd.stats.TruncatedAt = off
				break
			}
			if sc.rerr != nil {
				return rd.stats, fmt.Errorf("%s: read error at byte %d: %w", file, off, err)
			}
			// malformed between events: stop here, like a truncation
			rd.stats.Truncated, rd.stats.Malformed = true, true
			rd.stats.TruncatedAt = off
			rd.malformedWhy = err.Error()
			break
		}
		rd.off = off
		rd.event(&it, ev)
		rd.stats.Events++
		rd.stats.Bytes = off + int64(len(ev))
	}
	rd.warnDropped(file, rank)
	if rd.stats.Truncated {
		rank.Partial = true
		reason := fmt.Sprintf("%s is truncated: it ends inside an event at byte %d; analyzed the %d complete events before it", file, rd.stats.TruncatedAt, rd.stats.Events)
		if rd.stats.Malformed {
			reason = fmt.Sprintf("%s is malformed: %s; analyzed the %d complete events before it", file, rd.malformedWhy, rd.stats.Events)
		}
		if rank.PartialReason == "" {
			rank.PartialReason = reason
		}
		rank.Warn(file, "%s", reason)
	}
	rd.build(rank, file)
	return rd.stats, nil
}

// sizeText prints a byte limit: "64 MiB", or "300 bytes".
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// warnDropped turns the counts of unusable events into one warning each.
func (rd *reader) warnDropped(file string, rank *model.Rank) {
	for _, d := range []struct {
		d   dropped
		msg string
	}{
		{rd.large, "skipped %d event(s) larger than the " + sizeText(MaxEventBytes) + " event limit (first at byte %d)"},
		{rd.malformed, "skipped %d malformed event(s): not a JSON object of \"key\": value pairs (first at byte %d)"},
		{rd.badTs, "skipped %d complete (ph X) event(s) without a numeric ts (first at byte %d)"},
		{rd.outOfRange, "skipped %d complete (ph X) event(s) whose ts or ts+dur is outside the int64 nanosecond range (first at byte %d)"},
		{rd.badDur, "%d complete (ph X) event(s) have a missing, non-numeric or negative dur, taken as 0 (first at byte %d)"},
	} {
		if d.d.n > 0 {
			rank.Warnings = append(rank.Warnings, model.Warning{File: file, Message: fmt.Sprintf(d.msg, d.d.n, d.d.first), Count: int(d.d.n)})
		}
	}
}

func (rd *reader) pidOf(v []byte) uint16 {
	var pid int64
	if len(v) > 0 && v[0] == '"' {
		s := unquote(v[1 : len(v)-1])
		p, ok := rd.strPids[s]
		if !ok {
			p = -int64(len(rd.strPids)) - 1
			rd.strPids[s] = p
		}
		pid = p
	} else {
		p, ok := timeparse.ParseInt(v)
		if !ok {
			p = -1 << 40
		}
		pid = p
	}
	if i, ok := rd.pidIdx[pid]; ok {
		return i
	}
	if len(rd.pids) >= 1<<16-1 {
		return 1<<16 - 1
	}
	i := uint16(len(rd.pids))
	rd.pids = append(rd.pids, pid)
	rd.pidIdx[pid] = i
	return i
}

// tidOf returns a numeric tid, or a negative hash of a tid that is not an
// int64 (a name, or a number out of range) so distinct tids stay distinct.
func tidOf(v []byte) int64 {
	if t, ok := timeparse.ParseInt(v); ok {
		return t
	}
	var h int64 = 1469598103934665603
	for _, c := range v {
		h = (h ^ int64(c)) * 1099511628211
	}
	if h > 0 {
		h = -h
	}
	return h
}

var (
	kPh       = []byte("ph")
	kName     = []byte("name")
	kPid      = []byte("pid")
	kTid      = []byte("tid")
	kTs       = []byte("ts")
	kDur      = []byte("dur")
	kCat      = []byte("cat")
	kID       = []byte("id")
	kArgs     = []byte("args")
	kTaskType = []byte("Task Type")
	kPhysic   = []byte("Physic Stream Id")
	kStreamID = []byte("Stream Id")
	kModelID  = []byte("Model Id")
)

func (rd *reader) event(it *objIter, ev []byte) {
	if !it.init(ev) {
		rd.malformed.add(rd.off)
		return
	}
	var ph byte
	var name, pidV, tidV, tsV, durV, catV, idV, args []byte
	for {
		k, ok := it.nextKey()
		if !ok {
			break
		}
		v := it.value()
		if it.err != nil {
			break
		}
		switch {
		case bytes.Equal(k, kPh):
			if len(v) >= 3 {
				ph = v[1]
			}
		case bytes.Equal(k, kName):
			name = v
		case bytes.Equal(k, kPid):
			pidV = v
		case bytes.Equal(k, kTid):
			tidV = v
		case bytes.Equal(k, kTs):
			tsV = v
		case bytes.Equal(k, kDur):
			durV = v
		case bytes.Equal(k, kCat):
			catV = v
		case bytes.Equal(k, kID):
			idV = v
		case bytes.Equal(k, kArgs):
			args = v
		}
	}
	if it.err != nil {
		rd.malformed.add(rd.off)
		return
	}
	switch ph {
	case 'X':
		rd.complete(name, pidV, tidV, tsV, durV, catV, args)
	case 'M':
		rd.meta(name, pidV, tidV, args)
	case 's', 'f':
		if len(name) >= 2 && string(name[1:len(name)-1]) == "torch_to_npu" {
			rd.flowEv(ph == 'f', pidV, tidV, tsV, idV)
		}
	}
}

func strContent(v []byte) []byte {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}

func (rd *reader) complete(name, pidV, tidV, tsV, durV, catV, args []byte) {
	ts, ok := timeparse.MicrosToNanos(tsV)
	if !ok {
		if tsV == nil || !timeparse.LooksNumeric(tsV) {
			rd.badTs.add(rd.off)
		} else {
			rd.outOfRange.add(rd.off)
		}
		return
	}
	dur, ok := timeparse.MicrosToNanos(durV)
	if !ok || dur < 0 {
		if ok || !timeparse.LooksNumeric(durV) {
			rd.badDur.add(rd.off)
			dur = 0
		} else {
			rd.outOfRange.add(rd.off)
			return
		}
	}
	if ts > 0 && dur > math.MaxInt64-ts {
		rd.outOfRange.add(rd.off)
		return
	}
	x := rawX{ts: ts, dur: dur, tid: tidOf(tidV), pid: rd.pidOf(pidV), stream: -1, modelID: 4294967295}
	if catV != nil {
		switch string(strContent(catV)) {
		case "cpu_op":
			x.cat = catCPUOp
		case "python_function":
			// Python tracer slices: not read by any pass.
			return
		}
	}
	x.name = rd.in.id(strContent(name))
	if len(args) > 0 {
		var ai objIter
		if ai.init(args) {
			for {
				k, ok := ai.nextKey()
				if !ok {
					break
				}
				v := ai.value()
				if ai.err != nil {
					break
				}
				switch {
				case bytes.Equal(k, kTaskType):
					x.taskType = rd.in.id(strContent(v))
				case bytes.Equal(k, kPhysic), bytes.Equal(k, kStreamID):
					if n, ok := timeparse.ParseInt(v); ok && n >= 0 && n <= math.MaxInt32 {
						x.stream = int32(n)
					}
				case bytes.Equal(k, kModelID):
					if n, ok := timeparse.ParseInt(v); ok && n >= 0 && n <= math.MaxUint32 {
						x.modelID = uint32(n)
					}
				}
			}
		}
	}
	rd.xs = append(rd.xs, x)
}

func (rd *reader) meta(name, pidV, tidV, args []byte) {
	n := string(strContent(name))
	if n == "process_labels" {
		rd.labels(args)
		return
	}
	if n != "process_name" && n != "thread_name" {
		return
	}
	var val string
	var ai objIter
	if ai.init(args) {
		for {
			k, ok := ai.nextKey()
			if !ok {
				break
			}
			v := ai.value()
			if ai.err != nil {
				break
			}
			if string(k) == "name" {
				val = unquote(strContent(v))
			}
		}
	}
	pid := rd.pidOf(pidV)
	if n == "process_name" {
		rd.procs[pid] = val
	} else {
		rd.threads[[2]int64{int64(pid), tidOf(tidV)}] = val
	}
}

func (rd *reader) flowEv(end bool, pidV, tidV, tsV, idV []byte) {
	ts, ok := timeparse.MicrosToNanos(tsV)
	if !ok {
		return
	}
	id, ok := timeparse.ParseInt(idV)
	if !ok {
		return
	}
	rd.flows = append(rd.flows, flow{id: uint64(id), ts: ts, tid: tidOf(tidV), pid: rd.pidOf(pidV), end: end})
}

// process kinds
const (
	procOther = iota
	procPython
	procHardware
	procHCCL
)

func procKind(name string) int {
	switch name {
	case "Python", "python":
		return procPython
	case "Ascend Hardware":
		return procHardware
	case "HCCL", "Communication":
		return procHCCL
	}
	return procOther
}

// isBigOpThread reports whether an HCCL-process thread holds big ops
// ("Group {g} Communication", "Group {g} Aicpu Communication") rather than
// plane tasks ("Plane {k}").
func isBigOpThread(name string) bool {
	return strings.HasPrefix(name, "Group") && strings.HasSuffix(name, "Communication")
}

func (rd *reader) build(rank *model.Rank, file string) {
	kinds := make([]int, len(rd.pids))
	haveHW, haveHCCL := false, false
	for i := range rd.pids {
		kinds[i] = procKind(rd.procs[uint16(i)])
		haveHW = haveHW || kinds[i] == procHardware
		haveHCCL = haveHCCL || kinds[i] == procHCCL
	}
	// slices on processes (or HCCL threads) whose names were never read:
	// in a truncated file their metadata lay after the cut
	var unnamed, unnamedHCCL int
	if rd.stats.Truncated {
		for i := range rd.xs {
			x := &rd.xs[i]
			if _, ok := rd.procs[x.pid]; !ok {
				unnamed++
			} else if kinds[x.pid] == procHCCL {
				if _, ok := rd.threads[[2]int64{int64(x.pid), x.tid}]; !ok {
					unnamedHCCL++
				}
			}
		}
	}
	type key struct {
		pid uint16
		tid int64
		ts  int64
	}
	var opAt, taskAt, hcclAt map[key]int32
	if len(rd.flows) > 0 {
		opAt, taskAt, hcclAt = map[key]int32{}, map[key]int32{}, map[key]int32{}
	}
	strs := rd.in.strs
	opType := map[uint32]string{}
	for i := range rd.xs {
		x := &rd.xs[i]
		kind := procOther
		if int(x.pid) < len(kinds) {
			kind = kinds[x.pid]
		}
		switch kind {
		case procHardware:
			name := strs[x.name]
			tt := strs[x.taskType]
			stream := x.stream
			if stream < 0 {
				stream = int32(x.tid)
			}
			ot, ok := opType[x.name]
			if !ok {
				ot = model.OpTypeFromName(name)
				opType[x.name] = ot
			}
			if taskAt != nil {
				taskAt[key{x.pid, x.tid, x.ts}] = int32(len(rank.Tasks))
			}
			rank.Tasks = append(rank.Tasks, model.DeviceTask{
				Start: x.ts, Dur: x.dur, Name: name, OpType: ot, TaskType: tt,
				Stream: stream, Class: model.ClassifyTask(tt, name), ModelID: x.modelID,
			})
		case procHCCL:
			tn := rd.threads[[2]int64{int64(x.pid), x.tid}]
			if !isBigOpThread(tn) {
				continue
			}
			name := strs[x.name]
			if hcclAt != nil {
				hcclAt[key{x.pid, x.tid, x.ts}] = int32(len(rank.HCCL))
			}
			rank.HCCL = append(rank.HCCL, model.HCCLOp{
				Start: x.ts, Dur: x.dur, Name: name, Type: model.HCCLTypeFromName(name),
				HashSuffix: model.HCCLHashSuffix(name), Variant: model.HCCLVariant(name),
			})
		case procPython:
			name := strs[x.name]
			if strings.HasPrefix(name, "ProfilerStep#") {
				var id int
				if _, err := fmt.Sscanf(name[len("ProfilerStep#"):], "%d", &id); err == nil {
					rank.Steps = append(rank.Steps, model.Step{ID: id, Start: x.ts, End: x.ts + x.dur})
				}
				continue
			}
			if x.cat != catCPUOp {
				continue
			}
			if opAt != nil {
				opAt[key{x.pid, x.tid, x.ts}] = int32(len(rank.FrameworkOps))
			}
			rank.FrameworkOps = append(rank.FrameworkOps, model.FrameworkOp{Start: x.ts, Dur: x.dur, Name: name, Tid: x.tid})
		}
	}
	rd.xs = nil
	if len(rd.flows) > 0 {
		starts := map[uint64]int32{}
		for _, f := range rd.flows {
			if !f.end {
				if op, ok := opAt[key{f.pid, f.tid, f.ts}]; ok {
					starts[f.id] = op
				}
			}
		}
		for _, f := range rd.flows {
			if !f.end {
				continue
			}
			op, ok := starts[f.id]
			if !ok {
				continue
			}
			k := key{f.pid, f.tid, f.ts}
			if t, ok := taskAt[k]; ok {
				rank.Links = append(rank.Links, model.Link{Op: op, Task: t, HCCL: -1})
			} else if h, ok := hcclAt[k]; ok {
				rank.Links = append(rank.Links, model.Link{Op: op, Task: -1, HCCL: h})
			}
		}
	}
	// A device timeline records every collective, so HCCL is measured (a
	// single-card run legitimately has none) -- unless the file was cut
	// before the metadata that identifies the HCCL process or its threads.
	if rd.stats.Truncated {
		rank.Have.TimelinePartial = true
		at := rd.stats.TruncatedAt
		cut := "truncated"
		if rd.stats.Malformed {
			cut = "malformed"
		}
		if unnamed > 0 {
			rank.Warn(file, "%d slice(s) belong to processes whose process_name metadata lies after byte %d, where the file is %s; they could not be attributed", unnamed, at, cut)
		}
		switch {
		case !haveHW:
			// collectives alone are no timeline: drop them so a
			// kernel_details fallback cannot count them twice
			rank.HCCL = nil
			links := rank.Links[:0]
			for _, l := range rank.Links {
				if l.Task >= 0 {
					links = append(links, l)
				}
			}
			rank.Links = links
			rank.Have.TimelineNote = fmt.Sprintf("%s is %s at byte %d, before the Ascend Hardware process metadata, so no device task can be identified", file, cut, at)
		case !haveHCCL || unnamedHCCL > 0:
			rank.Have.HCCLNote = fmt.Sprintf("%s is %s at byte %d, before the HCCL process and thread metadata, so collectives cannot be identified", file, cut, at)
		}
	}
	rank.Have.Timeline = len(rank.Tasks) > 0 || len(rank.HCCL) > 0
	rank.Have.HCCL = rank.Have.Timeline && rank.Have.HCCLNote == ""
	if !rank.Have.Timeline && rank.Have.TimelineNote == "" {
		switch {
		case rd.stats.Malformed:
			rank.Have.TimelineNote = fmt.Sprintf("%s is malformed at byte %d, before any device task", file, rd.stats.TruncatedAt)
		case rd.stats.Truncated:
			rank.Have.TimelineNote = fmt.Sprintf("%s is truncated at byte %d, before any device task", file, rd.stats.TruncatedAt)
		default:
			rank.Have.TimelineNote = fmt.Sprintf("%s has no device tasks (no \"Ascend Hardware\" or HCCL process slices)", file)
		}
	}
	rank.Have.Framework = len(rank.FrameworkOps) > 0
	if rank.Device < 0 && rd.device >= 0 {
		rank.Device = rd.device
	}
}

// labels reads process_labels metadata: new versions write "NPU {id}".
func (rd *reader) labels(args []byte) {
	var ai objIter
	if !ai.init(args) {
		return
	}
	for {
		k, ok := ai.nextKey()
		if !ok {
			return
		}
		v := ai.value()
		if ai.err != nil {
			return
		}
		if string(k) != "labels" {
			continue
		}
		l := unquote(strContent(v))
		if strings.HasPrefix(l, "NPU ") {
			var d int
			if _, err := fmt.Sscanf(l[4:], "%d", &d); err == nil && d >= 0 && d < 1<<16 {
				rd.device = d
			}
		}
	}
}
