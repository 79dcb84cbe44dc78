// Package gather gathers the ranks of a profile, for `npuprof analyze`,
// `npuprof export` and the tests alike: Ranks detects the ranks under a
// path (parser.Detect), reads each one (parser.ParseRank), at most Workers
// at once, and hands its model to the caller's step in the worker that
// read it; then it sifts out the ranks that could not be read, numbers and
// deduplicates the rest (reconcile), and says what it found in notes. It
// finds the profile's expert loads too. It imports no analysis, so the
// analysis's own tests gather their ranks here as well (Models).
package gather

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/inputs/expertload"
	"github.com/npuprof/npuprof/internal/parser"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
)

// Options tune Ranks.
type Options struct {
	// Workers bounds how many ranks are read (and handed to the caller's
	// step) at once (0 = GOMAXPROCS).
	Workers int
	// Progress, when set, is called after each rank.
	Progress func(done, total int, path string)
	// BytesRead, when set, counts the bytes read from the ranks' text and
	// trace files while they are read (a compressed file counts what is
	// read from disk; databases and Parquet exports are not counted).
	BytesRead *atomic.Int64
	// BytesTotal, when set, is given, before any rank is read, the size of
	// the text and trace files the readers count in BytesRead (textBytes).
	BytesTotal *atomic.Int64
	// SkipCommunication leaves communication.json unread (Rank.Communication
	// empty): no analysis pass reads it, only `npuprof export` keeps it.
	SkipCommunication bool
	// SkipFramework leaves an npuprof Parquet export's framework_ops and
	// links unread (Rank.FrameworkOps and Rank.Links empty); the ledger and
	// workload passes read what model.Rank.ReduceFramework keeps of them.
	SkipFramework bool
	// ReduceFramework has each trace's framework ops and links reduced
	// as soon as it is read (parser.Source.ReduceFramework): analyze.
	ReduceFramework bool
	// Experts names an expert-load input (file or folder, see
	// internal/inputs/expertload); empty: look for one inside the profile folder,
	// else take the loads a Parquet export carries. ExpertStage picks
	// decode or prefill dumps ("" prefers decode).
	Experts, ExpertStage string
	// AbsExpertPaths names the expert loads found in the profile folder by
	// absolute paths (an export's manifest: it is read elsewhere).
	AbsExpertPaths bool
	// Begin, when set, runs once the ranks are detected, before any is
	// read (export makes its output folder there); its error is returned.
	Begin func() error
}

// Set is every rank gathered under one path.
type Set[T any] struct {
	Path string
	// Ranks are what the caller's step made of each rank kept, in rank
	// order.
	Ranks []T
	// Notes are what the input says about itself, never fatal: the notes
	// a Parquet export carries, the rank folders that could not be read,
	// the ranks numbered by folder order and the duplicates left out.
	Notes []string
	// SetNotes are about the ranks gathered together (missing ranks,
	// ranks whose step sets differ): made again whenever they are
	// gathered, so an export never records them (each node's export holds
	// only its own ranks).
	SetNotes []string
	// World is the world size the ranks state (model.Rank.World: the
	// largest), 0 when none does; WorldFrom says where. Missing lists the
	// ranks of that world that were not gathered (set notes name them).
	World     int
	WorldFrom string
	Missing   []int
	// Internal lists reader bugs (recovered panics, broken model
	// invariants), one message per rank; such a rank is left out and the
	// CLI exits 3 after writing its output.
	Internal []string
	// Experts is the per-expert load input (Options.Experts, MindIE dumps
	// or a layer,expert,tokens CSV found inside the profile folder, or the
	// loads a Parquet export carries), nil when there is none; ExpertsNote
	// says what was read, or why not.
	Experts     *model.ExpertLoads
	ExpertsNote string
}

// AllNotes are the set's notes and set notes, each once; the note that
// names the ranks missing from the world comes first.
func (s *Set[T]) AllNotes() []string {
	var first, rest []string
	for _, n := range s.SetNotes {
		if isWorldNote(n) {
			first = append(first, n)
		} else {
			rest = append(rest, n)
		}
	}
	return uniqueNotes(append(append(first, s.Notes...), rest...))
}

// Ranks gathers the ranks under path: each rank's model goes to each, in
// the worker that read it (so at most Workers models are alive at once
// when each drops them), and what each returns is kept; an error from each
// counts as the rank's, as a reader's does. Of the ranks read, reconcile
// says which are kept and their numbers; number gives each kept item its
// rank number. A rank that could not be read is a note, a reader bug goes
// to Set.Internal, and no rank read at all is an error.
func Ranks[T any](ctx context.Context, path string, opts Options, each func(*model.Rank) (T, error), number func(item T, rank int)) (*Set[T], error) {
	srcs, err := parser.Detect(path)
	if err != nil {
		return nil, err
	}
	// an --experts input the analysis cannot use fails before the ranks
	// are read
	xpath := path
	if opts.AbsExpertPaths {
		if xpath, err = filepath.Abs(path); err != nil {
			return nil, err
		}
	}
	x, xnote, err := expertload.ForProfile(xpath, opts.Experts, expertload.Options{Stage: opts.ExpertStage})
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	if opts.Begin != nil {
		if err := opts.Begin(); err != nil {
			return nil, err
		}
	}
	if opts.BytesTotal != nil {
		var total int64
		for _, src := range srcs {
			total += textBytes(src, opts.SkipCommunication)
		}
		opts.BytesTotal.Store(total)
	}
	// a source is one rank, or one of each device its files hold
	// (model.Rank.SplitDevices)
	items := make([][]T, len(srcs))
	errs := make([]error, len(srcs))
	ids := make([][]rankID, len(srcs))
	if err := walk(ctx, srcs, opts, func(i int, r *model.Rank, err error) {
		if err != nil {
			errs[i] = err
			return
		}
		rs := []*model.Rank{r}
		if split := r.SplitDevices(); split != nil {
			rs = split
		}
		for _, r := range rs {
			id := idOf(r)
			it, err := each(r)
			if err != nil {
				errs[i] = err
				return
			}
			ids[i], items[i] = append(ids[i], id), append(items[i], it)
		}
	}); err != nil {
		return nil, err
	}
	notes, err := sourceNotes(srcs)
	if err != nil {
		return nil, err
	}
	read, failed, internal, err := sift(srcs, errs)
	if err != nil {
		return nil, err
	}
	s := &Set[T]{Path: path, Internal: internal}
	var readIDs []rankID
	var readItems []T
	for _, i := range read {
		readIDs, readItems = append(readIDs, ids[i]...), append(readItems, items[i]...)
	}
	s.keep(readItems, readIDs, number, append(notes, failed...))
	if x == nil && xnote == "" && opts.Experts == "" {
		if x, xnote, err = exportExperts(srcs, opts.ExpertStage); err != nil {
			return nil, err
		}
	}
	s.Experts, s.ExpertsNote = x, xnote
	return s, nil
}

// Models gathers the ranks under path keeping each rank's model whole:
// for the tests and tools that read the model (Ranks bounds memory).
func Models(ctx context.Context, path string, opts Options) (*Set[*model.Rank], error) {
	return Ranks(ctx, path, opts,
		func(r *model.Rank) (*model.Rank, error) { return r, nil },
		func(r *model.Rank, rank int) { r.Rank = rank })
}

// walk reads srcs with at most opts.Workers ranks in flight (0 =
// GOMAXPROCS) and calls fn from the worker that read source i, so work
// done in fn (analysis) runs in the same slot. Progress is called after
// each fn.
func walk(ctx context.Context, srcs []parser.Source, opts Options, fn func(i int, r *model.Rank, err error)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	workers := workerCount(opts, len(srcs))
	// CPUs the ranks in flight leave idle read a rank's trace in parts
	parts := runtime.GOMAXPROCS(0) / max(workers, 1)
	var mu sync.Mutex
	done := 0
	inPool(ctx, len(srcs), workers, func(i int) {
		src := srcs[i]
		if src.TraceParts == 0 {
			src.TraceParts = parts
		}
		src.SkipCommunication = src.SkipCommunication || opts.SkipCommunication
		src.SkipFramework = src.SkipFramework || opts.SkipFramework
		src.ReduceFramework = src.ReduceFramework || opts.ReduceFramework
		src.BytesRead = opts.BytesRead
		r, err := parser.ParseRank(src)
		fn(i, r, err)
		if opts.Progress != nil {
			mu.Lock()
			done++
			opts.Progress(done, len(srcs), srcs[i].Root)
			mu.Unlock()
		}
	})
	return ctx.Err()
}

// workerCount is opts.Workers (0 = GOMAXPROCS), at most n.
func workerCount(opts Options, n int) int {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return min(workers, n)
}

// inPool calls fn(i) for every i in [0, n) from workers goroutines, handing
// out no more once ctx is done, and returns when the calls made have
// returned.
func inPool(ctx context.Context, n, workers int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
}

// sift sorts the outcome of reading srcs (errs[i] is source i's error):
// the indexes of the sources read, a note for each source that could not
// be read, and the message of each reader bug (errkind.Internal, never
// blamed on the input). With no source read, err is the first reader bug,
// or else a usage error listing every failure.
func sift(srcs []parser.Source, errs []error) (read []int, notes, internal []string, err error) {
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

// keep sets s's ranks to those of items kept (keepRanks), with the world
// their ids state and the ranks of it missing, and s's notes to notes
// and keepRanks'.
func (s *Set[T]) keep(items []T, ids []rankID, number func(item T, rank int), notes []string) {
	var kept []string
	var keptRanks []int
	s.Ranks, keptRanks, kept, s.SetNotes = keepRanks(items, ids, number)
	s.World, s.WorldFrom = expectedWorld(ids)
	idx := make([]int, len(keptRanks))
	for i := range idx {
		idx[i] = i
	}
	s.Missing = missingInWorld(s.World, keptRanks, idx)
	s.Notes = uniqueNotes(append(notes, kept...))
}

// keepRanks numbers and deduplicates the ranks read (items[i], whose identity
// is ids[i]) with reconcile: number gives each kept item its rank number,
// and the kept items come back in rank order, with reconcile's notes.
func keepRanks[T any](items []T, ids []rankID, number func(item T, rank int)) (kept []T, keptRanks []int, notes, setNotes []string) {
	ranks, keep, notes, setNotes := reconcile(ids)
	type ranked struct {
		item T
		rank int
	}
	var out []ranked
	for i, it := range items {
		if keep[i] {
			number(it, ranks[i])
			out = append(out, ranked{it, ranks[i]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rank < out[j].rank })
	kept = make([]T, len(out))
	keptRanks = make([]int, len(out))
	for i, k := range out {
		kept[i], keptRanks[i] = k.item, k.rank
	}
	return kept, keptRanks, notes, setNotes
}

// sourceNotes returns the notes that come with the sources rather than
// from reading them: for an npuprof Parquet export, the notes its export
// runs made about their input. Set notes an older export recorded are
// left out: they are made again over every rank the export holds.
func sourceNotes(srcs []parser.Source) ([]string, error) {
	if len(srcs) == 0 || srcs[0].Parquet == "" {
		return nil, nil
	}
	notes, err := parquetio.Notes(srcs[0].Parquet)
	if err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	out := notes[:0]
	for _, n := range notes {
		if !isSetNote(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// exportExperts is the expert-load input of a Parquet export gathered
// without --experts: the loads it carries (found in the profile folder it
// was exported from), and the note that says what was read or why not.
// Other profiles have none here (their folder was searched already).
func exportExperts(srcs []parser.Source, stage string) (*model.ExpertLoads, string, error) {
	if len(srcs) == 0 || srcs[0].Parquet == "" {
		return nil, "", nil
	}
	x, note, err := parquetio.Experts(srcs[0].Parquet)
	if err != nil {
		return nil, "", err
	}
	if x != nil && stage != "" && x.Stage != stage {
		return nil, fmt.Sprintf("the export carries the %s expert loads of %s, not --stage %s: give --experts PATH", x.Stage, x.Source, stage), nil
	}
	return x, note, nil
}

// uniqueNotes drops repeated notes (an export read back carries the notes
// its export made; the checks that made them run again).
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

// textBytes is the size on disk of the files of src that the readers
// count in BytesRead: a named trace file, or the torch_npu export's
// trace_view.json, kernel_details.csv, step_trace_time.csv and (unless
// skipped) communication.json, compressed or not, or an msprof folder's
// mindstudio_profiler_output files. Databases and Parquet exports count
// none, as BytesRead does not.
func textBytes(src parser.Source, skipComm bool) int64 {
	size := func(p string) int64 {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
		return 0
	}
	switch {
	case src.DB != "" || src.Parquet != "":
		return 0
	case src.TraceFile != "":
		return size(src.TraceFile)
	}
	var n int64
	if ents, err := os.ReadDir(src.Root); err == nil { // the rank's own files
		for _, e := range ents {
			if !e.IsDir() && (strings.HasPrefix(e.Name(), "profiler_info") || strings.HasPrefix(e.Name(), "profiler_metadata")) {
				n += size(filepath.Join(src.Root, e.Name()))
			}
		}
	}
	read := []string{"trace_view.json", "kernel_details.csv", "step_trace_time.csv"}
	if !skipComm {
		read = append(read, "communication.json")
	}
	dirs := []string{src.Output}
	if src.Output == "" && src.Prof != "" {
		dirs = []string{filepath.Join(src.Prof, "mindstudio_profiler_output")}
		read = nil // every file of msprof's output folder
	}
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			for _, r := range read {
				if strings.HasPrefix(e.Name(), r) {
					n += size(filepath.Join(d, e.Name()))
				}
			}
			if read == nil {
				n += size(filepath.Join(d, e.Name()))
			}
		}
	}
	return n
}
