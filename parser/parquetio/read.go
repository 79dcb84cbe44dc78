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
	if s == Schema || strings.HasPrefix(s, Schema+".") {
		return nil
	}
	return fmt.Errorf("%s: schema %q; this npuprof reads %s", file, s, Schema)
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

// ReadRank reads one rank of an export back into the model, exactly as it
// was exported.
func ReadRank(dir string, rank int) (*model.Rank, error) {
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
	if err := readOps(dir, rank, r); err != nil {
		return nil, err
	}
	if err := readLinks(dir, rank, r); err != nil {
		return nil, err
	}
	if err := readTable(dir, TableSteps, rank, func(s *Step) {
		r.Steps = append(r.Steps, model.Step{ID: int(s.Step), Start: s.StartNs, End: s.EndNs})
	}); err != nil {
		return nil, err
	}
	if err := readCommOps(dir, rank, r, inb); err != nil {
		return nil, err
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

// readTasks reads device_tasks column by column, filling the tasks from
// one column at a time (so only one column is held besides the tasks).
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
	short := func(k int) error {
		if k != n {
			return fmt.Errorf("%s: columns of different lengths", c.path)
		}
		return nil
	}
	for _, col := range []struct {
		name string
		set  func(t *model.DeviceTask, v int64)
	}{
		{"start_ns", func(t *model.DeviceTask, v int64) { t.Start = v }},
		{"dur_ns", func(t *model.DeviceTask, v int64) { t.Dur = v }},
		{"model_id", func(t *model.DeviceTask, v int64) { t.ModelID = uint32(v) }},
	} {
		vs, err := c.int64s(col.name)
		if err != nil {
			return err
		}
		if err := short(len(vs)); err != nil {
			return err
		}
		for i, v := range vs {
			col.set(&tasks[i], v)
		}
	}
	stream, err := c.int32s("stream")
	if err != nil {
		return err
	}
	if err := short(len(stream)); err != nil {
		return err
	}
	for i, v := range stream {
		tasks[i].Stream = v
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
		vs, err := c.syms(col.name, &r.Syms)
		if err != nil {
			return err
		}
		if err := short(len(vs)); err != nil {
			return err
		}
		for i, v := range vs {
			col.set(&tasks[i], v)
		}
	}
	classes, err := c.strs("class", in)
	if err != nil {
		return err
	}
	if err := short(len(classes)); err != nil {
		return err
	}
	for i, v := range classes {
		cl, ok := classByName[v]
		if !ok {
			return fmt.Errorf("%s: unknown task class %q", c.path, v)
		}
		tasks[i].Class = cl
	}
	r.Tasks = tasks
	return nil
}

// readHCCL reads hccl_ops column by column.
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
	start, err := c.int64s("start_ns")
	if err != nil {
		return err
	}
	dur, err := c.int64s("dur_ns")
	if err != nil {
		return err
	}
	var cols [5][]model.Sym
	for i, name := range []string{"name", "type", "hash_suffix", "group_name", "variant"} {
		if cols[i], err = c.syms(name, &r.Syms); err != nil {
			return err
		}
		if len(cols[i]) != n {
			return fmt.Errorf("%s: columns of different lengths", c.path)
		}
	}
	if len(start) != n || len(dur) != n {
		return fmt.Errorf("%s: columns of different lengths", c.path)
	}
	r.HCCL = make([]model.HCCLOp, n)
	for i := range r.HCCL {
		r.HCCL[i] = model.HCCLOp{Start: start[i], Dur: dur[i], Name: cols[0][i], Type: cols[1][i], HashSuffix: cols[2][i],
			Group: cols[3][i], Variant: cols[4][i]}
	}
	return nil
}

// readOps reads framework_ops column by column.
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
	start, err := c.int64s("start_ns")
	if err != nil {
		return err
	}
	dur, err := c.int64s("dur_ns")
	if err != nil {
		return err
	}
	tid, err := c.int64s("tid")
	if err != nil {
		return err
	}
	name, err := c.syms("name", &r.Syms)
	if err != nil {
		return err
	}
	if len(start) != n || len(dur) != n || len(tid) != n || len(name) != n {
		return fmt.Errorf("%s: columns of different lengths", c.path)
	}
	r.FrameworkOps = make([]model.FrameworkOp, n)
	for i := range r.FrameworkOps {
		r.FrameworkOps[i] = model.FrameworkOp{Start: start[i], Dur: dur[i], Name: name[i], Tid: tid[i]}
	}
	return nil
}

// readLinks reads links column by column.
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
	var cols [3][]int32
	for i, name := range []string{"op", "task", "hccl"} {
		if cols[i], err = c.int32s(name); err != nil {
			return err
		}
		if len(cols[i]) != n {
			return fmt.Errorf("%s: columns of different lengths", c.path)
		}
	}
	r.Links = make([]model.Link, n)
	for i := range r.Links {
		r.Links[i] = model.Link{Op: cols[0][i], Task: cols[1][i], HCCL: cols[2][i]}
	}
	return nil
}

// readCommOps reads comm_ops column by column.
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
	var strs [4][]string
	for i, name := range []string{"step", "kind", "op", "group_hash"} {
		if strs[i], err = c.strs(name, in); err != nil {
			return err
		}
		if len(strs[i]) != n {
			return fmt.Errorf("%s: columns of different lengths", c.path)
		}
	}
	start, err := c.int64s("start_ns")
	if err != nil {
		return err
	}
	var fs [5][]float64
	for i, name := range []string{"elapse_ms", "transit_ms", "wait_ms", "sync_ms", "idle_ms"} {
		if fs[i], err = c.float64s(name); err != nil {
			return err
		}
		if len(fs[i]) != n {
			return fmt.Errorf("%s: columns of different lengths", c.path)
		}
	}
	if len(start) != n {
		return fmt.Errorf("%s: columns of different lengths", c.path)
	}
	r.Communication = make([]model.CommOpInfo, n)
	for i := range r.Communication {
		r.Communication[i] = model.CommOpInfo{Step: strs[0][i], Kind: strs[1][i], Op: strs[2][i], GroupHash: strs[3][i], Start: start[i],
			ElapseMs: fs[0][i], TransitMs: fs[1][i], WaitMs: fs[2][i], SyncMs: fs[3][i], IdleMs: fs[4][i]}
	}
	return nil
}
