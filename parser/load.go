package parser

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/parser/model"
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
}

// Options tune Load.
type Options struct {
	// Workers bounds how many ranks are parsed at once (0 = GOMAXPROCS).
	Workers int
	// Progress, when set, is called after each rank is parsed.
	Progress func(done, total int, path string)
}

// Load detects and parses every rank under path. A rank that fails to
// parse is reported by its path; Load fails only when no rank could be read.
func Load(ctx context.Context, path string, opts Options) (*Profile, error) {
	srcs, err := Detect(path)
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > len(srcs) {
		workers = len(srcs)
	}
	ranks := make([]*model.Rank, len(srcs))
	errs := make([]error, len(srcs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ranks[i], errs[i] = ParseRank(srcs[i])
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(srcs), srcs[i].Root)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range srcs {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p := &Profile{Path: path}
	var failed []string
	for i, r := range ranks {
		if errs[i] != nil {
			failed = append(failed, errs[i].Error())
			p.Notes = append(p.Notes, fmt.Sprintf("rank folder %s could not be read: %v", srcs[i].Root, errs[i]))
			continue
		}
		p.Ranks = append(p.Ranks, r)
	}
	if len(p.Ranks) == 0 {
		return nil, &UsageError{strings.Join(failed, "; ")}
	}
	assignRanks(p, srcs)
	return p, nil
}

// assignRanks fills unknown ranks, drops duplicates (keeping the newest
// folder, as msprof-analyze does) and notes missing ranks and step sets.
func assignRanks(p *Profile, srcs []Source) {
	used := map[int]bool{}
	for _, r := range p.Ranks {
		if r.Rank >= 0 {
			used[r.Rank] = true
		}
	}
	nextFree := 0
	for _, r := range p.Ranks {
		if r.Rank < 0 {
			if len(p.Ranks) == 1 {
				r.Rank = 0
				p.Notes = append(p.Notes, fmt.Sprintf("%s: rank unknown (no profiler_info_{rank}.json); reported as rank 0", r.Path))
				continue
			}
			for used[nextFree] {
				nextFree++
			}
			r.Rank = nextFree
			used[nextFree] = true
			p.Notes = append(p.Notes, fmt.Sprintf("%s: rank unknown; assigned rank %d by folder order", r.Path, r.Rank))
		}
	}
	sort.SliceStable(p.Ranks, func(i, j int) bool {
		if p.Ranks[i].Rank != p.Ranks[j].Rank {
			return p.Ranks[i].Rank < p.Ranks[j].Rank
		}
		return p.Ranks[i].DirTimestamp > p.Ranks[j].DirTimestamp
	})
	kept := p.Ranks[:0]
	for i, r := range p.Ranks {
		if i > 0 && p.Ranks[i-1].Rank == r.Rank {
			p.Notes = append(p.Notes, fmt.Sprintf("rank %d appears twice; kept the newest folder %s, ignored %s", r.Rank, kept[len(kept)-1].Path, r.Path))
			continue
		}
		kept = append(kept, r)
	}
	p.Ranks = kept
	if n := len(p.Ranks); n > 1 {
		max := p.Ranks[n-1].Rank
		if max+1 != n {
			var missing []string
			have := map[int]bool{}
			for _, r := range p.Ranks {
				have[r.Rank] = true
			}
			for i := 0; i <= max && len(missing) < 20; i++ {
				if !have[i] {
					missing = append(missing, fmt.Sprint(i))
				}
			}
			if len(missing) > 0 {
				p.Notes = append(p.Notes, "missing ranks: "+strings.Join(missing, ", "))
			}
		}
		stepSet := func(r *model.Rank) string {
			ids := make([]string, len(r.Steps))
			for i, s := range r.Steps {
				ids[i] = fmt.Sprint(s.ID)
			}
			return strings.Join(ids, ",")
		}
		first := stepSet(p.Ranks[0])
		for _, r := range p.Ranks[1:] {
			if s := stepSet(r); s != first {
				p.Notes = append(p.Notes, fmt.Sprintf("rank %d has steps [%s], rank %d has [%s]", r.Rank, s, p.Ranks[0].Rank, first))
			}
		}
	}
}

var reTraceName = regexp.MustCompile(`^(trace_view|msprof(_slice_\d+)?_?\d*)\.json(\.gz)?$`)

// ParseRank reads one rank's files into the model.
func ParseRank(src Source) (*model.Rank, error) {
	r := model.NewRank(src.Root)
	r.Format = src.Format
	r.Rank = src.RankHint
	r.DirTimestamp = src.Timestamp
	if src.TraceFile != "" {
		if err := readTrace(r, src.TraceFile); err != nil {
			return nil, err
		}
		finish(r)
		return r, r.Validate()
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
		r.Warn(out, "missing: torch_npu wrote no %s (its own parsing failed or was skipped); timeline metrics are unavailable", profilerOutput)
		finish(r)
		return r, r.Validate()
	}
	if p := filepath.Join(out, "trace_view.json"); exists(p) {
		if err := readTrace(r, p); err != nil {
			return nil, err
		}
	} else if p := p + ".gz"; exists(p) {
		if err := readTrace(r, p); err != nil {
			return nil, err
		}
	}
	if p := filepath.Join(out, "kernel_details.csv"); exists(p) {
		readKernels(r, p)
	}
	if p := filepath.Join(out, "step_trace_time.csv"); exists(p) {
		withFile(r, p, func(f io.Reader) error {
			rows, issues, err := summary.ReadStepTraceTime(f, p)
			if w := issues.Warning(p); w != nil {
				r.Warnings = append(r.Warnings, *w)
			}
			r.StepTrace = rows
			return err
		})
	}
	if p := filepath.Join(out, "communication.json"); exists(p) {
		withFile(r, p, func(f io.Reader) error {
			c, err := summary.ReadCommunication(f, p)
			r.Communication = c
			return err
		})
	}
	if !r.Have.Timeline && !r.Have.KernelDetails {
		r.Warn(out, "no trace_view.json and no kernel_details.csv: nothing to measure")
	}
	finish(r)
	return r, r.Validate()
}

// finish resolves HCCL groups and orders the model.
func finish(r *model.Rank) {
	for i := range r.HCCL {
		h := &r.HCCL[i]
		if h.HashSuffix == "" || h.Group != "" {
			continue
		}
		if g := r.GroupByHashSuffix(h.HashSuffix); g != nil {
			h.Group = g.Name
		}
	}
	r.SortTasks()
}

func withFile(r *model.Rank, path string, fn func(io.Reader) error) {
	f, err := os.Open(path)
	if err != nil {
		r.Warn(path, "cannot open: %v", err)
		return
	}
	defer f.Close()
	if err := fn(bufio.NewReaderSize(f, 1<<16)); err != nil {
		r.Warn(path, "%v", err)
	}
}

func readTrace(r *model.Rank, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	var rd io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: not gzip: %w", path, err)
		}
		defer gz.Close()
		rd = gz
	}
	_, err = traceview.Read(rd, path, r)
	if err != nil {
		return err
	}
	r.Have.TimelineFile = path
	return nil
}

func readMeta(r *model.Rank, root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(root, name)
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
			withFile(r, p, func(f io.Reader) error {
				md, err := summary.ReadProfilerMetadata(f, p)
				if err != nil {
					return err
				}
				r.Env, r.Groups, r.Metadata = md.Env, md.Groups, md.Other
				return nil
			})
		}
	}
}

type taskKey struct {
	start int64
	name  string
}

// readKernels joins kernel_details rows onto the timeline (op type, core,
// shapes) or, with no timeline, builds compute tasks and HCCL ops from them.
func readKernels(r *model.Rank, path string) {
	haveTimeline := r.Have.Timeline
	// collectives come from the rows unless the timeline already holds
	// them (trace_view / msprof json; task_time has no big ops)
	hcclFromRows := !r.Have.HCCL
	var byKey map[taskKey]int
	if haveTimeline {
		byKey = make(map[taskKey]int, len(r.Tasks))
		for i := range r.Tasks {
			if r.Tasks[i].Class == model.ClassCompute {
				byKey[taskKey{r.Tasks[i].Start, r.Tasks[i].Name}] = i
			}
		}
	}
	rows := 0
	withFile(r, path, func(f io.Reader) error {
		issues, err := summary.ReadKernelDetails(f, path, func(k *summary.KernelRow) {
			rows++
			if hcclFromRows && k.IsCollective() {
				name := k.Name
				r.HCCL = append(r.HCCL, model.HCCLOp{Start: k.Start, Dur: k.Dur, Name: name,
					Type: model.HCCLTypeFromName(name), HashSuffix: model.HCCLHashSuffix(name), Variant: model.HCCLVariant(name)})
				return
			}
			if haveTimeline {
				if i, ok := byKey[taskKey{k.Start, k.Name}]; ok {
					t := &r.Tasks[i]
					if k.Type != "" {
						t.OpType = k.Type
					}
					if k.InputShapes != "" {
						t.InputShapes = k.InputShapes
					}
				}
				return
			}
			if k.IsCollective() {
				return
			}
			opType := k.Type
			if opType == "" {
				opType = model.OpTypeFromName(k.Name)
			}
			r.Tasks = append(r.Tasks, model.DeviceTask{Start: k.Start, Dur: k.Dur, Name: k.Name, OpType: opType,
				TaskType: k.Core, InputShapes: k.InputShapes, Stream: k.Stream, Class: model.ClassifyTask(k.Core, k.Name), ModelID: 4294967295})
		})
		if w := issues.Warning(path); w != nil {
			r.Warnings = append(r.Warnings, *w)
		}
		return err
	})
	r.Have.KernelDetails = true
	r.Have.KernelFile = path
	if hcclFromRows {
		r.Have.HCCL = true
	}
	_ = rows
}
