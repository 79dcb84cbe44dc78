package parquetio

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Extra is what analysis adds to a rank's export: its metrics and its
// per-step breakdown. Package parquetio does not import analysis; the
// caller converts.
type Extra struct {
	Metrics []Metric
	// DeviceFile is the file that named the rank's device, as the JSON
	// document's sources["device"] gives it ("" when unknown).
	DeviceFile string
	// Steps maps a step id to its breakdown (ns).
	Steps map[int]StepBreakdown
	// Origin, when set, is where the rank was exported from (else
	// ExportedFrom(r)).
	Origin *model.Origin
}

// StepBreakdown is the steps pass's result for one step, in ns.
// Communication, CommunicationNotOverlapped, Overlapped and Free are nil
// when the rank has no collective data (written as null).
type StepBreakdown struct {
	Window, Computing                         int64
	Communication, CommunicationNotOverlapped *int64
	Overlapped, Free                          *int64
	Tasks                                     int
}

// Version and Revision name the npuprof that wrote the export: every file's
// created_by and its npuprof.version and npuprof.revision key-value
// metadata.
var Version, Revision = "dev", "unknown"

const batch = 8192

// PartDir is OUTDIR/table/rank=N.
func PartDir(outDir, table string, rank int) string {
	return filepath.Join(outDir, table, "rank="+strconv.Itoa(rank))
}

// PartFile is the one file of a rank's partition.
func PartFile(outDir, table string, rank int) string {
	return filepath.Join(PartDir(outDir, table, rank), "part-0.parquet")
}

// writeTable writes n rows made by row(i) to the rank's partition of table.
func writeTable[T any](outDir, table string, rank, n int, row func(i int) T) error {
	return writeParquet(PartFile(outDir, table, rank), table, n, row)
}

// writeParquet writes n rows made by row(i), as table, to the file at path,
// through a temporary file beside it renamed into place.
func writeParquet[T any](path, table string, n int, row func(i int) T) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".part-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := parquet.NewGenericWriter[T](tmp,
		parquet.Compression(&parquet.Zstd),
		parquet.CreatedBy("npuprof", Version, ""),
		parquet.KeyValueMetadata("npuprof.schema", Schema),
		parquet.KeyValueMetadata("npuprof.table", table),
		parquet.KeyValueMetadata("npuprof.version", Version),
		parquet.KeyValueMetadata("npuprof.revision", Revision),
	)
	buf := make([]T, 0, max(1, min(n, batch)))
	for i := 0; i < n; i++ {
		buf = append(buf, row(i))
		if len(buf) == cap(buf) {
			if _, err := w.Write(buf); err != nil {
				tmp.Close()
				return fmt.Errorf("%s: %w", table, err)
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			tmp.Close()
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	if err := w.Close(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", table, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ExportedFrom is where the rank's files are: its path as given, made
// absolute in the current directory, and this host. A rank that was itself
// read back from an export keeps the origin recorded there.
func ExportedFrom(r *model.Rank) model.Origin {
	if r.Origin.Export != "" {
		o := r.Origin
		o.Export = ""
		return o
	}
	o := model.Origin{Path: r.Path}
	if abs, err := filepath.Abs(r.Path); err == nil {
		o.AbsPath = abs
	}
	if h, err := os.Hostname(); err == nil {
		o.Host = h
	}
	return o
}

// WriteRank writes every table of one rank (r.Rank must be set) under
// outDir. Files of the rank written before are replaced.
func WriteRank(outDir string, r *model.Rank, x Extra) error {
	if r.Rank < 0 {
		return fmt.Errorf("%s: rank unknown; cannot name its partition", r.Path)
	}
	src := ExportedFrom(r)
	if x.Origin != nil {
		src = *x.Origin
	}
	meta, err := rankRow(r, src)
	if err != nil {
		return err
	}
	meta.DeviceFile = x.DeviceFile
	if err := writeTable(outDir, TableRanks, r.Rank, 1, func(int) Rank { return meta }); err != nil {
		return err
	}
	for _, write := range [...]func(string, *model.Rank, Extra) error{writeEvents, writeSteps, writeSummaries} {
		if err := write(outDir, r, x); err != nil {
			return err
		}
	}
	return nil
}

// rankRow is the rank's one row of the ranks table.
func rankRow(r *model.Rank, src model.Origin) (Rank, error) {
	var js [5]string // groups, env, metadata, warnings, have
	// the member ranks of each group are in the groups node table, once
	// per export run: here they would grow with the cluster
	var groups []model.Group
	if r.Groups != nil {
		groups = make([]model.Group, len(r.Groups))
	}
	for i, g := range r.Groups {
		g.GlobalRanks = nil
		groups[i] = g
	}
	for i, v := range [...]any{groups, r.Env, r.Metadata, r.Warnings, r.Have} {
		b, err := json.Marshal(v)
		if err != nil {
			return Rank{}, err
		}
		js[i] = string(b)
	}
	own := ""
	if r.OwnOverlap.Slices > 0 {
		b, err := json.Marshal(r.OwnOverlap)
		if err != nil {
			return Rank{}, err
		}
		own = string(b)
	}
	return Rank{OwnOverlapJSON: own, WorldSize: int32(r.WorldSize), WorldSizeFrom: r.WorldSizeFrom, Schema: Schema, Device: int32(r.Device), Path: src.Path, AbsPath: src.AbsPath, Host: src.Host, Format: string(r.Format), DirTimestamp: r.DirTimestamp,
		ProfilerLevel: r.ProfilerLevel, TorchNPUVersion: r.TorchNPUVersion, CANNVersion: r.CANNVersion,
		HaveTimeline: r.Have.Timeline, HaveKernelDetails: r.Have.KernelDetails, HaveHCCL: r.Have.HCCL, HaveFramework: r.Have.Framework,
		TimelineFile: r.Have.TimelineFile, KernelFile: r.Have.KernelFile, Partial: r.Partial, PartialReason: r.PartialReason,
		HCCLPlaneTasks: int64(r.HCCLPlane.Tasks), HCCLPlaneSDMA: int64(r.HCCLPlane.SDMA), HCCLPlaneRDMA: int64(r.HCCLPlane.RDMA),
		GroupsJSON: js[0], EnvJSON: js[1], MetadataJSON: js[2], WarningsJSON: js[3], HaveJSON: js[4]}, nil
}

// writeEvents writes the timeline's tables: device tasks, HCCL ops,
// framework ops and their links.
func writeEvents(outDir string, r *model.Rank, _ Extra) error {
	rk := r.Rank
	if err := writeTable(outDir, TableDeviceTasks, rk, len(r.Tasks), func(i int) DeviceTask {
		t := &r.Tasks[i]
		x := r.Extra(t)
		return DeviceTask{StartNs: t.Start, DurNs: r.Dur(t), Name: r.Str(x.Name), OpType: r.Str(x.OpType), TaskType: r.Str(x.TaskType),
			InputShapes: r.Str(x.InputShapes), Stream: x.Stream, Class: x.Class.String(), ModelID: int64(x.ModelID)}
	}); err != nil {
		return err
	}
	if err := writeTable(outDir, TableHCCLOps, rk, len(r.HCCL), func(i int) HCCLOp {
		h := &r.HCCL[i]
		return HCCLOp{StartNs: h.Start, DurNs: h.Dur, Name: r.Str(h.Name), Type: r.Str(h.Type), HashSuffix: r.Str(h.HashSuffix),
			GroupName: r.Str(h.Group), Variant: r.Str(h.Variant)}
	}); err != nil {
		return err
	}
	if err := writeTable(outDir, TableFrameworkOps, rk, len(r.FrameworkOps), func(i int) FrameworkOp {
		o := &r.FrameworkOps[i]
		return FrameworkOp{StartNs: o.Start, DurNs: o.Dur, Name: r.Str(o.Name), Tid: r.Tid(o)}
	}); err != nil {
		return err
	}
	return writeTable(outDir, TableLinks, rk, len(r.Links), func(i int) Link {
		l := r.Links[i]
		return Link{Op: l.Op, Task: l.Task, HCCL: l.HCCL}
	})
}

// writeSteps writes the steps, each with its breakdown from x when the
// steps pass measured it.
func writeSteps(outDir string, r *model.Rank, x Extra) error {
	return writeTable(outDir, TableSteps, r.Rank, len(r.Steps), func(i int) Step {
		s := r.Steps[i]
		row := Step{Step: int64(s.ID), StartNs: s.Start, EndNs: s.End}
		if b, ok := x.Steps[s.ID]; ok {
			p := func(v int64) *int64 { return &v }
			row.WindowNs, row.ComputingNs, row.CommunicationNs = p(b.Window), p(b.Computing), b.Communication
			row.CommunicationNotOverlapped, row.OverlappedNs, row.FreeNs = b.CommunicationNotOverlapped, b.Overlapped, b.Free
			row.Tasks = p(int64(b.Tasks))
		}
		return row
	})
}

// writeSummaries writes what the profiler's summaries gave (comm ops, step
// trace, statistics) and the rank's metrics, sorted by name.
func writeSummaries(outDir string, r *model.Rank, x Extra) error {
	rk := r.Rank
	if err := writeTable(outDir, TableCommOps, rk, len(r.Communication), func(i int) CommOp {
		c := &r.Communication[i]
		return CommOp{Step: c.Step, Kind: c.Kind, Op: c.Op, GroupHash: c.GroupHash, StartNs: c.Start,
			ElapseMs: c.ElapseMs, TransitMs: c.TransitMs, WaitMs: c.WaitMs, SyncMs: c.SyncMs, IdleMs: c.IdleMs}
	}); err != nil {
		return err
	}
	if err := writeTable(outDir, TableStepTrace, rk, len(r.StepTrace), func(i int) StepTrace {
		s := &r.StepTrace[i]
		over := s.Overlapped
		if s.NoOverlapped {
			over = math.NaN() // not in the file (no Overlapped column): not 0
		}
		return StepTrace{Step: s.Step, Computing: s.Computing, CommunicationNotOverlapped: s.CommunicationNotOverlapped,
			Overlapped: over, Communication: s.Communication, Free: s.Free, Stage: s.Stage, Bubble: s.Bubble,
			Preparing: s.Preparing, HasPreparing: s.HasPreparing}
	}); err != nil {
		return err
	}
	stats := make([]Statistic, 0, len(r.CommStats)+len(r.APIStats)+len(r.OpStats))
	for _, k := range []struct {
		kind string
		rows []model.StatRow
	}{{StatCommunication, r.CommStats}, {StatAPI, r.APIStats}, {StatOp, r.OpStats}} {
		for _, st := range k.rows {
			stats = append(stats, Statistic{Kind: k.kind, Level: st.Level, Name: st.Name, Count: int64(st.Count), TotalNs: st.Total, MaxNs: st.Max})
		}
	}
	if err := writeTable(outDir, TableStatistics, rk, len(stats), func(i int) Statistic { return stats[i] }); err != nil {
		return err
	}
	metrics := append([]Metric(nil), x.Metrics...)
	sort.SliceStable(metrics, func(i, j int) bool { return metrics[i].Name < metrics[j].Name })
	return writeTable(outDir, TableMetrics, rk, len(metrics), func(i int) Metric { return metrics[i] })
}

// WriteManifest records one export run in OUTDIR/_npuprof.
func WriteManifest(outDir string, m Manifest) error {
	m.Schema = Schema
	if m.Notes == nil {
		m.Notes = []string{}
	}
	sort.Ints(m.Ranks)
	name := "export.json"
	if len(m.Ranks) > 0 {
		name = fmt.Sprintf("export-%d-%d.json", m.Ranks[0], m.Ranks[len(m.Ranks)-1])
	}
	dir := filepath.Join(outDir, ManifestDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	// through a temporary name: a stopped export never leaves half a
	// manifest
	return writeAtomic(filepath.Join(dir, name), append(b, '\n'))
}
