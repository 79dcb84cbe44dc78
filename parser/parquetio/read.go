package parquetio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/npuprof/npuprof/parser/model"
)

// IsExport reports whether dir is an npuprof Parquet export (it has a
// ranks/rank=N partition or an _npuprof manifest).
func IsExport(dir string) bool {
	if st, err := os.Stat(filepath.Join(dir, ManifestDir)); err == nil && st.IsDir() {
		return true
	}
	ranks, _ := Ranks(dir)
	return len(ranks) > 0
}

// Ranks lists the ranks of an export, ascending: the rank=N partitions of
// the ranks table that hold a file.
func Ranks(dir string) ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(dir, TableRanks))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		v, ok := strings.CutPrefix(e.Name(), "rank=")
		if !e.IsDir() || !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			continue
		}
		if _, err := os.Stat(PartFile(dir, TableRanks, n)); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Notes returns the notes of every export manifest in dir, in file-name
// order, each once.
func Notes(dir string) ([]string, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, ManifestDir, "export*.json"))
	sort.Strings(paths)
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var m Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: not an npuprof export manifest: %w", p, err)
		}
		if err := checkSchema(p, m.Schema); err != nil {
			return nil, err
		}
		for _, n := range m.Notes {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func checkSchema(file, s string) error {
	if s == SchemaMajor || strings.HasPrefix(s, SchemaMajor+".") {
		return nil
	}
	return fmt.Errorf("%s: schema %q; this npuprof reads %s and %s.N", file, s, SchemaMajor, SchemaMajor)
}

// readTable calls fn for every row of the rank's partition of table. A
// missing file is an error naming it.
func readTable[T any](dir, table string, rank int, fn func(*T)) error {
	p := PartFile(dir, table, rank)
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("%s: %w (an incomplete export? run npuprof export again)", p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return fmt.Errorf("%s: not a Parquet file: %w", p, err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	buf := make([]T, min(batch, max(1, int(pf.NumRows()))))
	for {
		n, err := r.Read(buf)
		for i := 0; i < n; i++ {
			fn(&buf[i])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if n == 0 {
			return nil
		}
	}
}

var classByName = func() map[string]model.TaskClass {
	m := map[string]model.TaskClass{}
	for c := model.TaskClass(0); c < 64; c++ {
		s := c.String()
		if strings.HasPrefix(s, "class(") {
			break
		}
		m[s] = c
	}
	return m
}()

// ReadOptions tunes ReadRank.
type ReadOptions struct {
	// SkipCommunication leaves comm_ops unread (Rank.Communication empty),
	// as parser.Options.SkipCommunication leaves communication.json unread:
	// no analysis pass reads it.
	SkipCommunication bool
	// SkipFramework leaves framework_ops and links unread
	// (Rank.FrameworkOps and Rank.Links empty): no analysis pass reads
	// them either.
	SkipFramework bool
}

// ReadRank reads one rank of an export back into the model, exactly as it
// was exported (without what opts skips).
func ReadRank(dir string, rank int, opts ReadOptions) (*model.Rank, error) {
	r := model.NewRank("")
	r.Rank = rank
	var meta Rank
	n := 0
	if err := readTable(dir, TableRanks, rank, func(x *Rank) { meta = *x; n++ }); err != nil {
		return nil, err
	}
	file := PartFile(dir, TableRanks, rank)
	if n != 1 {
		return nil, fmt.Errorf("%s: %d rows, expected one", file, n)
	}
	if err := checkSchema(file, meta.Schema); err != nil {
		return nil, err
	}
	r.Device, r.Path, r.Format, r.DirTimestamp = int(meta.Device), meta.Path, model.Format(meta.Format), meta.DirTimestamp
	// The rank says it was read from the export; its Path (quoted by the
	// reasons of unavailable metrics) is the capture's folder made
	// absolute at export time, which means the same from any directory.
	r.Origin = model.Origin{Export: dir, Path: meta.Path, AbsPath: meta.AbsPath, Host: meta.Host}
	if meta.AbsPath != "" {
		r.Path = meta.AbsPath
	}
	r.ProfilerLevel, r.TorchNPUVersion, r.CANNVersion = meta.ProfilerLevel, meta.TorchNPUVersion, meta.CANNVersion
	r.Have = model.Availability{Timeline: meta.HaveTimeline, KernelDetails: meta.HaveKernelDetails, HCCL: meta.HaveHCCL,
		Framework: meta.HaveFramework, TimelineFile: meta.TimelineFile, KernelFile: meta.KernelFile}
	r.Partial, r.PartialReason = meta.Partial, meta.PartialReason
	for _, j := range []struct {
		text string
		dst  any
		col  string
	}{{meta.HaveJSON, &r.Have, "have_json"}, {meta.GroupsJSON, &r.Groups, "groups_json"}, {meta.EnvJSON, &r.Env, "env_json"},
		{meta.MetadataJSON, &r.Metadata, "metadata_json"}, {meta.WarningsJSON, &r.Warnings, "warnings_json"}} {
		if err := json.Unmarshal([]byte(j.text), j.dst); err != nil {
			return nil, fmt.Errorf("%s: column %s: %w", file, j.col, err)
		}
	}
	// every name is kept once, as the trace reader does (the names of
	// tasks, HCCL ops and framework ops go to the rank's symbol table)
	names := map[string]string{}
	in := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	inb := func(b []byte) string {
		if v, ok := names[string(b)]; ok {
			return v
		}
		s := string(b)
		names[s] = s
		return s
	}
	if err := readTasks(dir, rank, r, inb); err != nil {
		return nil, err
	}
	if err := readHCCL(dir, rank, r); err != nil {
		return nil, err
	}
	if !opts.SkipFramework {
		if err := readOps(dir, rank, r); err != nil {
			return nil, err
		}
		if err := readLinks(dir, rank, r); err != nil {
			return nil, err
		}
	}
	if err := readTable(dir, TableSteps, rank, func(s *Step) {
		r.Steps = append(r.Steps, model.Step{ID: int(s.Step), Start: s.StartNs, End: s.EndNs})
	}); err != nil {
		return nil, err
	}
	if !opts.SkipCommunication {
		if err := readCommOps(dir, rank, r, inb); err != nil {
			return nil, err
		}
	}
	if err := readTable(dir, TableStepTrace, rank, func(s *StepTrace) {
		r.StepTrace = append(r.StepTrace, model.StepTraceRow{Step: s.Step, Computing: s.Computing, CommunicationNotOverlapped: s.CommunicationNotOverlapped,
			Overlapped: s.Overlapped, Communication: s.Communication, Free: s.Free, Stage: s.Stage, Bubble: s.Bubble,
			Preparing: s.Preparing, HasPreparing: s.HasPreparing})
	}); err != nil {
		return nil, err
	}
	if err := readTable(dir, TableStatistics, rank, func(st *Statistic) {
		row := model.StatRow{Level: in(st.Level), Name: in(st.Name), Count: int(st.Count), Total: st.TotalNs}
		switch st.Kind {
		case StatCommunication:
			r.CommStats = append(r.CommStats, row)
		case StatAPI:
			r.APIStats = append(r.APIStats, row)
		}
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// into adapts a per-row setter to a column reader's page callback: the
// values of a page starting at row off go into rows[off:].
func into[R, V any](rows []R, set func(*R, V)) func(off int, vs []V) {
	return func(off int, vs []V) {
		for i, v := range vs {
			set(&rows[off+i], v)
		}
	}
}

// readTasks reads device_tasks column by column, page by page, straight
// into the tasks.
func readTasks(dir string, rank int, r *model.Rank, in func([]byte) string) error {
	c, err := openCols(dir, TableDeviceTasks, rank)
	if err != nil {
		return err
	}
	defer c.Close()
	n := c.rows()
	if n == 0 {
		return nil
	}
	tasks := make([]model.DeviceTask, n)
	if err := c.int64s("start_ns", into(tasks, func(x *model.DeviceTask, v int64) { x.Start = v })); err != nil {
		return err
	}
	if err := c.int64s("dur_ns", into(tasks, func(x *model.DeviceTask, v int64) { x.Dur = v })); err != nil {
		return err
	}
	if err := c.int64s("model_id", into(tasks, func(x *model.DeviceTask, v int64) { x.ModelID = uint32(v) })); err != nil {
		return err
	}
	if err := c.int32s("stream", into(tasks, func(x *model.DeviceTask, v int32) { x.Stream = v })); err != nil {
		return err
	}
	for _, col := range []struct {
		name string
		set  func(t *model.DeviceTask, v model.Sym)
	}{
		{"name", func(t *model.DeviceTask, v model.Sym) { t.Name = v }},
		{"op_type", func(t *model.DeviceTask, v model.Sym) { t.OpType = v }},
		{"task_type", func(t *model.DeviceTask, v model.Sym) { t.TaskType = v }},
		{"input_shapes", func(t *model.DeviceTask, v model.Sym) { t.InputShapes = v }},
	} {
		if err := c.syms(col.name, &r.Syms, into(tasks, col.set)); err != nil {
			return err
		}
	}
	var bad string
	if err := c.strs("class", in, func(off int, vs []string) {
		for i, v := range vs {
			cl, ok := classByName[v]
			if !ok && bad == "" {
				bad = v
			}
			tasks[off+i].Class = cl
		}
	}); err != nil {
		return err
	}
	if bad != "" {
		return fmt.Errorf("%s: unknown task class %q", c.path, bad)
	}
	r.Tasks = tasks
	return nil
}

// readHCCL reads hccl_ops column by column, page by page.
func readHCCL(dir string, rank int, r *model.Rank) error {
	c, err := openCols(dir, TableHCCLOps, rank)
	if err != nil {
		return err
	}
	defer c.Close()
	n := c.rows()
	if n == 0 {
		return nil
	}
	ops := make([]model.HCCLOp, n)
	if err := c.int64s("start_ns", into(ops, func(x *model.HCCLOp, v int64) { x.Start = v })); err != nil {
		return err
	}
	if err := c.int64s("dur_ns", into(ops, func(x *model.HCCLOp, v int64) { x.Dur = v })); err != nil {
		return err
	}
	for _, col := range []struct {
		name string
		set  func(o *model.HCCLOp, v model.Sym)
	}{
		{"name", func(o *model.HCCLOp, v model.Sym) { o.Name = v }},
		{"type", func(o *model.HCCLOp, v model.Sym) { o.Type = v }},
		{"hash_suffix", func(o *model.HCCLOp, v model.Sym) { o.HashSuffix = v }},
		{"group_name", func(o *model.HCCLOp, v model.Sym) { o.Group = v }},
		{"variant", func(o *model.HCCLOp, v model.Sym) { o.Variant = v }},
	} {
		if err := c.syms(col.name, &r.Syms, into(ops, col.set)); err != nil {
			return err
		}
	}
	r.HCCL = ops
	return nil
}

// readOps reads framework_ops column by column, page by page.
func readOps(dir string, rank int, r *model.Rank) error {
	c, err := openCols(dir, TableFrameworkOps, rank)
	if err != nil {
		return err
	}
	defer c.Close()
	n := c.rows()
	if n == 0 {
		return nil
	}
	ops := make([]model.FrameworkOp, n)
	for _, col := range []struct {
		name string
		set  func(o *model.FrameworkOp, v int64)
	}{
		{"start_ns", func(o *model.FrameworkOp, v int64) { o.Start = v }},
		{"dur_ns", func(o *model.FrameworkOp, v int64) { o.Dur = v }},
		{"tid", func(o *model.FrameworkOp, v int64) { o.Tid = v }},
	} {
		if err := c.int64s(col.name, into(ops, col.set)); err != nil {
			return err
		}
	}
	if err := c.syms("name", &r.Syms, into(ops, func(x *model.FrameworkOp, v model.Sym) { x.Name = v })); err != nil {
		return err
	}
	r.FrameworkOps = ops
	return nil
}

// readLinks reads links column by column, page by page.
func readLinks(dir string, rank int, r *model.Rank) error {
	c, err := openCols(dir, TableLinks, rank)
	if err != nil {
		return err
	}
	defer c.Close()
	n := c.rows()
	if n == 0 {
		return nil
	}
	links := make([]model.Link, n)
	for _, col := range []struct {
		name string
		set  func(l *model.Link, v int32)
	}{
		{"op", func(l *model.Link, v int32) { l.Op = v }},
		{"task", func(l *model.Link, v int32) { l.Task = v }},
		{"hccl", func(l *model.Link, v int32) { l.HCCL = v }},
	} {
		if err := c.int32s(col.name, into(links, col.set)); err != nil {
			return err
		}
	}
	r.Links = links
	return nil
}

// readCommOps reads comm_ops column by column, page by page.
func readCommOps(dir string, rank int, r *model.Rank, in func([]byte) string) error {
	c, err := openCols(dir, TableCommOps, rank)
	if err != nil {
		return err
	}
	defer c.Close()
	n := c.rows()
	if n == 0 {
		return nil
	}
	ops := make([]model.CommOpInfo, n)
	for _, col := range []struct {
		name string
		set  func(o *model.CommOpInfo, v string)
	}{
		{"step", func(o *model.CommOpInfo, v string) { o.Step = v }},
		{"kind", func(o *model.CommOpInfo, v string) { o.Kind = v }},
		{"op", func(o *model.CommOpInfo, v string) { o.Op = v }},
		{"group_hash", func(o *model.CommOpInfo, v string) { o.GroupHash = v }},
	} {
		if err := c.strs(col.name, in, into(ops, col.set)); err != nil {
			return err
		}
	}
	if err := c.int64s("start_ns", into(ops, func(x *model.CommOpInfo, v int64) { x.Start = v })); err != nil {
		return err
	}
	for _, col := range []struct {
		name string
		set  func(o *model.CommOpInfo, v float64)
	}{
		{"elapse_ms", func(o *model.CommOpInfo, v float64) { o.ElapseMs = v }},
		{"transit_ms", func(o *model.CommOpInfo, v float64) { o.TransitMs = v }},
		{"wait_ms", func(o *model.CommOpInfo, v float64) { o.WaitMs = v }},
		{"sync_ms", func(o *model.CommOpInfo, v float64) { o.SyncMs = v }},
		{"idle_ms", func(o *model.CommOpInfo, v float64) { o.IdleMs = v }},
	} {
		if err := c.float64s(col.name, into(ops, col.set)); err != nil {
			return err
		}
	}
	r.Communication = ops
	return nil
}
