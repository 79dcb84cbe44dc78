package parquetio

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/npuprof/npuprof/parser/model"
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

// WriteService writes the service profile's tables under outDir (the
// manifest carries the rest: Manifest.ServiceProfile).
func WriteService(outDir string, p *model.ServiceProfile) error {
	r := &p.Requests
	err := writeServiceTable(outDir, TableServiceRequests, r.Len(), func(i int) ServiceRequest {
		return ServiceRequest{StartNs: opt64(r.Start.At(i)), E2ENs: opt64(r.E2E.At(i)), TTFTNs: opt64(r.TTFT.At(i)), QueueWaitNs: opt64(r.QueueWait.At(i)),
			RecvTokens: opt32(r.RecvTokens[i]), ReplyTokens: opt32(r.ReplyTokens[i]), CacheHit: optF32(r.CacheHit[i])}
	})
	if err != nil {
		return err
	}
	b := &p.Batches
	err = writeServiceTable(outDir, TableServiceBatches, b.Len(), func(i int) ServiceBatch {
		kind := ServiceBatchSchedule
		if b.Kind[i] == model.BatchExecute {
			kind = ServiceBatchExecute
		}
		return ServiceBatch{Kind: kind, StartNs: opt64(b.Start[i]), DurNs: opt64(b.Dur[i]), Size: opt32(b.Size[i]),
			Prefill: opt32(b.Prefill[i]), Decode: opt32(b.Decode[i]), PrefillTokens: opt32(b.PrefillTokens[i]), DecodeTokens: opt32(b.DecodeTokens[i]),
			DP: opt32(b.DP[i]), FreeBlocks: opt32(b.FreeBlocks[i])}
	})
	if err != nil {
		return err
	}
	err = writeServiceTable(outDir, TableServiceBatchDP, len(b.PerDP), func(i int) ServiceBatchDP {
		e := b.PerDP[i]
		return ServiceBatchDP{Row: e.Row, DP: e.DP, Size: opt32(e.Size), ForwardNs: opt64(e.Forward)}
	})
	if err != nil {
		return err
	}
	k := &p.KV
	err = writeServiceTable(outDir, TableServiceKVCache, k.Len(), func(i int) ServiceKV {
		ev := serviceKVEvents[model.KVOther]
		if int(k.Event[i]) < len(serviceKVEvents) {
			ev = serviceKVEvents[k.Event[i]]
		}
		return ServiceKV{TimeNs: opt64(k.Time[i]), Event: ev, FreeBlocks: opt32(k.Free[i]), TotalBlocks: opt32(k.Total[i]), Usage: optF32(k.Usage[i])}
	})
	if err != nil {
		return err
	}
	f := &p.Forwards
	return writeServiceTable(outDir, TableServiceForwards, f.Len(), func(i int) ServiceForward {
		return ServiceForward{StartNs: opt64(f.Start[i]), DurNs: opt64(f.Dur[i]), BatchSize: opt32(f.BatchSize[i]), DP: opt32(f.DP[i])}
	})
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
	r := &p.Requests
	err = readServiceTable(dir, TableServiceRequests, func(n int) {
		for _, c := range []*model.NsColumn{&r.Start, &r.E2E, &r.TTFT, &r.QueueWait} {
			c.Grow(n)
		}
		r.RecvTokens, r.ReplyTokens, r.CacheHit = make([]int32, 0, n), make([]int32, 0, n), make([]float32, 0, n)
	}, func(x *ServiceRequest) {
		r.Start.Append(back(x.StartNs))
		r.E2E.Append(back(x.E2ENs))
		r.TTFT.Append(back(x.TTFTNs))
		r.QueueWait.Append(back(x.QueueWaitNs))
		r.RecvTokens = append(r.RecvTokens, back(x.RecvTokens))
		r.ReplyTokens = append(r.ReplyTokens, back(x.ReplyTokens))
		r.CacheHit = append(r.CacheHit, back(x.CacheHit))
	})
	if err != nil {
		return nil, "", err
	}
	b := &p.Batches
	err = readServiceTable(dir, TableServiceBatches, nil, func(x *ServiceBatch) {
		kind := model.BatchSchedule
		if x.Kind == ServiceBatchExecute {
			kind = model.BatchExecute
		}
		b.Kind = append(b.Kind, kind)
		b.Start = append(b.Start, back(x.StartNs))
		b.Dur = append(b.Dur, back(x.DurNs))
		b.Size = append(b.Size, back(x.Size))
		b.Prefill = append(b.Prefill, back(x.Prefill))
		b.Decode = append(b.Decode, back(x.Decode))
		b.PrefillTokens = append(b.PrefillTokens, back(x.PrefillTokens))
		b.DecodeTokens = append(b.DecodeTokens, back(x.DecodeTokens))
		b.DP = append(b.DP, back(x.DP))
		b.FreeBlocks = append(b.FreeBlocks, back(x.FreeBlocks))
	})
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
	k := &p.KV
	err = readServiceTable(dir, TableServiceKVCache, nil, func(x *ServiceKV) {
		ev := model.KVOther
		for e, name := range serviceKVEvents {
			if name == x.Event {
				ev = uint8(e)
			}
		}
		k.Time = append(k.Time, back(x.TimeNs))
		k.Event = append(k.Event, ev)
		k.Free = append(k.Free, back(x.FreeBlocks))
		k.Total = append(k.Total, back(x.TotalBlocks))
		k.Usage = append(k.Usage, back(x.Usage))
	})
	if err != nil {
		return nil, "", err
	}
	f := &p.Forwards
	err = readServiceTable(dir, TableServiceForwards, nil, func(x *ServiceForward) {
		f.Start = append(f.Start, back(x.StartNs))
		f.Dur = append(f.Dur, back(x.DurNs))
		f.BatchSize = append(f.BatchSize, back(x.BatchSize))
		f.DP = append(f.DP, back(x.DP))
	})
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
