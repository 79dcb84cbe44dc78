package parquetio

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// The service profile's tables (v1.4: requests and batches; v1.5 the
// others): one file each, not partitioned by rank (the serving run is the
// whole deployment's):
//
//	OUTDIR/service_requests/part-0.parquet
//	OUTDIR/service_batches/part-0.parquet
//	OUTDIR/service_batch_dp/part-0.parquet
//	OUTDIR/service_kvcache/part-0.parquet
//	OUTDIR/service_forwards/part-0.parquet
const (
	TableServiceRequests = "service_requests"
	TableServiceBatches  = "service_batches"
	TableServiceBatchDP  = "service_batch_dp"
	TableServiceKVCache  = "service_kvcache"
	TableServiceForwards = "service_forwards"
)

// ServiceRequest is one row of service_requests (model.ServiceRequests):
// times ns since the Unix epoch, durations ns; null when the profile did
// not give the cell.
// kept: the Parquet schema's own rows; alike the JSON contract's types in shape (tagged fields), not in logic
type ServiceRequest struct {
	StartNs     *int64   `parquet:"start_ns,optional"`
	E2ENs       *int64   `parquet:"e2e_ns,optional"`
	TTFTNs      *int64   `parquet:"ttft_ns,optional"`
	QueueWaitNs *int64   `parquet:"queue_wait_ns,optional"`
	RecvTokens  *int32   `parquet:"recv_tokens,optional"`
	ReplyTokens *int32   `parquet:"reply_tokens,optional"`
	CacheHit    *float32 `parquet:"cache_hit_rate,optional"`
}

// ServiceBatch is one row of service_batches (model.ServiceBatches): kind
// "schedule" (BatchSchedule, batchFrameworkProcessing, Schedule) or
// "execute" (modelExec, Execute); null when the row did not say.
// kept: the Parquet schema's own rows; alike the JSON contract's types in shape (tagged fields), not in logic
type ServiceBatch struct {
	Kind          string `parquet:"kind,dict"`
	StartNs       *int64 `parquet:"start_ns,optional"`
	DurNs         *int64 `parquet:"dur_ns,optional"`
	Size          *int32 `parquet:"batch_size,optional"`
	Prefill       *int32 `parquet:"prefill_requests,optional"`
	Decode        *int32 `parquet:"decode_requests,optional"`
	PrefillTokens *int32 `parquet:"prefill_tokens,optional"`
	DecodeTokens  *int32 `parquet:"decode_tokens,optional"`
	DP            *int32 `parquet:"dp_rank,optional"`
	FreeBlocks    *int32 `parquet:"free_blocks,optional"`
}

// Batch kinds of service_batches.
const (
	ServiceBatchSchedule = "schedule"
	ServiceBatchExecute  = "execute"
)

// ServiceBatchDP is one row of service_batch_dp (model.ServiceBatchDP):
// one data-parallel domain's dp{i}-size and dp{i}-forward cells of the
// service_batches row at 0-based position row.
type ServiceBatchDP struct {
	Row       int32  `parquet:"row"`
	DP        int32  `parquet:"dp"`
	Size      *int32 `parquet:"batch_size,optional"`
	ForwardNs *int64 `parquet:"forward_ns,optional"`
}

// ServiceKV is one row of service_kvcache (model.ServiceKV): event
// "allocate", "free", "preempt" or "other".
type ServiceKV struct {
	TimeNs      *int64   `parquet:"time_ns,optional"`
	Event       string   `parquet:"event,dict"`
	FreeBlocks  *int32   `parquet:"free_blocks,optional"`
	TotalBlocks *int32   `parquet:"total_blocks,optional"`
	Usage       *float32 `parquet:"usage,optional"`
}

// KV-cache event kinds of service_kvcache, by model.KV* value.
var serviceKVEvents = [...]string{model.KVOther: "other", model.KVAllocate: "allocate", model.KVFree: "free", model.KVPreempt: "preempt"}

// ServiceForward is one row of service_forwards (model.ServiceForwards).
type ServiceForward struct {
	StartNs   *int64 `parquet:"start_ns,optional"`
	DurNs     *int64 `parquet:"dur_ns,optional"`
	BatchSize *int32 `parquet:"batch_size,optional"`
	DP        *int32 `parquet:"dp_rank,optional"`
}

// ServiceFile is a service table's one file under outDir.
func ServiceFile(outDir, table string) string {
	return filepath.Join(outDir, table, "part-0.parquet")
}

func opt64(v int64) *int64 {
	if v == model.NoServiceValue {
		return nil
	}
	return &v
}

func opt32(v int32) *int32 {
	if v == model.NoServiceValue {
		return nil
	}
	return &v
}

func optF32(v float32) *float32 {
	if math.IsNaN(float64(v)) {
		return nil
	}
	return &v
}

// back is the model's value of an optional cell (NoServiceValue, or NaN
// for a float, when null).
func back[T int64 | int32 | float32](p *T) T {
	if p != nil {
		return *p
	}
	var none T
	switch x := any(&none).(type) {
	case *float32:
		*x = float32(math.NaN())
	case *int64:
		*x = model.NoServiceValue
	case *int32:
		*x = model.NoServiceValue
	}
	return none
}

// The model's rows as the tables' rows, and back (null: NoServiceValue,
// NaN for a float).

func requestRow(x model.ServiceRequest) ServiceRequest {
	return ServiceRequest{StartNs: opt64(x.Start), E2ENs: opt64(x.E2E), TTFTNs: opt64(x.TTFT), QueueWaitNs: opt64(x.QueueWait),
		RecvTokens: opt32(x.RecvTokens), ReplyTokens: opt32(x.ReplyTokens), CacheHit: optF32(x.CacheHit)}
}

func (x *ServiceRequest) model() model.ServiceRequest {
	return model.ServiceRequest{Start: back(x.StartNs), E2E: back(x.E2ENs), TTFT: back(x.TTFTNs), QueueWait: back(x.QueueWaitNs),
		RecvTokens: back(x.RecvTokens), ReplyTokens: back(x.ReplyTokens), CacheHit: back(x.CacheHit)}
}

func batchRow(x model.ServiceBatch) ServiceBatch {
	kind := ServiceBatchSchedule
	if x.Kind == model.BatchExecute {
		kind = ServiceBatchExecute
	}
	return ServiceBatch{Kind: kind, StartNs: opt64(x.Start), DurNs: opt64(x.Dur), Size: opt32(x.Size),
		Prefill: opt32(x.Prefill), Decode: opt32(x.Decode), PrefillTokens: opt32(x.PrefillTokens), DecodeTokens: opt32(x.DecodeTokens),
		DP: opt32(x.DP), FreeBlocks: opt32(x.FreeBlocks)}
}

func (x *ServiceBatch) model() model.ServiceBatch {
	kind := model.BatchSchedule
	if x.Kind == ServiceBatchExecute {
		kind = model.BatchExecute
	}
	return model.ServiceBatch{Kind: kind, Start: back(x.StartNs), Dur: back(x.DurNs), Size: back(x.Size),
		Prefill: back(x.Prefill), Decode: back(x.Decode), PrefillTokens: back(x.PrefillTokens), DecodeTokens: back(x.DecodeTokens),
		DP: back(x.DP), FreeBlocks: back(x.FreeBlocks)}
}

func kvRow(x model.ServiceKVRow) ServiceKV {
	ev := serviceKVEvents[model.KVOther]
	if int(x.Event) < len(serviceKVEvents) {
		ev = serviceKVEvents[x.Event]
	}
	return ServiceKV{TimeNs: opt64(x.Time), Event: ev, FreeBlocks: opt32(x.Free), TotalBlocks: opt32(x.Total), Usage: optF32(x.Usage)}
}

func (x *ServiceKV) model() model.ServiceKVRow {
	ev := model.KVOther
	for e, name := range serviceKVEvents {
		if name == x.Event {
			ev = uint8(e)
		}
	}
	return model.ServiceKVRow{Time: back(x.TimeNs), Event: ev, Free: back(x.FreeBlocks), Total: back(x.TotalBlocks), Usage: back(x.Usage)}
}

func forwardRow(x model.ServiceForward) ServiceForward {
	return ServiceForward{StartNs: opt64(x.Start), DurNs: opt64(x.Dur), BatchSize: opt32(x.BatchSize), DP: opt32(x.DP)}
}

func (x *ServiceForward) model() model.ServiceForward {
	return model.ServiceForward{Start: back(x.StartNs), Dur: back(x.DurNs), BatchSize: back(x.BatchSize), DP: back(x.DP)}
}

// WriteService writes the service profile's tables under outDir (the
// manifest carries the rest: Manifest.ServiceProfile).
func WriteService(outDir string, p *model.ServiceProfile) error {
	r, b, k, f := &p.Requests, &p.Batches, &p.KV, &p.Forwards
	for _, write := range []func() error{
		func() error {
			return writeServiceTable(outDir, TableServiceRequests, r.Len(), func(i int) ServiceRequest { return requestRow(r.At(i)) })
		},
		func() error {
			return writeServiceTable(outDir, TableServiceBatches, b.Len(), func(i int) ServiceBatch { return batchRow(b.At(i)) })
		},
		func() error {
			return writeServiceTable(outDir, TableServiceBatchDP, len(b.PerDP), func(i int) ServiceBatchDP {
				e := b.PerDP[i]
				return ServiceBatchDP{Row: e.Row, DP: e.DP, Size: opt32(e.Size), ForwardNs: opt64(e.Forward)}
			})
		},
		func() error {
			return writeServiceTable(outDir, TableServiceKVCache, k.Len(), func(i int) ServiceKV { return kvRow(k.At(i)) })
		},
		func() error {
			return writeServiceTable(outDir, TableServiceForwards, f.Len(), func(i int) ServiceForward { return forwardRow(f.At(i)) })
		},
	} {
		if err := write(); err != nil {
			return err
		}
	}
	return nil
}

// ReadService reads the service profile an export carries back into the
// model, as it was read when exported; nil when the export carries none.
// An export of v1.4 carries only its requests and batches (the note says
// so: the service section then lacks the KV cache and the forwards).
func ReadService(dir string) (p *model.ServiceProfile, note string, err error) {
	ms, err := manifests(dir)
	if err != nil {
		return nil, "", err
	}
	// the last run that wrote the tables (they are one file each)
	old := false
	for _, m := range ms {
		switch {
		case m.ServiceProfile != nil:
			p, old = m.ServiceProfile, false
		case m.Service != "":
			p, old = &model.ServiceProfile{Source: m.Service, Files: []string{}}, true
		}
	}
	if p == nil {
		return nil, "", nil
	}
	if p.Spellings == nil {
		p.Spellings = map[string]string{}
	}
	r, b, k, f := &p.Requests, &p.Batches, &p.KV, &p.Forwards
	err = cmp.Or(
		readServiceTable(dir, TableServiceRequests, r.Grow, func(x *ServiceRequest) { r.Add(x.model()) }),
		readServiceTable(dir, TableServiceBatches, b.Grow, func(x *ServiceBatch) { b.Add(x.model()) }))
	if err != nil {
		return nil, "", err
	}
	if old {
		return p, fmt.Sprintf("this export (written before %s.5) carries only the requests and batches of the service profile %s: give --service DIR for its KV cache and forwards", SchemaMajor, p.Source), nil
	}
	var bad error
	err = readServiceTable(dir, TableServiceBatchDP, nil, func(x *ServiceBatchDP) {
		if x.Row < 0 || int(x.Row) >= b.Len() {
			bad = fmt.Errorf("%s: row %d of %d batches", ServiceFile(dir, TableServiceBatchDP), x.Row, b.Len())
			return
		}
		b.PerDP = append(b.PerDP, model.ServiceBatchDP{Row: x.Row, DP: x.DP, Size: back(x.Size), Forward: back(x.ForwardNs)})
	})
	if err = cmp.Or(err, bad); err != nil {
		return nil, "", err
	}
	err = cmp.Or(
		readServiceTable(dir, TableServiceKVCache, k.Grow, func(x *ServiceKV) { k.Add(x.model()) }),
		readServiceTable(dir, TableServiceForwards, f.Grow, func(x *ServiceForward) { f.Add(x.model()) }))
	if err != nil {
		return nil, "", err
	}
	return p, "", nil
}

// readServiceTable calls fn for every row of a service table; grow, when
// set, is first given the table's row count.
func readServiceTable[T any](dir, table string, grow func(n int), fn func(*T)) error {
	p := ServiceFile(dir, table)
	if grow != nil {
		if n, err := rowCount(p); err == nil {
			grow(n)
		}
	}
	return readFile(dir, p, fn)
}

// writeServiceTable writes n rows made by row(i) to table's one file (not
// partitioned by rank).
func writeServiceTable[T any](outDir, table string, n int, row func(i int) T) error {
	return writeParquet(ServiceFile(outDir, table), table, n, row)
}

// rowCount is the rows of the Parquet file p.
func rowCount(p string) (int, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, err
	}
	return int(pf.NumRows()), nil
}
