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

// rowCount returns the number of rows of the rank's partition of table.
func rowCount(dir, table string, rank int) int {
	f, err := os.Open(PartFile(dir, table, rank))
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0
	}
	return int(pf.NumRows())
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
	// every name is kept once, as the trace reader does
	names := map[string]string{}
	in := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	var bad error
	if k := rowCount(dir, TableDeviceTasks, rank); k > 0 {
		r.Tasks = make([]model.DeviceTask, 0, k)
	}
	if err := readTable(dir, TableDeviceTasks, rank, func(t *DeviceTask) {
		c, ok := classByName[t.Class]
		if !ok && bad == nil {
			bad = fmt.Errorf("%s: unknown task class %q", PartFile(dir, TableDeviceTasks, rank), t.Class)
		}
		r.Tasks = append(r.Tasks, model.DeviceTask{Start: t.StartNs, Dur: t.DurNs, Name: in(t.Name), OpType: in(t.OpType),
			TaskType: in(t.TaskType), InputShapes: in(t.InputShapes), Stream: t.Stream, Class: c, ModelID: uint32(t.ModelID)})
	}); err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	if err := readTable(dir, TableHCCLOps, rank, func(h *HCCLOp) {
		r.HCCL = append(r.HCCL, model.HCCLOp{Start: h.StartNs, Dur: h.DurNs, Name: in(h.Name), Type: in(h.Type),
			HashSuffix: in(h.HashSuffix), Group: in(h.GroupName), Variant: in(h.Variant)})
	}); err != nil {
		return nil, err
	}
	if k := rowCount(dir, TableFrameworkOps, rank); k > 0 {
		r.FrameworkOps = make([]model.FrameworkOp, 0, k)
	}
	if err := readTable(dir, TableFrameworkOps, rank, func(o *FrameworkOp) {
		r.FrameworkOps = append(r.FrameworkOps, model.FrameworkOp{Start: o.StartNs, Dur: o.DurNs, Name: in(o.Name), Tid: o.Tid})
	}); err != nil {
		return nil, err
	}
	if err := readTable(dir, TableLinks, rank, func(l *Link) {
		r.Links = append(r.Links, model.Link{Op: l.Op, Task: l.Task, HCCL: l.HCCL})
	}); err != nil {
		return nil, err
	}
	if err := readTable(dir, TableSteps, rank, func(s *Step) {
		r.Steps = append(r.Steps, model.Step{ID: int(s.Step), Start: s.StartNs, End: s.EndNs})
	}); err != nil {
		return nil, err
	}
	if err := readTable(dir, TableCommOps, rank, func(c *CommOp) {
		r.Communication = append(r.Communication, model.CommOpInfo{Step: in(c.Step), Kind: in(c.Kind), Op: in(c.Op), GroupHash: in(c.GroupHash),
			Start: c.StartNs, ElapseMs: c.ElapseMs, TransitMs: c.TransitMs, WaitMs: c.WaitMs, SyncMs: c.SyncMs, IdleMs: c.IdleMs})
	}); err != nil {
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
