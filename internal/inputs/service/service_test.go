package service

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

func TestDatetimeIsShanghaiTime(t *testing.T) {
	base := int64(1763604000) * 1e9 // 2025-11-20 10:00:00 +08:00
	for in, want := range map[string]int64{
		"2025-11-20 10:00:00:000500":  base + 500_000,
		"2025-11-20 10:00:00.5":       base + 500_000_000,
		"2025-11-20T10:00:01":         base + 1e9,
		"2025-11-20 10:00:00:123":     base + 123_000_000,
		"2025-11-20 10:00:00:1234567": base + 123_456_700,
	} {
		got, ok := datetime([]byte(in))
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"2025-13-20 10:00:00", "2025-11-20 10:00", "2025-11-20 10:00:00:", "2025-11-20 10:00:00:12345678901"} {
		_, ok := datetime([]byte(bad))
		require.False(t, ok, bad)
	}
}

func TestHeaderUnits(t *testing.T) {
	for in, want := range map[string]column{
		"\ufeffhttp_rid":                  {base: "http_rid"},
		"\ufeff\"start_time(ms)\"":        {base: "start_time", unit: unitMillis},
		"start_time_httpReq(microsecond)": {base: "start_time_httpreq", unit: unitMicros},
		" During_Time(us) ":               {base: "during_time", unit: unitMicros},
		"dp3-forward(ms)":                 {base: "dp3-forward", unit: unitMillis},
		"TotalBlocks=":                    {base: "totalblocks="},
		"odd(thing)":                      {base: "odd(thing)"},
	} {
		require.Equal(t, want, parseHeader(in), in)
	}
}

func TestSplitCSVQuotes(t *testing.T) {
	cells, _, ok := splitCSV([]byte(`a,"[{'rid': '1'}, {'rid': '2'}]",,"say ""hi""",`), nil, nil)
	require.True(t, ok)
	var got []string
	for _, c := range cells {
		got = append(got, string(c))
	}
	require.Equal(t, []string{"a", "[{'rid': '1'}, {'rid': '2'}]", "", `say "hi"`, ""}, got)
	_, _, ok = splitCSV([]byte(`a,"open`), nil, nil)
	require.False(t, ok)
}

func TestResListPhases(t *testing.T) {
	pre, dec, pt, dt := countResList([]byte(`[{'rid': 'a', 'type': 0, 'num_scheduled_tokens': 512}, {'rid': 'b', 'iter': 0, 'type': 1, 'num_scheduled_tokens': 1}, {'rid': 'c', 'iter': 0}, {"rid": "d", "iter": 3, "num_scheduled_tokens=": 1}]`))
	require.Equal(t, [4]int32{2, 2, 512, 2}, [4]int32{pre, dec, pt, dt})
	pre, _, _, _ = countResList([]byte(`['1', '2']`))
	require.Equal(t, int32(model.NoServiceValue), pre)
}

// midBatch is the mid-2025 batch.csv: (ms) epoch times, the per-DP
// columns the writer copies onto the scheduling and execution rows.
const midBatch = `name,res_list,start_time(ms),end_time(ms),batch_size,batch_type,during_time(ms),dp0-rid,dp0-size,dp0-forward(ms),dp1-rid,dp1-size,dp1-forward(ms)
batchFrameworkProcessing,"['1', '2']",1763604000000.5,1763604000001.5,2,Prefill,1.0,['1'],1,35.5,['2'],1,30.25
modelExec,"['1', '2']",1763604000002,1763604000040,2,Prefill,38,['1'],1,35.5,['2'],1,30.25
`

func TestMidBatchPerDP(t *testing.T) {
	p := &model.ServiceProfile{}
	is, err := scanCSV(bytes.NewReader([]byte(midBatch)), BatchCSV, newSink(p, 1))
	require.NoError(t, err)
	require.Equal(t, issue{}, is)
	b := &p.Batches
	require.Equal(t, []uint8{model.BatchSchedule, model.BatchExecute}, b.Kind)
	require.Equal(t, []int64{1763604000000500000, 1763604000002000000}, b.Start)
	require.Equal(t, []int64{1000000, 38000000}, b.Dur)
	require.Equal(t, []int32{2, 2}, b.Size)
	require.Equal(t, []model.ServiceBatchDP{
		{Row: 0, DP: 0, Size: 1, Forward: 35500000}, {Row: 0, DP: 1, Size: 1, Forward: 30250000},
		{Row: 1, DP: 0, Size: 1, Forward: 35500000}, {Row: 1, DP: 1, Size: 1, Forward: 30250000},
	}, b.PerDP)
	// a plain rid list says no phase
	require.Equal(t, int32(model.NoServiceValue), b.Prefill[0])
}

// A row whose cell does not parse is skipped and counted, the rows around
// it read; a row of too few cells too.
func TestBadRowsCounted(t *testing.T) {
	in := "http_rid,start_time(ms),recv_token_size,reply_token_size,execution_time(ms),queue_wait_time(ms),first_token_latency(ms),cache_hit_rate\n" +
		"a,1763604000000,10,5,100,1,20,N/A\n" +
		"b,1763604000001,ten,5,100,1,20,0.5\n" +
		"c,1763604000002,10\n" +
		"d,1763604000003,10,5,100.5,,,0.25\n"
	p := &model.ServiceProfile{}
	is, err := scanCSV(bytes.NewReader([]byte(in)), RequestCSV, newSink(p, 0))
	require.NoError(t, err)
	require.Equal(t, issue{bad: 2, firstBadLine: 3}, is)
	r := &p.Requests
	require.Equal(t, 2, r.Len())
	require.Equal(t, []int64{100e6, 100.5e6}, r.E2E.Values())
	require.Equal(t, []int64{20e6, model.NoServiceValue}, r.TTFT.Values())
	require.Equal(t, []int64{1e6, model.NoServiceValue}, r.QueueWait.Values())
	require.True(t, math.IsNaN(float64(r.CacheHit[0])))
	require.Equal(t, float32(0.25), r.CacheHit[1])
}

// Read takes the CSVs first and profiler.db's tables for the CSVs absent;
// a folder of neither is an error.
func TestReadFolder(t *testing.T) {
	dir := t.TempDir()
	_, err := Read(dir)
	require.ErrorIs(t, err, ErrNoService)
	require.False(t, Is(dir))

	sc := tracegen.ServiceScenarios()[0]
	_, err = tracegen.GenerateService(dir, sc, tracegen.ServiceDB)
	require.NoError(t, err)
	_, err = tracegen.GenerateService(filepath.Join(dir, "csv"), sc, tracegen.ServiceDatetime)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "csv", RequestCSV))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, RequestCSV), b, 0o644))
	require.True(t, Is(dir))
	p, err := Read(dir)
	require.NoError(t, err)
	require.Equal(t, []string{RequestCSV, "profiler.db:batch", "profiler.db:kvcache", "profiler.db:forward"}, p.Files)
	require.Equal(t, model.ServiceSpellingDatetime, p.Spellings[RequestCSV])
	require.Equal(t, model.ServiceSpellingDB, p.Spellings["profiler.db:batch"])
	require.Equal(t, sc.Requests, p.Requests.Len())
	require.NotZero(t, p.Batches.Len())
}

// An empty CSV is named, not silently skipped.
func TestEmptyCSVIsAnIssue(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.GenerateService(dir, tracegen.ServiceScenarios()[1], tracegen.ServiceDatetime)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, KVCacheCSV), nil, 0o644))
	p, err := Read(dir)
	require.NoError(t, err)
	require.Equal(t, []model.ServiceFileIssue{{File: KVCacheCSV, Unread: "kvcache.csv: no header line"}}, p.Issues)
	require.True(t, p.Partial())
	require.Zero(t, p.KV.Len())
}

// Find takes the folder itself, else the first service folder up to two
// levels down, never entering a rank capture's folder.
func TestFind(t *testing.T) {
	root := t.TempDir()
	_, ok := Find(root)
	require.False(t, ok)
	sc := tracegen.ServiceScenarios()[1]
	// a request.csv inside a rank folder is not the service profile
	_, err := tracegen.GenerateService(filepath.Join(root, "dp0_rank0_1_2_ascend_pt"), sc, tracegen.ServiceDatetime)
	require.NoError(t, err)
	_, ok = Find(root)
	require.False(t, ok)
	want := filepath.Join(root, "run", "msprof_service")
	_, err = tracegen.GenerateService(want, sc, tracegen.ServiceMillis)
	require.NoError(t, err)
	got, ok := Find(root)
	require.True(t, ok)
	require.Equal(t, want, got)
	got, ok = Find(want)
	require.True(t, ok)
	require.Equal(t, want, got)
}

// A CSV whose header is not its table's is named and left unread; the
// other tables are read.
func TestForeignHeaderIsAnIssue(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.GenerateService(dir, tracegen.ServiceScenarios()[1], tracegen.ServiceDatetime)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ForwardCSV), []byte("a,b\n1,2\n"), 0o644))
	p, err := Read(dir)
	require.NoError(t, err)
	require.Len(t, p.Issues, 1)
	require.Equal(t, ForwardCSV, p.Issues[0].File)
	require.Contains(t, p.Issues[0].Unread, "not a forward table")
	require.NotContains(t, p.Files, ForwardCSV)
	require.NotZero(t, p.Requests.Len())
}

// A profiler.db cut short is named: alone, the read fails saying why.
func TestCutDatabase(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.GenerateService(dir, tracegen.ServiceScenarios()[0], tracegen.ServiceDB)
	require.NoError(t, err)
	path := filepath.Join(dir, ProfilerDB)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b[:len(b)/3], 0o644))
	_, err = Read(dir)
	require.ErrorIs(t, err, ErrNoService)
	require.Contains(t, err.Error(), "profiler.db: ")
	require.Contains(t, err.Error(), "malformed")

	// beside a readable request.csv, the cut database is an issue
	_, err = tracegen.GenerateService(filepath.Join(dir, "csv"), tracegen.ServiceScenarios()[0], tracegen.ServiceDatetime)
	require.NoError(t, err)
	b, err = os.ReadFile(filepath.Join(dir, "csv", RequestCSV))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, RequestCSV), b, 0o644))
	p, err := Read(dir)
	require.NoError(t, err)
	require.Equal(t, []string{RequestCSV}, p.Files)
	require.Len(t, p.Issues, 1)
	require.Equal(t, ProfilerDB, p.Issues[0].File)
	require.Contains(t, p.Issues[0].Unread, "malformed")
}

// A service profile given as a file is named as a file (infile.What names
// only the other kinds: a regular file was called "not a regular file").
func TestReadFileNotFolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "batch.csv")
	require.NoError(t, os.WriteFile(p, []byte("name,start_time\n"), 0o644))
	_, err := Read(p)
	require.EqualError(t, err, p+" is a file, not a folder: a service profile is a folder of request.csv, batch.csv, ... or profiler.db")
}
