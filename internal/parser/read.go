package parser

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/parser/summary"
	"github.com/npuprof/npuprof/internal/parser/traceview"
)

// ParseRank reads one rank's files into the model. A panic in a reader is
// recovered and returned as an errkind.Internal error naming the rank's path.
func ParseRank(src Source) (r *model.Rank, err error) {
	defer func() {
		if v := recover(); v != nil {
			stack := strings.SplitN(string(debug.Stack()), "\n", 13)
			r, err = nil, errkind.Errorf(errkind.Internal, "internal error: panic while reading %s: %v\n%s", src.Root, v, strings.Join(stack[:len(stack)-1], "\n"))
		}
	}()
	return parseRank(src)
}

// TestHookParseRank is for tests only: when set, it runs first in
// ParseRank, so a test (of this or another package) can make a reader
// panic and check the recovery and the exit code.
var TestHookParseRank func(Source)

func parseRank(src Source) (*model.Rank, error) {
	if TestHookParseRank != nil {
		TestHookParseRank(src)
	}
	r := model.NewRank(src.Root)
	defer counting(r, src.BytesRead)()
	r.Format = src.Format
	r.Rank = src.RankHint
	r.DirTimestamp = src.Timestamp
	for _, f := range formats {
		if f.takes(src) {
			return f.read(r, src)
		}
	}
	return nil, errkind.Errorf(errkind.Internal, "internal error: no reader takes %s", src.Root)
}

// parseExport reads one rank of an npuprof Parquet export (the rank it
// builds replaces r).
func parseExport(_ *model.Rank, src Source) (*model.Rank, error) {
	r, err := parquetio.ReadRank(src.Parquet, src.RankHint, parquetio.ReadOptions{SkipCommunication: src.SkipCommunication, SkipFramework: src.SkipFramework})
	if err != nil {
		return nil, err
	}
	// an export is input: a model that breaks the invariants is a
	// damaged or hand-edited file, not a parser bug
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: rank %d: %w", src.Parquet, src.RankHint, err)
	}
	return r, nil
}

// parseTraceFile reads a trace the user named (and the metadata of the
// rank folder around it, when there is one).
func parseTraceFile(r *model.Rank, src Source) (*model.Rank, error) {
	if src.Root != src.TraceFile {
		// the rank folder around the named trace
		readMeta(r, src.Root)
	} else {
		r.Have.GroupsNote = fmt.Sprintf("only %s was read: the tp/ep/dp groups (parallel_group_info) are in the rank folder's profiler_metadata.json (give the folder)", src.TraceFile)
	}
	// the user named this file: if it is not a trace, say so (exit 2)
	if err := readTrace(r, src.TraceFile, src); err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	finish(r)
	return validate(r)
}

// parseOutput reads a torch_npu rank folder: its metadata, then the files
// of its ASCEND_PROFILER_OUTPUT (trace, kernel details, step trace,
// communication, summaries), each missing or broken file a warning.
func parseOutput(r *model.Rank, src Source) (*model.Rank, error) {
	readMeta(r, src.Root)
	out := src.Output
	if !exists(out) {
		why := fmt.Sprintf("torch_npu wrote no %s (its own parsing failed or was skipped)", out)
		r.Warn(out, "missing: torch_npu wrote no %s (its own parsing failed or was skipped); timeline metrics are unavailable", profilerOutput)
		r.Have.TimelineNote, r.Have.KernelNote = why, why
		finish(r)
		return validate(r)
	}
	// communication.json does not depend on the timeline: with CPUs to
	// spare it is read while the trace is (its warnings keep their place)
	comm := &model.Rank{Path: r.Path}
	commFile := ""
	if !src.SkipCommunication {
		commFile = findInput(out, "communication.json")
	}
	commDone := make(chan struct{})
	readComm := func() {
		defer close(commDone)
		if commFile != "" {
			readComm(comm, commFile, summary.ReadCommunication)
		}
	}
	if src.TraceParts > 1 {
		go readComm()
	}
	readTimeline(r, out, src)
	if src.TraceParts <= 1 {
		readComm()
	}
	<-commDone
	r.Communication = comm.Communication
	r.Warnings = append(r.Warnings, comm.Warnings...)
	mergePartial(r, comm)
	if len(r.Communication) > 0 {
		r.Have.CommFile = commFile
	}
	if comm.Have.HCCLNote != "" && r.Have.HCCLNote == "" && !r.Have.HCCL && r.NeedsCommOps() {
		// refused where it gives the collectives (as readSummaries
		// would read it for analyze): the collective metrics say why
		r.Have.HCCLNote = comm.Have.HCCLNote
	}
	readSummaries(r, out, src.SkipCommunication)
	deviceFromSummaries(r, out)
	if !r.Have.Timeline && !r.Have.KernelDetails && len(r.StepTrace) == 0 && len(r.Communication) == 0 && len(r.OpStats) == 0 {
		var why []string
		for _, n := range []string{r.Have.TimelineNote, r.Have.KernelNote} {
			if n != "" {
				why = append(why, n)
			}
		}
		r.Warn(out, "nothing to measure on the device: %s", strings.Join(why, "; "))
	}
	finish(r)
	return validate(r)
}

// readTimeline reads the output folder's trace_view.json, kernel_details.csv
// and step_trace_time.csv. A trace_view.json that is empty, unreadable or
// not a trace leaves the rank without a timeline (said in warnings and
// `unavailable`); the other files are still measured.
func readTimeline(r *model.Rank, out string, src Source) {
	if trace := findInput(out, "trace_view.json"); trace != "" {
		if err := readTrace(r, trace, src); err != nil {
			r.Warn(trace, "%v", err)
			r.Have.TimelineNote = err.Error()
		}
	} else {
		r.Have.TimelineNote = fmt.Sprintf("%s has no trace_view.json", out)
	}
	if p := findInput(out, "kernel_details.csv"); p != "" {
		readKernels(r, p)
	} else {
		r.Have.KernelNote = fmt.Sprintf("%s has no kernel_details.csv", out)
	}
	if p := findInput(out, "step_trace_time.csv"); p != "" {
		readStepTrace(r, p)
	}
}

// validate checks the model's invariants; a violation is a parser bug.
func validate(r *model.Rank) (*model.Rank, error) {
	if err := r.Validate(); err != nil {
		return nil, errkind.Errorf(errkind.Internal, "internal error: the parsers built an invalid model: %w", err)
	}
	return r, nil
}

// finish resolves HCCL groups, orders the model and drops exact duplicates.
func finish(r *model.Rank) {
	defer func() {
		if d := r.DropDuplicates(); d.Total() > 0 {
			file := r.Have.TimelineFile
			if file == "" {
				file = r.Have.KernelFile
			}
			r.Warnings = append(r.Warnings, model.Warning{File: file, Count: d.Total(), Message: fmt.Sprintf(
				"counted exact duplicates once: %d device task(s), %d HCCL op(s), %d framework op(s), %d step(s) appeared more than once with the same start, duration, name and stream or thread (first at ts %d ns)",
				d.Tasks, d.HCCL, d.Ops, d.Steps, d.FirstStart)})
		}
	}()
	if r.Have.HCCL && r.Have.HCCLFile == "" {
		r.Have.HCCLFile = r.Have.TimelineFile
	}
	for i := range r.HCCL {
		h := &r.HCCL[i]
		if h.HashSuffix == 0 || h.Group != 0 {
			continue
		}
		if g := r.GroupByHashSuffix(r.Str(h.HashSuffix)); g != nil {
			h.Group = r.Intern(g.Name)
		}
	}
	validateRead(r)
	r.SortTasks()
	checkFarTasks(r)
	checkFarHCCL(r)
}

// readWith reads path with read (a problem is a warning on r) and hands
// what it returned, also on an error, to set.
func readWith[T any](r *model.Rank, path string, read func(io.Reader, string) (T, error), set func(T)) {
	withFile(r, path, func(f io.Reader) error {
		v, err := read(f, path)
		set(v)
		return err
	})
}

// withFile opens path and runs fn on it; a problem becomes a warning on
// the rank and is returned so callers can record what it makes unavailable.
func withFile(r *model.Rank, path string, fn func(io.Reader) error) error {
	f, err := openCounted(path, rootOf(r, path), counterOf(r))
	if err != nil {
		r.Warn(path, "cannot open: %v", err)
		if errkind.Of(err) != errkind.Unknown {
			// refused by the rule of internal/infile (a link leading out
			// of the rank): this file's metrics only, not the run
			return fmt.Errorf("cannot open %s: %s", path, err)
		}
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	err = fn(f)
	if cerr := f.Close(); cerr != nil && f.Compression() != "" {
		damagedFile(r, path, cerr)
		return cerr
	}
	if err != nil {
		r.Warn(path, "%v", err)
		return err
	}
	return nil
}

// readTrace reads a trace into r, with its framework ops and links
// reduced when src says so (also after an error: what was read stays).
func readTrace(r *model.Rank, path string, src Source) error {
	if src.ReduceFramework {
		r.WillReduceEarly()
		defer func() {
			r.ReduceFrameworkEarly()
			// the names in one array through the rest of the read too
			// (the passes read them packed)
			r.Syms.Pack()
		}()
	}
	parts := src.TraceParts
	// a plain file is mapped rather than read, and read in parts at the
	// same time when CPUs are spare
	n := counterOf(r)
	root := rootOf(r, path)
	// the trace's own Overlap Analysis is decoded only where the window
	// recomputed by the older rule could differ from it: a writer of CANN
	// 8.5 or later (the extremes rule), or of no known version (then it
	// stands only where the recomputation differs, OwnOverlap.IfDiffers)
	extremes, known := model.ExtremesWriter(r.CANNVersion)
	overlap := extremes || !known
	defer func() {
		if !known {
			markIfDiffers(r)
		}
	}()
	if f, size, ok := openPlain(path, root); ok {
		defer f.Close()
		var ra io.ReaderAt = f
		if n != nil {
			ra = countedReaderAt{f, n}
		}
		read := traceview.ReadFile
		if overlap {
			read = traceview.ReadFileWithOverlap
		}
		if _, err := read(ra, size, path, r, parts); err != nil {
			return err
		}
		r.Have.TimelineFile = path
		noteDevice(r, path)
		return nil
	}
	f, err := openCounted(path, root, n)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	read := traceview.Read
	if overlap {
		read = traceview.ReadWithOverlap
	}
	_, err = read(f, path, r)
	if cerr := f.Close(); cerr != nil {
		// the events read may be wrong: the timeline is partial
		damagedFile(r, path, cerr)
		r.Have.TimelinePartial = true
	}
	if err != nil {
		return err
	}
	r.Have.TimelineFile = path
	noteDevice(r, path)
	return nil
}

// markIfDiffers marks the Overlap Analysis read from a trace of no known
// writer version as standing only where the recomputed window differs
// from it (model.OwnOverlap.IfDiffers).
func markIfDiffers(r *model.Rank) {
	if r.OwnOverlap.Slices > 0 {
		r.OwnOverlap.IfDiffers = true
	}
	for i := range r.PerDevice {
		if r.PerDevice[i].OwnOverlap.Slices > 0 {
			r.PerDevice[i].OwnOverlap.IfDiffers = true
		}
	}
}

func readMeta(r *model.Rank, root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		r.Have.GroupsNote = fmt.Sprintf("cannot list %s: %v", root, err)
		return
	}
	r.Have.GroupsNote = fmt.Sprintf("%s has no profiler_metadata.json", root)
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		if e.IsDir() {
			deviceFromProf(r, root, e.Name())
			continue
		}
		// gzip -r (or xz, zstd) on a capture renames them: read the same
		name := trimCompressed(e.Name())
		switch {
		case name == "profiler_info.json" || nameProfilerInfo.MatchString(name):
			withFile(r, p, func(f io.Reader) error {
				info, err := summary.ReadProfilerInfo(f, p)
				if err != nil {
					return err
				}
				if info.Rank >= 0 {
					r.Rank = info.Rank
				}
				r.ProfilerLevel = info.ProfilerLevel
				r.TorchNPUVersion, r.CANNVersion = info.TorchNPUVersion, info.CANNVersion
				if info.WorldSize > 0 {
					r.WorldSize, r.WorldSizeFrom = info.WorldSize, p+" world_size"
				}
				return nil
			})
		case name == "profiler_metadata.json":
			err := withFile(r, p, func(f io.Reader) error {
				md, err := summary.ReadProfilerMetadata(f, p)
				if err != nil {
					return err
				}
				r.Env, r.Groups, r.Metadata = md.Env, md.Groups, md.Other
				return nil
			})
			switch {
			case err != nil:
				r.Have.GroupsNote = err.Error()
			case len(r.Groups) == 0:
				r.Have.GroupsNote = p + " has no parallel_group_info"
			default:
				r.Have.GroupsNote = ""
			}
		}
	}
}
