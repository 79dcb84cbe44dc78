package parquetio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/parser/internal/intern"
	"github.com/npuprof/npuprof/internal/parser/model"
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
	slices.Sort(out)
	return out, nil
}

// manifestIn is a manifest as the reader needs it, the expert loads left
// as JSON text until they are used: decoding into Manifest builds the
// decoders of every expert-load type, which costs a fresh process more
// than the rest of reading the manifest (~0.3 M instructions).
type manifestIn = manifestOf[json.RawMessage]

// manifests reads every export manifest in dir, in file-name order.
func manifests(dir string) ([]manifestIn, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, ManifestDir, "export*.json"))
	slices.Sort(paths)
	out := make([]manifestIn, 0, len(paths))
	for _, p := range paths {
		b, err := infile.ReadFile(p, infile.Document, infile.Opts{Root: dir})
		if err != nil {
			return nil, err
		}
		var m manifestIn
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: not an npuprof export manifest: %w", p, err)
		}
		if err := checkSchema(p, m.Schema); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Notes returns the notes of every export manifest in dir, in file-name
// order, each once.
func Notes(dir string) ([]string, error) {
	ms, err := manifests(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		for _, n := range m.Notes {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// Experts returns the expert loads the export carries (found in the
// profile folder when it was exported) and the note that came with them:
// what was read, or why it could not be. An export written by several runs
// whose profile folders held different loads carries none of them (the
// note says so); one written before v1.2 carries none, and the note says
// that it cannot.
func Experts(dir string) (*model.ExpertLoads, string, error) {
	ms, err := manifests(dir)
	if err != nil {
		return nil, "", err
	}
	var x *model.ExpertLoads
	var note string
	var from, old []string
	for _, m := range ms {
		if schemaMinor(m.Schema) < 2 {
			old = append(old, m.Source)
		}
		var mx *model.ExpertLoads
		if len(m.Experts) > 0 {
			if err := json.Unmarshal(m.Experts, &mx); err != nil {
				return nil, "", fmt.Errorf("%s: the expert loads of an export manifest: %w", filepath.Join(dir, ManifestDir), err)
			}
		}
		if mx == nil && m.ExpertsNote == "" {
			continue
		}
		differ := len(from) > 0 && (note != m.ExpertsNote || !reflect.DeepEqual(x, mx))
		if !slices.Contains(from, m.Source) {
			from = append(from, m.Source)
		}
		if differ {
			return nil, fmt.Sprintf("the export's runs found different expert loads in their profile folders (%s): none is used; give --experts PATH",
				strings.Join(from, ", ")), nil
		}
		x, note = mx, m.ExpertsNote
	}
	if x == nil && note == "" && len(old) > 0 {
		note = fmt.Sprintf("this export (written before %s.2) does not carry the expert loads of the profile folder it was exported from (%s), if it had any: give --experts PATH",
			SchemaV1, strings.Join(old, ", "))
	}
	if x != nil {
		if err := x.Validate(); err != nil {
			return nil, "", fmt.Errorf("%s: the expert loads of the export manifest: %w", filepath.Join(dir, ManifestDir), err)
		}
	}
	return x, note, nil
}

// schemaVersion is (N, M) of npuprof.parquet/vN.M, M 0 for
// npuprof.parquet/vN (a schema checkSchema accepted).
func schemaVersion(s string) (major, minor int) {
	v, _ := strings.CutPrefix(s, "npuprof.parquet/v")
	a, b, _ := strings.Cut(v, ".")
	major, _ = strconv.Atoi(a)
	minor, _ = strconv.Atoi(b)
	return major, minor
}

// schemaMinor is M of npuprof.parquet/v1.M; every later major version
// counts as past all of v1's.
func schemaMinor(s string) int {
	if major, minor := schemaVersion(s); major == 1 {
		return minor
	}
	return 1 << 20
}

// schemaMajor is N of npuprof.parquet/vN.M.
func schemaMajor(s string) int {
	major, _ := schemaVersion(s)
	return major
}

func checkSchema(file, s string) error {
	for _, known := range []string{SchemaV1, SchemaMajor} {
		if s == known || strings.HasPrefix(s, known+".") {
			return nil
		}
	}
	return fmt.Errorf("%s: schema %q; this npuprof reads %s, %s and their minor versions (.N)", file, s, SchemaV1, SchemaMajor)
}

// readTable calls fn for every row of the rank's partition of table. A
// missing file is an error naming it.
func readTable[T any](dir, table string, rank int, fn func(*T)) error {
	return readFile(dir, PartFile(dir, table, rank), fn)
}

// readFile calls fn for every row of the export file p under dir.
func readFile[T any](dir, p string, fn func(*T)) error {
	if err := infile.Check(p, infile.Opts{Root: dir}); err != nil && errkindOf(err) {
		return err
	}
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
	// as parser.Source.SkipCommunication leaves communication.json unread:
	// no analysis pass reads it.
	SkipCommunication bool
	// SkipFramework leaves framework_ops and links unread
	// (Rank.FrameworkOps and Rank.Links empty); the ledger and workload
	// passes read what model.Rank.ReduceFramework keeps of them.
	SkipFramework bool
}

// ReadRank reads one rank of an export back into the model, exactly as it
// was exported (without what opts skips).
func ReadRank(dir string, rank int, opts ReadOptions) (*model.Rank, error) {
	r := model.NewRank("")
	r.Rank = rank
	if err := readMeta(dir, rank, r); err != nil {
		return nil, err
	}
	// every name is kept once, as the trace reader does (the names of
	// tasks, HCCL ops and framework ops go to the rank's symbol table)
	var in intern.Strings
	if err := readTasks(dir, rank, r, &in); err != nil {
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
	if !opts.SkipCommunication || r.NeedsCommOps() {
		if err := readCommOps(dir, rank, r, &in); err != nil {
			return nil, err
		}
	} else {
		leftCommUnread(r)
	}
	if err := readTable(dir, TableStepTrace, rank, func(s *StepTrace) {
		row := model.StepTraceRow{Step: s.Step, Computing: s.Computing, CommunicationNotOverlapped: s.CommunicationNotOverlapped,
			Overlapped: s.Overlapped, Communication: s.Communication, Free: s.Free, Stage: s.Stage, Bubble: s.Bubble,
			Preparing: s.Preparing, HasPreparing: s.HasPreparing}
		if math.IsNaN(row.Overlapped) {
			// written NaN: the file had no Overlapped value
			row.Overlapped, row.NoOverlapped = 0, true
		}
		r.StepTrace = append(r.StepTrace, row)
	}); err != nil {
		return nil, err
	}
	return r, readStatistics(dir, rank, r, &in)
}

// leftCommUnread makes a rank whose comm_ops are left unread what the
// parser gives when it leaves communication.json unread: no CommFile, and
// none of the warnings that reading it gave (npuprof export reads it, to
// write comm_ops; analyze of the capture never sees them).
func leftCommUnread(r *model.Rank) {
	r.Have.CommFile = ""
	r.Warnings = slices.DeleteFunc(r.Warnings, func(w model.Warning) bool {
		return filepath.Base(w.File) == "communication.json"
	})
}

// readMeta reads the rank's one row of the ranks table into r.
func readMeta(dir string, rank int, r *model.Rank) error {
	var meta Rank
	n := 0
	if err := readTable(dir, TableRanks, rank, func(x *Rank) { meta = *x; n++ }); err != nil {
		return err
	}
	file := PartFile(dir, TableRanks, rank)
	if n != 1 {
		return fmt.Errorf("%s: %d rows, expected one", file, n)
	}
	if err := checkSchema(file, meta.Schema); err != nil {
		return err
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
	r.HCCLPlane = model.PlaneTasks{Tasks: int(meta.HCCLPlaneTasks), SDMA: int(meta.HCCLPlaneSDMA), RDMA: int(meta.HCCLPlaneRDMA)}
	for _, j := range []struct {
		text string
		dst  any
		col  string
	}{{meta.HaveJSON, &r.Have, "have_json"}, {meta.GroupsJSON, &r.Groups, "groups_json"}, {meta.EnvJSON, &r.Env, "env_json"},
		{meta.MetadataJSON, &r.Metadata, "metadata_json"}, {meta.WarningsJSON, &r.Warnings, "warnings_json"}} {
		if err := json.Unmarshal([]byte(j.text), j.dst); err != nil {
			return fmt.Errorf("%s: column %s: %w", file, j.col, err)
		}
	}
	if schemaMajor(meta.Schema) >= 2 {
		// the member ranks are in the groups node table, once
		if err := fillMembers(dir, r.Groups); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	r.WorldSize, r.WorldSizeFrom = int(meta.WorldSize), meta.WorldSizeFrom
	if meta.OwnOverlapJSON != "" {
		if err := json.Unmarshal([]byte(meta.OwnOverlapJSON), &r.OwnOverlap); err != nil {
			return fmt.Errorf("%s: column own_overlap_json: %w", file, err)
		}
	}
	if r.Device >= 0 && r.Have.DeviceFile == "" && !strings.Contains(meta.HaveJSON, `"DeviceFile"`) {
		r.Have.DeviceNote = fmt.Sprintf("the source of device %d: not recorded by this export (%s, written before exports recorded which file named the device)", r.Device, meta.Schema)
	}
	return nil
}

// readStatistics reads the statistics table into the rank's three
// statistics lists.
func readStatistics(dir string, rank int, r *model.Rank, in *intern.Strings) error {
	return readTable(dir, TableStatistics, rank, func(st *Statistic) {
		row := model.StatRow{Level: in.Intern([]byte(st.Level)), Name: in.Intern([]byte(st.Name)), Count: int(st.Count), Total: st.TotalNs, Max: st.MaxNs}
		switch st.Kind {
		case StatCommunication:
			r.CommStats = append(r.CommStats, row)
		case StatAPI:
			r.APIStats = append(r.APIStats, row)
		case StatOp:
			r.OpStats = append(r.OpStats, row)
		}
	})
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

// column reads one column of a table into its rows.
type column[R any] func(c *colFile, rows []R) error

// num is an INT32, INT64 or DOUBLE column, each value given to set.
func num[R any, V number](name string, set func(*R, V)) column[R] {
	return func(c *colFile, rows []R) error { return numbers(c, name, into(rows, set)) }
}

// sym is a string column turned into symbols of t.
func sym[R any](t *model.Syms, name string, set func(*R, model.Sym)) column[R] {
	return func(c *colFile, rows []R) error { return byteArrays(c, name, t.InternBytes, into(rows, set)) }
}

// str is a string column, each distinct value kept once (in).
func str[R any](in *intern.Strings, name string, set func(*R, string)) column[R] {
	return func(c *colFile, rows []R) error { return byteArrays(c, name, in.Intern, into(rows, set)) }
}

// readRows opens one rank's part of a table, makes one row per record and
// reads the columns into them, column by column, page by page; an empty
// part gives no rows.
func readRows[R any](dir, table string, rank int, cols ...column[R]) ([]R, error) {
	c, err := openCols(dir, table, rank)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	n := c.rows()
	if n == 0 {
		return nil, nil
	}
	rows := make([]R, n)
	for _, col := range cols {
		if err := col(c, rows); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// taskClass is device_tasks' class column: a class name, unknown names an
// error.
func taskClass(r *model.Rank, in *intern.Strings) column[model.DeviceTask] {
	return func(c *colFile, tasks []model.DeviceTask) error {
		var bad string
		if err := byteArrays(c, "class", in.Intern, func(off int, vs []string) {
			for i, v := range vs {
				cl, ok := classByName[v]
				if !ok && bad == "" {
					bad = v
				}
				setExtra(r, &tasks[off+i], func(e *model.TaskExtra) { e.Class = cl })
			}
		}); err != nil {
			return err
		}
		if bad != "" {
			return fmt.Errorf("%s: unknown task class %q", c.path, bad)
		}
		return nil
	}
}

// readTasks reads device_tasks straight into the tasks.
func readTasks(dir string, rank int, r *model.Rank, in *intern.Strings) (err error) {
	type T = model.DeviceTask
	r.Tasks, err = readRows(dir, TableDeviceTasks, rank,
		num("start_ns", func(x *T, v int64) { x.Start = v }),
		num("dur_ns", func(x *T, v int64) { r.SetDur(x, v) }),
		num("model_id", func(x *T, v int64) { setExtra(r, x, func(e *model.TaskExtra) { e.ModelID = uint32(v) }) }),
		num("stream", func(x *T, v int32) { setExtra(r, x, func(e *model.TaskExtra) { e.Stream = v }) }),
		sym(&r.Syms, "name", func(x *T, v model.Sym) { setExtra(r, x, func(e *model.TaskExtra) { e.Name = v }) }),
		sym(&r.Syms, "op_type", func(x *T, v model.Sym) { setExtra(r, x, func(e *model.TaskExtra) { e.OpType = v }) }),
		sym(&r.Syms, "task_type", func(x *T, v model.Sym) { setExtra(r, x, func(e *model.TaskExtra) { e.TaskType = v }) }),
		sym(&r.Syms, "input_shapes", func(x *T, v model.Sym) { setExtra(r, x, func(e *model.TaskExtra) { e.InputShapes = v }) }),
		taskClass(r, in))
	r.CompactExtras()
	return err
}

// setExtra changes one field of task t's extras (the columns are read
// one after another).
func setExtra(r *model.Rank, t *model.DeviceTask, set func(*model.TaskExtra)) {
	e := r.Extra(t)
	set(&e)
	r.SetExtra(t, e)
}

// readHCCL reads hccl_ops.
// kept: one line per column, data rather than logic
func readHCCL(dir string, rank int, r *model.Rank) (err error) {
	type O = model.HCCLOp
	r.HCCL, err = readRows(dir, TableHCCLOps, rank,
		num("start_ns", func(x *O, v int64) { x.Start = v }),
		num("dur_ns", func(x *O, v int64) { x.Dur = v }),
		sym(&r.Syms, "name", func(x *O, v model.Sym) { x.Name = v }),
		sym(&r.Syms, "type", func(x *O, v model.Sym) { x.Type = v }),
		sym(&r.Syms, "hash_suffix", func(x *O, v model.Sym) { x.HashSuffix = v }),
		sym(&r.Syms, "group_name", func(x *O, v model.Sym) { x.Group = v }),
		sym(&r.Syms, "variant", func(x *O, v model.Sym) { x.Variant = v }))
	return err
}

// readOps reads framework_ops.
// kept: one line per column, data rather than logic
func readOps(dir string, rank int, r *model.Rank) (err error) {
	type O = model.FrameworkOp
	r.FrameworkOps, err = readRows(dir, TableFrameworkOps, rank,
		num("start_ns", func(x *O, v int64) { x.Start = v }),
		num("dur_ns", func(x *O, v int64) { x.Dur = v }),
		num("tid", func(x *O, v int64) { x.Thread = r.Threads.ID(v) }),
		sym(&r.Syms, "name", func(x *O, v model.Sym) { x.Name = v }))
	return err
}

// readLinks reads links.
// kept: one line per column, data rather than logic
func readLinks(dir string, rank int, r *model.Rank) (err error) {
	type L = model.Link
	r.Links, err = readRows(dir, TableLinks, rank,
		num("op", func(x *L, v int32) { x.Op = v }),
		num("task", func(x *L, v int32) { x.Task = v }),
		num("hccl", func(x *L, v int32) { x.HCCL = v }))
	return err
}

// readCommOps reads comm_ops.
func readCommOps(dir string, rank int, r *model.Rank, in *intern.Strings) (err error) {
	type O = model.CommOpInfo
	r.Communication, err = readRows(dir, TableCommOps, rank,
		str(in, "step", func(x *O, v string) { x.Step = v }),
		str(in, "kind", func(x *O, v string) { x.Kind = v }),
		str(in, "op", func(x *O, v string) { x.Op = v }),
		str(in, "group_hash", func(x *O, v string) { x.GroupHash = v }),
		num("start_ns", func(x *O, v int64) { x.Start = v }),
		num("elapse_ms", func(x *O, v float64) { x.ElapseMs = v }),
		num("transit_ms", func(x *O, v float64) { x.TransitMs = v }),
		num("wait_ms", func(x *O, v float64) { x.WaitMs = v }),
		num("sync_ms", func(x *O, v float64) { x.SyncMs = v }),
		num("idle_ms", func(x *O, v float64) { x.IdleMs = v }))
	return err
}
