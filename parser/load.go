package parser

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/units"
	"github.com/npuprof/npuprof/parser/expertload"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/parquetio"
	"github.com/npuprof/npuprof/parser/summary"
	"github.com/npuprof/npuprof/parser/traceview"
)

// Profile is every rank found under one input path.
type Profile struct {
	Path  string
	Ranks []*model.Rank
	// Notes are input-level observations (duplicate or missing ranks,
	// different step sets) that never stop the analysis.
	Notes []string
	// Experts is the per-expert load input (Options.Experts, or MindIE
	// dumps / a layer,expert,tokens CSV found inside the profile folder),
	// nil when there is none.
	Experts *model.ExpertLoads
	// Internal lists bugs met while reading a rank (recovered panics,
	// broken model invariants), one message per rank; such a rank is left
	// out and the CLI exits 3 after writing its output.
	Internal []string
}

// Options tune Load.
type Options struct {
	// Workers bounds how many ranks are parsed at once (0 = GOMAXPROCS).
	Workers int
	// Progress, when set, is called after each rank is parsed.
	Progress func(done, total int, path string)
	// BytesRead, when set, counts the bytes read from the ranks' text and
	// trace files while they are read (a compressed file counts what is
	// read from disk; databases and Parquet exports are not counted).
	BytesRead *atomic.Int64
	// Experts names an expert-load input for Load (file or folder, see
	// parser/expertload); empty: look for one inside the profile folder.
	// ExpertStage picks decode or prefill dumps ("" prefers decode).
	Experts, ExpertStage string
	// SkipCommunication leaves communication.json unread (Rank.Communication
	// empty): no analysis pass reads it, only `npuprof export` keeps it.
	SkipCommunication bool
	// SkipFramework leaves an npuprof Parquet export's framework_ops and
	// links unread (Rank.FrameworkOps and Rank.Links empty): no analysis
	// pass reads them, only `npuprof export` keeps them. Trace files are
	// read whole either way (their flows are joined through the framework
	// ops).
	SkipFramework bool
}

// Load detects and parses every rank under path and keeps every rank's
// model. A rank that fails to parse is reported by its path; Load fails
// only when no rank could be read. For many ranks, Walk bounds memory.
func Load(ctx context.Context, path string, opts Options) (*Profile, error) {
	srcs, err := Detect(path)
	if err != nil {
		return nil, err
	}
	ranks := make([]*model.Rank, len(srcs))
	errs := make([]error, len(srcs))
	if err := Walk(ctx, srcs, opts, func(i int, r *model.Rank, err error) {
		ranks[i], errs[i] = r, err
	}); err != nil {
		return nil, err
	}
	notes, err := SourceNotes(srcs)
	if err != nil {
		return nil, err
	}
	read, failed, internal, err := Sift(srcs, errs)
	if err != nil {
		return nil, err
	}
	p := &Profile{Path: path, Notes: append(notes, failed...), Internal: internal}
	ids := make([]RankID, len(read))
	for k, i := range read {
		p.Ranks = append(p.Ranks, ranks[i])
		ids[k] = IDOf(ranks[i])
	}
	var kept []string
	p.Ranks, kept = Keep(p.Ranks, ids, func(r *model.Rank, rank int) { r.Rank = rank })
	p.Notes = append(p.Notes, kept...)
	x, note, err := expertload.ForProfile(path, opts.Experts, expertload.Options{Stage: opts.ExpertStage})
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	if note != "" {
		p.Notes = append(p.Notes, note)
	}
	p.Experts = x
	p.Notes = UniqueNotes(p.Notes)
	return p, nil
}

// Walk parses srcs with at most opts.Workers ranks in flight (0 =
// GOMAXPROCS) and calls fn from the worker that parsed source i, so work
// done in fn (analysis) runs in the same slot: at most Workers models are
// alive at once when fn drops them. Progress is called after each fn.
func Walk(ctx context.Context, srcs []Source, opts Options, fn func(i int, r *model.Rank, err error)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > len(srcs) {
		workers = len(srcs)
	}
	// CPUs the ranks in flight leave idle read a rank's trace in parts
	parts := runtime.GOMAXPROCS(0) / max(workers, 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				src := srcs[i]
				if src.TraceParts == 0 {
					src.TraceParts = parts
				}
				src.SkipCommunication = src.SkipCommunication || opts.SkipCommunication
				src.SkipFramework = src.SkipFramework || opts.SkipFramework
				src.bytesRead = opts.BytesRead
				r, err := ParseRank(src)
				fn(i, r, err)
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(srcs), srcs[i].Root)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range srcs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}

// RankID is what Reconcile needs to know about a parsed rank.
type RankID struct {
	Rank         int // -1 when unknown
	Path         string
	DirTimestamp string
	Steps        []int
	// Kineto: a torch.profiler Chrome trace, whose rank only its header's
	// distributedInfo gives
	Kineto bool
}

// Reconcile fills unknown ranks (folder order), keeps the newest of
// duplicate ranks (the newest folder timestamp, as msprof-analyze does),
// and notes missing ranks and ranks whose step sets differ. It returns the
// rank number of every input, whether to keep it, and the notes; nothing
// here is fatal.
func Reconcile(ids []RankID) (ranks []int, keep []bool, notes []string) {
	ranks, notes = fillRanks(ids)
	keep, kept, dups := dedupe(ids, ranks)
	notes = append(notes, dups...)
	if len(kept) > 1 {
		if note := missingRanks(ranks, kept); note != "" {
			notes = append(notes, note)
		}
		if note := stepSets(ids, ranks, kept); note != "" {
			notes = append(notes, note)
		}
	}
	return ranks, keep, notes
}

// fillRanks numbers the ranks of unknown rank: rank 0 for a single input,
// else the lowest numbers no input has, in folder order.
func fillRanks(ids []RankID) (ranks []int, notes []string) {
	n := len(ids)
	ranks = make([]int, n)
	used := map[int]bool{}
	for i, id := range ids {
		ranks[i] = id.Rank
		if id.Rank >= 0 {
			used[id.Rank] = true
		}
	}
	nextFree := 0
	for i, id := range ids {
		if id.Rank >= 0 {
			continue
		}
		if n == 1 {
			ranks[i] = 0
			why := "no profiler_info_{rank}.json, RANK_DEVICE_MAP or info.json rank_id"
			if id.Kineto {
				why = "a Kineto trace whose header has no distributedInfo.rank"
			}
			notes = append(notes, fmt.Sprintf("%s: rank unknown (%s); reported as rank 0", id.Path, why))
			continue
		}
		for used[nextFree] {
			nextFree++
		}
		ranks[i] = nextFree
		used[nextFree] = true
		notes = append(notes, fmt.Sprintf("%s: rank unknown; assigned rank %d by folder order", id.Path, nextFree))
	}
	return ranks, notes
}

// dedupe keeps one input per rank, the newest folder: keep[i] says whether
// input i is kept, kept lists the kept inputs in rank order.
func dedupe(ids []RankID, ranks []int) (keep []bool, kept []int, notes []string) {
	keep = make([]bool, len(ids))
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if ranks[x] != ranks[y] {
			return ranks[x] < ranks[y]
		}
		return ids[x].DirTimestamp > ids[y].DirTimestamp
	})
	for k, i := range order {
		if k > 0 && ranks[order[k-1]] == ranks[i] {
			k := ids[kept[len(kept)-1]]
			if k.DirTimestamp == ids[i].DirTimestamp {
				// equal or missing timestamps: nothing says which is newer
				notes = append(notes, fmt.Sprintf("rank %d appears twice; kept %s (the first found: no folder timestamp tells which is newer), ignored %s", ranks[i], k.Path, ids[i].Path))
				continue
			}
			notes = append(notes, fmt.Sprintf("rank %d appears twice; kept the newest folder %s, ignored %s", ranks[i], k.Path, ids[i].Path))
			continue
		}
		keep[i] = true
		kept = append(kept, i)
	}
	return keep, kept, notes
}

// missingRanks notes the ranks below the highest kept one that no input
// has ("" when none is missing).
func missingRanks(ranks, kept []int) string {
	maxRank := ranks[kept[len(kept)-1]]
	if maxRank+1 == len(kept) {
		return ""
	}
	have := map[int]bool{}
	for _, i := range kept {
		have[ranks[i]] = true
	}
	var missing []string
	total := 0
	for r := 0; r <= maxRank; r++ {
		if !have[r] {
			total++
			if len(missing) < 20 {
				missing = append(missing, strconv.Itoa(r))
			}
		}
	}
	if total == 0 {
		return ""
	}
	more := ""
	if total > len(missing) {
		more = fmt.Sprintf(" and %d more", total-len(missing))
	}
	return fmt.Sprintf("missing ranks: %s%s (found %d of %d ranks 0..%d); the cluster analysis covers the ranks present", strings.Join(missing, ", "), more, len(kept), maxRank+1, maxRank)
}

// stepSets notes kept ranks whose step sets differ, grouped by set, the
// largest group first ("" when all have the same steps).
func stepSets(ids []RankID, ranks, kept []int) string {
	sets := map[string][]int{}
	var keys []string
	for _, i := range kept {
		ss := make([]string, len(ids[i].Steps))
		for k, v := range ids[i].Steps {
			ss[k] = strconv.Itoa(v)
		}
		key := strings.Join(ss, ",")
		if _, ok := sets[key]; !ok {
			keys = append(keys, key)
		}
		sets[key] = append(sets[key], ranks[i])
	}
	if len(keys) <= 1 {
		return ""
	}
	sort.SliceStable(keys, func(a, b int) bool { return len(sets[keys[a]]) > len(sets[keys[b]]) })
	parts := make([]string, len(keys))
	for k, key := range keys {
		if key == "" {
			key = "none"
		}
		parts[k] = fmt.Sprintf("ranks %s have steps [%s]", rankRange(sets[keys[k]]), key)
	}
	return "ranks have different step sets: " + strings.Join(parts, "; ") + "; per-step comparisons use the ranks that have each step"
}

// IDOf is what Reconcile needs to know about a parsed rank.
func IDOf(r *model.Rank) RankID {
	return RankID{Rank: r.Rank, Path: r.Path, DirTimestamp: r.DirTimestamp, Steps: StepIDs(r), Kineto: r.Format == model.FormatTorchNPUChrome}
}

// Sift sorts the outcome of reading srcs (errs[i] is source i's error):
// the indexes of the sources read, a note for each source that could not
// be read, and the message of each reader bug (errkind.Internal, never
// blamed on the input). With no source read, err is the first reader bug,
// or else a usage error listing every failure.
func Sift(srcs []Source, errs []error) (read []int, notes, internal []string, err error) {
	var failed []string
	var bug error
	for i, e := range errs {
		if e == nil {
			read = append(read, i)
			continue
		}
		failed = append(failed, e.Error())
		if errkind.Is(e, errkind.Internal) {
			internal = append(internal, e.Error())
			if bug == nil {
				bug = e
			}
			continue
		}
		notes = append(notes, fmt.Sprintf("rank folder %s could not be read: %v", srcs[i].Root, e))
	}
	if len(read) > 0 {
		return read, notes, internal, nil
	}
	if bug != nil {
		return nil, nil, nil, bug
	}
	return nil, nil, nil, errkind.New(errkind.Usage, strings.Join(failed, "; "))
}

// Keep numbers and deduplicates the ranks read (items[i], whose identity
// is ids[i]) with Reconcile: set gives each kept item its rank number, and
// the kept items come back in rank order, with Reconcile's notes.
func Keep[T any](items []T, ids []RankID, set func(item T, rank int)) ([]T, []string) {
	ranks, keep, notes := Reconcile(ids)
	type ranked struct {
		item T
		rank int
	}
	var kept []ranked
	for i, it := range items {
		if keep[i] {
			set(it, ranks[i])
			kept = append(kept, ranked{it, ranks[i]})
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].rank < kept[j].rank })
	out := make([]T, len(kept))
	for i, k := range kept {
		out[i] = k.item
	}
	return out, notes
}

// rankRange prints ranks compactly: 0-3,5,7-8.
func rankRange(r []int) string {
	var parts []string
	for _, run := range units.Runs(r) {
		if run[1] > run[0] {
			parts = append(parts, fmt.Sprintf("%d-%d", run[0], run[1]))
		} else {
			parts = append(parts, strconv.Itoa(run[0]))
		}
	}
	return strings.Join(parts, ",")
}

// StepIDs lists a rank's step ids.
func StepIDs(r *model.Rank) []int {
	ids := make([]int, len(r.Steps))
	for i, s := range r.Steps {
		ids[i] = s.ID
	}
	return ids
}

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
	if src.Unparsed {
		return nil, errkind.New(errkind.Usage, UnparsedMessage(src.Root))
	}
	if src.Parquet != "" {
		return parseExport(src)
	}
	r := model.NewRank(src.Root)
	defer counting(r, src.bytesRead)()
	r.Format = src.Format
	r.Rank = src.RankHint
	r.DirTimestamp = src.Timestamp
	if src.TraceFile != "" {
		return parseTraceFile(r, src)
	}
	switch src.Format {
	case model.FormatTorchNPUDB:
		return parseTorchDB(r, src)
	case model.FormatMsprofText, model.FormatMsprofDB:
		return parseMsprof(r, src)
	}
	return parseOutput(r, src)
}

// parseExport reads one rank of an npuprof Parquet export.
func parseExport(src Source) (*model.Rank, error) {
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
	if err := readTrace(r, src.TraceFile, src.TraceParts); err != nil {
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
	comm := &model.Rank{}
	commFile := ""
	if !src.SkipCommunication {
		commFile = findInput(out, "communication.json")
	}
	commDone := make(chan struct{})
	readComm := func() {
		defer close(commDone)
		if commFile != "" {
			readWith(comm, commFile, summary.ReadCommunication, func(c []model.CommOpInfo) { comm.Communication = c })
		}
	}
	if src.TraceParts > 1 {
		go readComm()
	}
	readTimeline(r, out, src.TraceParts)
	if src.TraceParts <= 1 {
		readComm()
	}
	<-commDone
	r.Communication = comm.Communication
	r.Warnings = append(r.Warnings, comm.Warnings...)
	if len(r.Communication) > 0 {
		r.Have.CommFile = commFile
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
func readTimeline(r *model.Rank, out string, parts int) {
	if trace := findInput(out, "trace_view.json"); trace != "" {
		if err := readTrace(r, trace, parts); err != nil {
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
	r.SortTasks()
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
	linkNote(r, path)
	f, err := openCounted(path, counterOf(r))
	if err != nil {
		r.Warn(path, "cannot open: %v", err)
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer f.Close()
	if err := fn(f); err != nil {
		r.Warn(path, "%v", err)
		return err
	}
	return nil
}

func readTrace(r *model.Rank, path string, parts int) error {
	linkNote(r, path)
	// a plain file is mapped rather than read, and read in parts at the
	// same time when CPUs are spare
	n := counterOf(r)
	if f, size, ok := openPlain(path); ok {
		defer f.Close()
		var ra io.ReaderAt = f
		if n != nil {
			ra = countedReaderAt{f, n}
		}
		if _, err := traceview.ReadFile(ra, size, path, r, parts); err != nil {
			return err
		}
		r.Have.TimelineFile = path
		noteDevice(r, path)
		return nil
	}
	f, err := openCounted(path, n)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	_, err = traceview.Read(f, path, r)
	if err != nil {
		return err
	}
	r.Have.TimelineFile = path
	noteDevice(r, path)
	return nil
}

func readMeta(r *model.Rank, root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		r.Have.GroupsNote = fmt.Sprintf("cannot list %s: %v", root, err)
		return
	}
	r.Have.GroupsNote = fmt.Sprintf("%s has no profiler_metadata.json", root)
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(root, name)
		if e.IsDir() {
			deviceFromProf(r, root, name)
			continue
		}
		switch {
		case name == "profiler_info.json" || reProfilerInfo.MatchString(name):
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

// SourceNotes returns the notes that come with the sources rather than
// from parsing them: for an npuprof Parquet export, the notes its export
// run made (missing or duplicate ranks of the original capture).
func SourceNotes(srcs []Source) ([]string, error) {
	if len(srcs) == 0 || srcs[0].Parquet == "" {
		return nil, nil
	}
	notes, err := parquetio.Notes(srcs[0].Parquet)
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	return notes, nil
}

// UniqueNotes drops repeated notes (an export read back carries the notes
// its load made; the checks that made them run again).
func UniqueNotes(notes []string) []string {
	seen := make(map[string]bool, len(notes))
	out := notes[:0]
	for _, n := range notes {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
