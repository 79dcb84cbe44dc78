package parquetio_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// roundTrip writes every rank of p and reads it back: the model must come
// back equal, field for field.
func roundTrip(t *testing.T, p *gather.Set[*model.Rank]) {
	t.Helper()
	dir := t.TempDir()
	var nodes []parquetio.NodeRank
	for _, r := range p.Ranks {
		require.NoError(t, parquetio.WriteRank(dir, r, parquetio.Extra{}))
		nodes = append(nodes, parquetio.NodeRank{ID: parquetio.RankID{Rank: r.Rank}, Groups: r.Groups})
	}
	// the groups' member ranks are in the node table, once
	require.NoError(t, parquetio.WriteNode(dir, "test", nodes))
	ranks, err := parquetio.Ranks(dir)
	require.NoError(t, err)
	require.Len(t, ranks, len(p.Ranks))
	require.True(t, parquetio.IsExport(dir))
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, r := range p.Ranks {
		got, err := parquetio.ReadRank(dir, r.Rank, parquetio.ReadOptions{})
		require.NoError(t, err)
		// the rank says it was read from the export, and where it was
		// exported from: its folder as given, absolute, and the host
		abs, err := filepath.Abs(r.Path)
		require.NoError(t, err)
		want := model.Origin{Export: dir, Path: r.Path, AbsPath: abs, Host: host}
		require.Equal(t, want, got.Origin, "rank %d", r.Rank)
		require.Equal(t, abs, got.Path, "the capture's folder, absolute")
		// exported again (from another directory): the origin is kept
		dir2 := t.TempDir()
		require.NoError(t, parquetio.WriteRank(dir2, got, parquetio.Extra{}))
		require.NoError(t, parquetio.WriteNode(dir2, "again", []parquetio.NodeRank{{ID: parquetio.RankID{Rank: got.Rank}, Groups: got.Groups}}))
		again, err := parquetio.ReadRank(dir2, r.Rank, parquetio.ReadOptions{})
		require.NoError(t, err)
		want.Export = dir2
		require.Equal(t, want, again.Origin, "rank %d exported twice", r.Rank)
		got.Path, got.Origin = r.Path, model.Origin{}
		require.Equal(t, resolve(r), resolve(got), "rank %d", r.Rank)
	}
}

// resolved is a rank with every symbol replaced by its string: ranks read
// from different files build their symbol tables in different orders, so
// they are compared by the strings their symbols stand for.
type resolved struct {
	Rank  model.Rank // without Syms, Extras, Threads, Tasks, HCCL and FrameworkOps
	Tasks []model.TaskStrings
	HCCL  []model.HCCLStrings
	Ops   []model.OpStrings
}

func resolve(r *model.Rank) resolved {
	out := resolved{Rank: *r}
	out.Rank.Syms, out.Rank.Extras, out.Rank.Threads = model.Syms{}, model.Extras{}, model.Threads{}
	out.Rank.Tasks, out.Rank.HCCL, out.Rank.FrameworkOps = nil, nil, nil
	out.Tasks, out.HCCL, out.Ops = r.Resolved()
	return out
}

// asExported checks that got, read back from the export dir, says where r
// was exported from (its folder as given, absolute, and this host) and
// then makes got comparable with r (Path as given, no Origin).
func asExported(t *testing.T, dir string, r, got *model.Rank) {
	t.Helper()
	host, err := os.Hostname()
	require.NoError(t, err)
	abs, err := filepath.Abs(r.Path)
	require.NoError(t, err)
	require.Equal(t, model.Origin{Export: dir, Path: r.Path, AbsPath: abs, Host: host}, got.Origin, "rank %d", r.Rank)
	require.Equal(t, abs, got.Path, "the capture's folder, absolute")
	got.Path, got.Origin = r.Path, model.Origin{}
}

func TestRoundTripGenerated(t *testing.T) {
	s := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	s.Ranks, s.Steps, s.CommJSON = 2, 2, true
	dir, _ := testutil.Generate(t, s)
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	r := p.Ranks[0]
	require.NotEmpty(t, r.Tasks)
	require.NotEmpty(t, r.HCCL)
	require.NotEmpty(t, r.FrameworkOps)
	require.NotEmpty(t, r.Links)
	require.NotEmpty(t, r.Steps)
	require.NotEmpty(t, r.Groups)
	require.NotEmpty(t, r.Env)
	require.NotEmpty(t, r.StepTrace)
	require.NotEmpty(t, r.Communication)
	// msprof statistics (filled here: the torch_npu text export has none)
	r.CommStats = []model.StatRow{{Name: "hcom_allReduce_", Count: 4, Total: 1234}}
	r.APIStats = []model.StatRow{{Level: "acl", Name: "aclrtSynchronizeStream", Count: 2, Total: 99}, {Level: "hccl", Name: "HcclAllReduce", Count: 1, Total: 7}}
	// a partial rank with warnings round-trips too
	r.Partial, r.PartialReason = true, "cut at byte 7"
	r.Warn("x.csv", "skipped %d rows", 3)
	r.Warnings[0].Lines = []int{4, 9}
	roundTrip(t, p)
}

// Every layout tracegen writes (msprof text with its statistics tables,
// torch_npu db) round-trips too.
func TestRoundTripLayouts(t *testing.T) {
	for _, l := range tracegen.Layouts() {
		s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
		s.Ranks, s.Steps = 2, 2
		dir := t.TempDir()
		_, err := tracegen.GenerateLayout(dir, s, l)
		require.NoError(t, err, l)
		p, err := gather.Models(context.Background(), dir, gather.Options{})
		require.NoError(t, err, l)
		require.NotEmpty(t, p.Ranks[0].Tasks, l)
		roundTrip(t, p)
	}
}

func TestRoundTripSamples(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1")
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	roundTrip(t, p)
}

// Every field of model.Rank must be exported (or deliberately left out):
// a field added to the model without a column here would be lost by
// `npuprof analyze OUTDIR`. Extend write.go/read.go and this list together.
func TestEveryRankFieldIsExported(t *testing.T) {
	handled := []string{"Rank", "Device", "Path", "Format", "DirTimestamp", "ProfilerLevel", "TorchNPUVersion", "CANNVersion",
		"Have", "Syms", "Extras", "Tasks", "HCCL", "HCCLPlane", "FrameworkOps", "Threads", "Links", "Steps", "Groups", "Env", "Metadata", "StepTrace", "Communication",
		"CommStats", "APIStats", "OpStats", "Warnings", "Partial", "PartialReason", "Origin", "OwnOverlap", "WorldSize", "WorldSizeFrom",
		// a rank of several devices is split before it is exported
		// (model.Rank.SplitDevices): every exported rank holds one
		"Devices", "PerDevice", "RankOfDevice",
		// what ReduceFramework keeps of FrameworkOps and Links: only
		// analyze reduces a rank, and export writes the ops and links;
		// the read's own state for that reduction (WillReduceEarly,
		// SetTaskLinks, SetOpSummary), which export never sets
		"launched", "early", "opTasks", "opSum"}
	sort.Strings(handled)
	var fields []string
	rt := reflect.TypeOf(model.Rank{})
	for i := 0; i < rt.NumField(); i++ {
		fields = append(fields, rt.Field(i).Name)
	}
	sort.Strings(fields)
	require.Equal(t, handled, fields, "model.Rank changed: add the new field to the Parquet export (parser/parquetio) and docs/parquet.md")
	// TaskExtra.Device and HCCLOp.Device are left out on purpose: 0 in
	// every exported rank (split by device before the export);
	// DeviceTask.Extra is seven columns, name, op_type, task_type,
	// input_shapes, model_id, stream and class (its TaskExtra in
	// Rank.Extras)
	for typ, n := range map[reflect.Type]int{
		reflect.TypeOf(model.DeviceTask{}): 3, reflect.TypeOf(model.TaskExtra{}): 8, reflect.TypeOf(model.HCCLOp{}): 8, reflect.TypeOf(model.FrameworkOp{}): 4,
		reflect.TypeOf(model.Link{}): 3, reflect.TypeOf(model.Step{}): 3, reflect.TypeOf(model.CommOpInfo{}): 10,
		// StepTraceRow.Device and StatRow.Device are left out on purpose:
		// the rank's device they give is ranks.device; NoOverlapped is
		// overlapped_us NaN
		reflect.TypeOf(model.StepTraceRow{}): 12, reflect.TypeOf(model.StatRow{}): 6,
	} {
		require.Equal(t, n, typ.NumField(), "%v changed: update the Parquet export (parser/parquetio) and docs/parquet.md", typ)
	}
}

// A rank big enough that every column of the big tables spans several
// pages (the reader fills the model page by page, at each page's row
// offset) round-trips field for field; ReadOptions.SkipCommunication
// leaves only Communication out, SkipFramework only FrameworkOps and Links.
func TestRoundTripManyPages(t *testing.T) {
	const nTasks, nHCCL, nOps = 150_000, 70_000, 80_000
	r := model.NewRank("big")
	r.Rank, r.Format = 5, model.FormatTorchNPUText
	r.Have = model.Availability{Timeline: true, HCCL: true, Framework: true}
	classes := []model.TaskClass{model.ClassCompute, model.ClassEventWait, model.ClassCommKernel, model.ClassOther}
	for i := 0; i < nTasks; i++ {
		dur := int64(i%977) + 1
		if i%1009 == 0 {
			dur += 5_000_000_000 // a duration the task cannot hold (2^31 ns and longer)
		}
		r.Tasks = append(r.Tasks, r.NewTask(int64(i)*1000, dur, model.TaskExtra{
			Name:        r.Intern(fmt.Sprintf("op_%d", i%3001)),
			OpType:      r.Intern(fmt.Sprintf("type_%d", i%97)),
			TaskType:    r.Intern([]string{"AI_CORE", "AI_VECTOR_CORE", "EVENT_WAIT"}[i%3]),
			InputShapes: r.Intern(fmt.Sprintf("%d,%d", i%13, i%7)), ModelID: uint32(i % 4),
			Stream: int32(i % 5), Class: classes[i%len(classes)]}))
	}
	for i := 0; i < nHCCL; i++ {
		// unique names: a dictionary of 70k entries
		r.HCCL = append(r.HCCL, model.HCCLOp{Start: int64(i) * 2000, Dur: int64(i%311) + 5,
			Name: r.Intern(fmt.Sprintf("hcom_allReduce__%d_%d_1", i%1000, i)), Type: r.Intern("hcom_allReduce_"),
			HashSuffix: r.Intern(fmt.Sprintf("%03d", i%1000)), Group: r.Intern("group"), Variant: r.Intern("")})
	}
	for i := 0; i < nOps; i++ {
		r.FrameworkOps = append(r.FrameworkOps, model.FrameworkOp{Start: int64(i) * 1500, Dur: int64(i%53) + 1,
			Name: r.Intern(fmt.Sprintf("aten::op%d", i%211)), Thread: r.Threads.ID(int64(i % 3))})
		if i < nTasks {
			r.Links = append(r.Links, model.Link{Op: int32(i), Task: int32(i), HCCL: -1})
		}
	}
	for i := 0; i < 40_000; i++ {
		r.Communication = append(r.Communication, model.CommOpInfo{Step: fmt.Sprintf("step%d", i%7), Kind: "collective",
			Op: fmt.Sprintf("hcom_allReduce__%d", i), GroupHash: "123", Start: int64(i) * 3, ElapseMs: float64(i) / 8,
			TransitMs: 1.5, WaitMs: float64(i % 9), SyncMs: 0.25, IdleMs: float64(i) / 3})
	}
	require.NoError(t, r.Validate())
	dir := t.TempDir()
	require.NoError(t, parquetio.WriteRank(dir, r, parquetio.Extra{}))
	for table, col := range map[string]string{parquetio.TableDeviceTasks: "start_ns", parquetio.TableHCCLOps: "name",
		parquetio.TableFrameworkOps: "tid", parquetio.TableLinks: "op", parquetio.TableCommOps: "start_ns"} {
		require.Greater(t, pageCount(t, parquetio.PartFile(dir, table, r.Rank), col), 1, "%s.%s fits one page: the test would not cover page offsets", table, col)
	}
	got, err := parquetio.ReadRank(dir, r.Rank, parquetio.ReadOptions{})
	require.NoError(t, err)
	asExported(t, dir, r, got)
	require.Equal(t, resolve(r), resolve(got))

	got, err = parquetio.ReadRank(dir, r.Rank, parquetio.ReadOptions{SkipCommunication: true})
	require.NoError(t, err)
	asExported(t, dir, r, got)
	require.Nil(t, got.Communication)
	want := *r
	want.Communication = nil
	require.Equal(t, resolve(&want), resolve(got))

	got, err = parquetio.ReadRank(dir, r.Rank, parquetio.ReadOptions{SkipFramework: true})
	require.NoError(t, err)
	asExported(t, dir, r, got)
	require.Nil(t, got.FrameworkOps)
	require.Nil(t, got.Links)
	want = *r
	want.FrameworkOps, want.Links = nil, nil
	require.Equal(t, resolve(&want), resolve(got))
}

func pageCount(t *testing.T, file, column string) int {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	pf, err := parquet.OpenFile(f, st.Size())
	require.NoError(t, err)
	leaf, ok := pf.Schema().Lookup(column)
	require.True(t, ok, column)
	n := 0
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if err != nil {
				require.ErrorIs(t, err, io.EOF)
				break
			}
			parquet.Release(p)
			n++
		}
		pages.Close()
	}
	return n
}

// The expert loads of an export are those of its manifests: one run's, or
// the same loads found by several runs; runs that found different loads
// give none, with a note naming their profile folders. A manifest before
// v1.2 says it cannot carry them.
func TestExpertsOfManifests(t *testing.T) {
	x := &model.ExpertLoads{Source: "/p/expert_hotspot", Files: []string{"/p/expert_hotspot/decode_0.csv"}, Format: model.ExpertFormatMindIEDump,
		Stage: "decode", NumExperts: 2, Layers: []model.ExpertLayer{{ID: 0, Tokens: []int64{3, 5}, RankTokens: []int64{8}}}, RankIDs: []int{0},
		Placement: &model.Deployment{Layers: []model.DeploymentLayer{{ID: 0, Devices: [][]int{{0, 1}}}}}, Config: &model.MoEGenConfig{NumExperts: 2}, Notes: []string{"n"}}
	dir := t.TempDir()
	require.NoError(t, parquetio.WriteManifest(dir, parquetio.Manifest{Source: "/p", Ranks: []int{0}, Experts: x, ExpertsNote: "expert loads read from /p/expert_hotspot"}))
	got, note, err := parquetio.Experts(dir)
	require.NoError(t, err)
	require.Equal(t, x, got)
	require.Equal(t, "expert loads read from /p/expert_hotspot", note)
	// a second run found the same loads
	require.NoError(t, parquetio.WriteManifest(dir, parquetio.Manifest{Source: "/p", Ranks: []int{1}, Experts: x, ExpertsNote: note}))
	got, _, err = parquetio.Experts(dir)
	require.NoError(t, err)
	require.Equal(t, x, got)
	// a third found others
	y := *x
	y.Layers = []model.ExpertLayer{{ID: 0, Tokens: []int64{4, 5}, RankTokens: []int64{9}}}
	require.NoError(t, parquetio.WriteManifest(dir, parquetio.Manifest{Source: "/q", Ranks: []int{2}, Experts: &y, ExpertsNote: note}))
	got, note, err = parquetio.Experts(dir)
	require.NoError(t, err)
	require.Nil(t, got)
	require.Equal(t, "the export's runs found different expert loads in their profile folders (/p, /q): none is used; give --experts PATH", note)
	// none found: nothing, no note
	dir = t.TempDir()
	require.NoError(t, parquetio.WriteManifest(dir, parquetio.Manifest{Source: "/p", Ranks: []int{0}}))
	got, note, err = parquetio.Experts(dir)
	require.NoError(t, err)
	require.Nil(t, got)
	require.Empty(t, note)
}
