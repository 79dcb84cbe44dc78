package parquetio_test

import (
	"context"
	"reflect"
	"sort"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/parser"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/parquetio"
	"github.com/stretchr/testify/require"
)

// roundTrip writes every rank of p and reads it back: the model must come
// back equal, field for field.
func roundTrip(t *testing.T, p *parser.Profile) {
	t.Helper()
	dir := t.TempDir()
	for _, r := range p.Ranks {
		require.NoError(t, parquetio.WriteRank(dir, r, parquetio.Extra{}))
	}
	ranks, err := parquetio.Ranks(dir)
	require.NoError(t, err)
	require.Len(t, ranks, len(p.Ranks))
	require.True(t, parquetio.IsExport(dir))
	for _, r := range p.Ranks {
		got, err := parquetio.ReadRank(dir, r.Rank)
		require.NoError(t, err)
		require.Equal(t, resolve(r), resolve(got), "rank %d", r.Rank)
	}
}

// resolved is a rank with every symbol replaced by its string: ranks read
// from different files build their symbol tables in different orders, so
// they are compared by the strings their symbols stand for.
type resolved struct {
	Rank  model.Rank // without Syms, Tasks, HCCL and FrameworkOps
	Tasks []model.TaskStrings
	HCCL  []model.HCCLStrings
	Ops   []model.OpStrings
}

func resolve(r *model.Rank) resolved {
	out := resolved{Rank: *r}
	out.Rank.Syms, out.Rank.Tasks, out.Rank.HCCL, out.Rank.FrameworkOps = model.Syms{}, nil, nil, nil
	out.Tasks, out.HCCL, out.Ops = r.Resolved()
	return out
}

func TestRoundTripGenerated(t *testing.T) {
	s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
	s.Ranks, s.Steps, s.CommJSON = 2, 2, true
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, s)
	require.NoError(t, err)
	p, err := parser.Load(context.Background(), dir, parser.Options{})
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
		p, err := parser.Load(context.Background(), dir, parser.Options{})
		require.NoError(t, err, l)
		require.NotEmpty(t, p.Ranks[0].Tasks, l)
		roundTrip(t, p)
	}
}

func TestRoundTripSamples(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/text/level1")
	p, err := parser.Load(context.Background(), dir, parser.Options{})
	require.NoError(t, err)
	roundTrip(t, p)
}

// Every field of model.Rank must be exported (or deliberately left out):
// a field added to the model without a column here would be lost by
// `npuprof analyze OUTDIR`. Extend write.go/read.go and this list together.
func TestEveryRankFieldIsExported(t *testing.T) {
	handled := []string{"Rank", "Device", "Path", "Format", "DirTimestamp", "ProfilerLevel", "TorchNPUVersion", "CANNVersion",
		"Have", "Syms", "Tasks", "HCCL", "FrameworkOps", "Links", "Steps", "Groups", "Env", "Metadata", "StepTrace", "Communication",
		"CommStats", "APIStats", "Warnings", "Partial", "PartialReason"}
	sort.Strings(handled)
	var fields []string
	rt := reflect.TypeOf(model.Rank{})
	for i := 0; i < rt.NumField(); i++ {
		fields = append(fields, rt.Field(i).Name)
	}
	sort.Strings(fields)
	require.Equal(t, handled, fields, "model.Rank changed: add the new field to the Parquet export (parser/parquetio) and docs/parquet.md")
	for typ, n := range map[reflect.Type]int{
		reflect.TypeOf(model.DeviceTask{}): 9, reflect.TypeOf(model.HCCLOp{}): 7, reflect.TypeOf(model.FrameworkOp{}): 4,
		reflect.TypeOf(model.Link{}): 3, reflect.TypeOf(model.Step{}): 3, reflect.TypeOf(model.CommOpInfo{}): 10,
		reflect.TypeOf(model.StepTraceRow{}): 10, reflect.TypeOf(model.StatRow{}): 4,
	} {
		require.Equal(t, n, typ.NumField(), "%v changed: update the Parquet export (parser/parquetio) and docs/parquet.md", typ)
	}
}
