package gather

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/inputs/expertload"
	"github.com/npuprof/npuprof/internal/parser"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
)

// Exports lists the npuprof export folders that paths name, in order,
// each once: a path is an export folder, a glob of them (expanded here
// when the shell did not), or a folder whose subfolders are exports (one
// per node, copied side by side). ok is false when a path names anything
// else (a capture, a document, nothing): the paths are then not a merge
// of exports.
func Exports(paths []string) (dirs []string, ok bool) {
	seen := map[string]bool{}
	add := func(d string) {
		if c := filepath.Clean(d); !seen[c] {
			seen[c] = true
			dirs = append(dirs, d)
		}
	}
	for _, p := range paths {
		matches := []string{p}
		if _, err := os.Stat(p); err != nil && strings.ContainsAny(p, "*?[") {
			matches, _ = filepath.Glob(p)
			slices.Sort(matches)
		}
		if len(matches) == 0 {
			return nil, false
		}
		for _, m := range matches {
			if parquetio.IsExport(m) {
				add(m)
				continue
			}
			subs := exportsIn(m)
			if len(subs) == 0 {
				return nil, false
			}
			for _, s := range subs {
				add(s)
			}
		}
	}
	return dirs, len(dirs) > 0
}

// exportsIn lists the subfolders of dir that are exports when every
// subfolder that holds anything of a profile is one (a folder of exports,
// not a capture beside an export); nil otherwise.
func exportsIn(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if !parquetio.IsExport(sub) {
			return nil
		}
		out = append(out, sub)
	}
	return out
}

// Mergeable reports whether every export of dirs holds node tables (v2):
// they are merged without reading a per-rank table.
func Mergeable(dirs []string) bool {
	for _, d := range dirs {
		if !parquetio.HasNodeTables(d) {
			return false
		}
	}
	return len(dirs) > 0
}

// Merge gathers the ranks of the exports dirs from their node tables
// (parquetio.ReadNodes; no device task is read): each rank's state goes to
// decode, at most Workers at once, and the ranks of every export are
// reconciled together as Ranks reconciles a capture's (numbers,
// duplicates, missing ranks, step sets), with the notes the exports'
// runs made on their inputs and the expert loads they carry (or
// Options.Experts). A rank whose state cannot be decoded is a note; none
// read at all is an error.
func Merge[T any](ctx context.Context, dirs []string, opts Options, decode func(parquetio.NodeState) (T, error), number func(item T, rank int)) (*Set[T], error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var notes, failed []string
	var readIDs []rankID
	var readItems []T
	done, total := 0, 0
	// export by export: one export's encoded states are held at once,
	// each dropped once decoded
	for _, d := range dirs {
		ranks, _ := parquetio.Ranks(d)
		if err := parquetio.CheckRuns(d, ranks); err != nil {
			return nil, errkind.Wrap(errkind.Usage, err)
		}
		ns, err := parquetio.ReadNodes(d)
		if err != nil {
			return nil, errkind.Wrap(errkind.Usage, err)
		}
		n, err := parquetio.Notes(d)
		if err != nil {
			return nil, errkind.Wrap(errkind.Usage, err)
		}
		for _, x := range n {
			if !isSetNote(x) {
				notes = append(notes, x)
			}
		}
		total += len(ns)
		items, errs := decodeAll(ctx, ns, opts, decode, func(p string) {
			if opts.Progress != nil {
				done++
				opts.Progress(done, total, p)
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i, st := range ns {
			if errs[i] != nil {
				failed = append(failed, fmt.Sprintf("rank %d of %s could not be read: %v", st.ID.Rank, st.Export, errs[i]))
				continue
			}
			readIDs = append(readIDs, fromIdentity(st.ID))
			readItems = append(readItems, items[i])
		}
	}
	if len(readItems) == 0 {
		if len(failed) == 0 {
			return nil, errkind.Errorf(errkind.Usage, "%s: no rank in the exports' node tables", strings.Join(dirs, ", "))
		}
		return nil, errkind.New(errkind.Usage, strings.Join(failed, "; "))
	}
	s := &Set[T]{Path: strings.Join(dirs, ", ")}
	s.keep(readItems, readIDs, number, append(notes, failed...))
	var err error
	if s.Experts, s.ExpertsNote, err = mergeExperts(dirs, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeAll decodes the states ns, at most opts.Workers at once, each
// state's bytes dropped once decoded; progress is called (under a lock)
// after each.
func decodeAll[T any](ctx context.Context, ns []parquetio.NodeState, opts Options, decode func(parquetio.NodeState) (T, error), progress func(path string)) ([]T, []error) {
	items := make([]T, len(ns))
	errs := make([]error, len(ns))
	var mu sync.Mutex
	inPool(ctx, len(ns), workerCount(opts, len(ns)), func(i int) {
		items[i], errs[i] = decode(ns[i])
		ns[i].State = nil
		mu.Lock()
		progress(ns[i].Export)
		mu.Unlock()
	})
	return items, errs
}

// mergeExperts is the expert-load input of merged exports: --experts, else
// the loads the exports carry when they agree.
func mergeExperts(dirs []string, opts Options) (*model.ExpertLoads, string, error) {
	if opts.Experts != "" {
		x, note, err := expertload.ForProfile("", opts.Experts, expertload.Options{Stage: opts.ExpertStage})
		if err != nil {
			return nil, "", errkind.Wrap(errkind.Usage, err)
		}
		return x, note, nil
	}
	type found struct {
		x    *model.ExpertLoads
		note string
	}
	var got []found
	var from []string
	for _, d := range dirs {
		x, note, err := exportExperts([]parser.Source{{Parquet: d}}, opts.ExpertStage)
		if err != nil {
			return nil, "", errkind.Wrap(errkind.Usage, err)
		}
		if x == nil && note == "" {
			continue
		}
		got = append(got, found{x, note})
		from = append(from, d)
	}
	if len(got) == 0 {
		return nil, "", nil
	}
	for _, g := range got[1:] {
		if g.note != got[0].note || !reflect.DeepEqual(g.x, got[0].x) {
			sort.Strings(from)
			return nil, fmt.Sprintf("the exports carry different expert loads (%s): none is used; give --experts PATH", strings.Join(from, ", ")), nil
		}
	}
	return got[0].x, got[0].note, nil
}
