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

	"github.com/npuprof/npuprof/internal/errkind"
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
	p := &Profile{Path: path, Notes: notes}
	var failed []string
	var internal error
	for i, r := range ranks {
		if errs[i] != nil {
			failed = append(failed, errs[i].Error())
			if errkind.Is(errs[i], errkind.Internal) {
				p.Internal = append(p.Internal, errs[i].Error())
				if internal == nil {
					internal = errs[i]
				}
				continue
			}
			p.Notes = append(p.Notes, fmt.Sprintf("rank folder %s could not be read: %v", srcs[i].Root, errs[i]))
			continue
		}
		p.Ranks = append(p.Ranks, r)
	}
	if len(p.Ranks) == 0 {
		if internal != nil {
			return nil, internal
		}
		return nil, errkind.New(errkind.Usage, strings.Join(failed, "; "))
	}
	assignRanks(p, srcs)
	x, note, err := expertload.ForProfile(path, opts.Experts, expertload.Options{Stage: opts.ExpertStage})
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	if note != "" {
		p.Notes = append(p.Notes, note)
	}
	p.Experts = x
	p.Notes = uniqueNotes(p.Notes)
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
}

// Reconcile fills unknown ranks (folder order), keeps the newest of
// duplicate ranks (the newest folder timestamp, as msprof-analyze does),
// and notes missing ranks and ranks whose step sets differ. It returns the
// rank number of every input, whether to keep it, and the notes; nothing
// here is fatal.
func Reconcile(ids []RankID) (ranks []int, keep []bool, notes []string) {
	n := len(ids)
	ranks = make([]int, n)
	keep = make([]bool, n)
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
			notes = append(notes, fmt.Sprintf("%s: rank unknown (no profiler_info_{rank}.json, RANK_DEVICE_MAP or info.json rank_id); reported as rank 0", id.Path))
			continue
		}
		for used[nextFree] {
			nextFree++
		}
		ranks[i] = nextFree
		used[nextFree] = true
		notes = append(notes, fmt.Sprintf("%s: rank unknown; assigned rank %d by folder order", id.Path, nextFree))
	}
	order := make([]int, n)
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
	var kept []int
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
	if len(kept) > 1 {
		maxRank := ranks[kept[len(kept)-1]]
		if maxRank+1 != len(kept) {
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
			if total > 0 {
				more := ""
				if total > len(missing) {
					more = fmt.Sprintf(" and %d more", total-len(missing))
				}
				notes = append(notes, fmt.Sprintf("missing ranks: %s%s (found %d of %d ranks 0..%d); the cluster analysis covers the ranks present", strings.Join(missing, ", "), more, len(kept), maxRank+1, maxRank))
			}
		}
		// different step sets: group ranks by their set
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
		if len(keys) > 1 {
			sort.SliceStable(keys, func(a, b int) bool { return len(sets[keys[a]]) > len(sets[keys[b]]) })
			parts := make([]string, len(keys))
			for k, key := range keys {
				if key == "" {
					key = "none"
				}
				parts[k] = fmt.Sprintf("ranks %s have steps [%s]", rankRange(sets[keys[k]]), key)
			}
			notes = append(notes, "ranks have different step sets: "+strings.Join(parts, "; ")+"; per-step comparisons use the ranks that have each step")
		}
	}
	return ranks, keep, notes
}

// rankRange prints ranks compactly: 0-3,5,7-8.
func rankRange(r []int) string {
	s := append([]int(nil), r...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		} else {
			parts = append(parts, strconv.Itoa(s[i]))
		}
		i = j + 1
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

// assignRanks applies Reconcile to the parsed ranks of p.
func assignRanks(p *Profile, _ []Source) {
	ids := make([]RankID, len(p.Ranks))
	for i, r := range p.Ranks {
		ids[i] = RankID{Rank: r.Rank, Path: r.Path, DirTimestamp: r.DirTimestamp, Steps: StepIDs(r)}
	}
	ranks, keep, notes := Reconcile(ids)
	var kept []*model.Rank
	for i, r := range p.Ranks {
		r.Rank = ranks[i]
		if keep[i] {
			kept = append(kept, r)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Rank < kept[j].Rank })
	p.Ranks = kept
	p.Notes = append(p.Notes, notes...)
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
	r := model.NewRank(src.Root)
	r.Format = src.Format
	r.Rank = src.RankHint
	r.DirTimestamp = src.Timestamp
	if src.TraceFile != "" {
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
	switch src.Format {
	case model.FormatTorchNPUDB:
		return parseTorchDB(r, src)
	case model.FormatMsprofText, model.FormatMsprofDB:
		return parseMsprof(r, src)
	}
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
			withFile(comm, commFile, func(f io.Reader) error {
				c, err := summary.ReadCommunication(f, commFile)
				comm.Communication = c
				return err
			})
		}
	}
	if src.TraceParts > 1 {
		go readComm()
	}
	// A trace_view.json that is empty, unreadable or not a trace leaves the
	// rank without a timeline (said in warnings and `unavailable`); the
	// other files are still measured.
	if trace := findInput(out, "trace_view.json"); trace != "" {
		if err := readTrace(r, trace, src.TraceParts); err != nil {
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

// withFile opens path and runs fn on it; a problem becomes a warning on
// the rank and is returned so callers can record what it makes unavailable.
func withFile(r *model.Rank, path string, fn func(io.Reader) error) error {
	linkNote(r, path)
	f, err := openInput(path)
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
	if f, size, ok := openPlain(path); ok {
		defer f.Close()
		if _, err := traceview.ReadFile(f, size, path, r, parts); err != nil {
			return err
		}
		r.Have.TimelineFile = path
		noteDevice(r, path)
		return nil
	}
	f, err := openInput(path)
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
	return uniqueNotes(notes)
}

// uniqueNotes drops repeated notes (an export read back carries the notes
// its load made; the checks that made them run again).
func uniqueNotes(notes []string) []string {
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
