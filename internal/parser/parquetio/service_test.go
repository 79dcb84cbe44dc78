package parquetio

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// serviceProfile is a small profile with every table and an unmeasured
// cell in each column kind.
func serviceProfile() *model.ServiceProfile {
	const none = model.NoServiceValue
	p := &model.ServiceProfile{Source: "/run/service", Files: []string{"request.csv", "batch.csv", "kvcache.csv", "forward.csv"},
		Spellings: map[string]string{"request.csv": model.ServiceSpellingMillis, "batch.csv": model.ServiceSpellingMillis},
		Issues:    []model.ServiceFileIssue{{File: "kvcache.csv", Cut: true}}}
	r := &p.Requests
	for i, v := range []int64{1763604000123456000, 1763604000923456000, none} {
		r.Start.Append(v)
		r.E2E.Append(int64(i+1) * 1_000_123_000)
		r.TTFT.Append(none)
		r.QueueWait.Append(int64(i) * 7)
		r.RecvTokens = append(r.RecvTokens, int32(100*i))
		r.ReplyTokens = append(r.ReplyTokens, none)
		r.CacheHit = append(r.CacheHit, []float32{0.25, float32(math.NaN()), 1}[i])
	}
	b := &p.Batches
	b.Kind = []uint8{model.BatchSchedule, model.BatchExecute}
	b.Start, b.Dur = []int64{5, 6}, []int64{none, 9_000}
	b.Size, b.Prefill, b.Decode = []int32{4, 4}, []int32{1, none}, []int32{3, none}
	b.PrefillTokens, b.DecodeTokens, b.DP, b.FreeBlocks = []int32{512, none}, []int32{3, none}, []int32{none, 1}, []int32{none, 77}
	b.PerDP = []model.ServiceBatchDP{{Row: 1, DP: 0, Size: 4, Forward: 8_000}, {Row: 1, DP: 3, Size: 0, Forward: none}}
	p.KV = model.ServiceKV{Time: []int64{1, 2, 3}, Event: []uint8{model.KVAllocate, model.KVPreempt, model.KVOther},
		Free: []int32{10, none, 8}, Total: []int32{none, 20, 20}, Usage: []float32{0.5, float32(math.NaN()), 0.6}}
	p.Forwards = model.ServiceForwards{Start: []int64{7, none}, Dur: []int64{8_000, 9_000}, BatchSize: []int32{4, 0}, DP: []int32{0, none}}
	return p
}

// The service profile an export carries reads back as it was written:
// every table, null cells as the model's unmeasured value, and the
// manifest's files, spellings and issues.
func TestServiceReadBack(t *testing.T) {
	out := t.TempDir()
	p := serviceProfile()
	require.NoError(t, WriteService(out, p))
	require.NoError(t, WriteManifest(out, Manifest{Source: "/run", Service: p.Source, ServiceProfile: p}))
	got, note, err := ReadService(out)
	require.NoError(t, err)
	require.Empty(t, note)
	// NaN is not equal to itself: compare the floats' bits
	want, _ := json.Marshal(p)
	have, _ := json.Marshal(got)
	require.JSONEq(t, string(want), string(have))
	require.Equal(t, p.Requests.Start.Values(), got.Requests.Start.Values())
	require.Equal(t, p.Requests.E2E.Values(), got.Requests.E2E.Values())
	require.Equal(t, p.Requests.TTFT.Values(), got.Requests.TTFT.Values())
	require.Equal(t, p.Requests.QueueWait.Values(), got.Requests.QueueWait.Values())
	require.Equal(t, p.Requests.RecvTokens, got.Requests.RecvTokens)
	require.Equal(t, p.Requests.ReplyTokens, got.Requests.ReplyTokens)
	require.Equal(t, bits(p.Requests.CacheHit), bits(got.Requests.CacheHit))
	require.Equal(t, p.Batches, got.Batches)
	require.Equal(t, p.Forwards, got.Forwards)
	require.Equal(t, p.KV.Time, got.KV.Time)
	require.Equal(t, p.KV.Event, got.KV.Event)
	require.Equal(t, p.KV.Free, got.KV.Free)
	require.Equal(t, p.KV.Total, got.KV.Total)
	require.Equal(t, bits(p.KV.Usage), bits(got.KV.Usage))

	// an export without a service profile carries none
	none, note, err := ReadService(t.TempDir())
	require.NoError(t, err)
	require.Nil(t, none)
	require.Empty(t, note)
}

// A v1.4 export carries the requests and batches only: they are read,
// and a note says what is missing.
func TestServiceReadBackV14(t *testing.T) {
	out := t.TempDir()
	p := serviceProfile()
	require.NoError(t, WriteService(out, p))
	for _, tb := range []string{TableServiceBatchDP, TableServiceKVCache, TableServiceForwards} {
		require.NoError(t, os.RemoveAll(filepath.Join(out, tb)))
	}
	require.NoError(t, WriteManifest(out, Manifest{Source: "/run", Service: p.Source}))
	path := filepath.Join(out, ManifestDir, "export.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	m["schema"] = SchemaMajor + ".4"
	b, _ = json.Marshal(m)
	require.NoError(t, os.WriteFile(path, b, 0o644))

	got, note, err := ReadService(out)
	require.NoError(t, err)
	require.Equal(t, p.Source, got.Source)
	require.Equal(t, p.Requests.Start.Values(), got.Requests.Start.Values())
	require.Equal(t, p.Batches.Kind, got.Batches.Kind)
	require.Empty(t, got.Batches.PerDP)
	require.Zero(t, got.KV.Len())
	require.Contains(t, note, "carries only the requests and batches of the service profile /run/service")
}

func bits(f []float32) []uint32 {
	out := make([]uint32, len(f))
	for i, x := range f {
		out[i] = math.Float32bits(x)
	}
	return out
}
