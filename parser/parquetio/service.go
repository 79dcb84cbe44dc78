package parquetio

import (
	"math"
	"path/filepath"

	"github.com/npuprof/npuprof/parser/model"
)

// The service profile's tables (v1.4): one file each, not partitioned by
// rank (the serving run is the whole deployment's):
//
//	OUTDIR/service_requests/part-0.parquet
//	OUTDIR/service_batches/part-0.parquet
const (
	TableServiceRequests = "service_requests"
	TableServiceBatches  = "service_batches"
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

// WriteService writes the service profile's requests and batches under
// outDir.
func WriteService(outDir string, p *model.ServiceProfile) error {
	r := &p.Requests
	err := writeServiceTable(outDir, TableServiceRequests, r.Len(), func(i int) ServiceRequest {
		row := ServiceRequest{StartNs: opt64(r.Start.At(i)), E2ENs: opt64(r.E2E.At(i)), TTFTNs: opt64(r.TTFT.At(i)), QueueWaitNs: opt64(r.QueueWait.At(i)),
			RecvTokens: opt32(r.RecvTokens[i]), ReplyTokens: opt32(r.ReplyTokens[i])}
		if h := r.CacheHit[i]; !math.IsNaN(float64(h)) {
			row.CacheHit = &h
		}
		return row
	})
	if err != nil {
		return err
	}
	b := &p.Batches
	return writeServiceTable(outDir, TableServiceBatches, b.Len(), func(i int) ServiceBatch {
		kind := ServiceBatchSchedule
		if b.Kind[i] == model.BatchExecute {
			kind = ServiceBatchExecute
		}
		return ServiceBatch{Kind: kind, StartNs: opt64(b.Start[i]), DurNs: opt64(b.Dur[i]), Size: opt32(b.Size[i]),
			Prefill: opt32(b.Prefill[i]), Decode: opt32(b.Decode[i]), PrefillTokens: opt32(b.PrefillTokens[i]), DecodeTokens: opt32(b.DecodeTokens[i]),
			DP: opt32(b.DP[i]), FreeBlocks: opt32(b.FreeBlocks[i])}
	})
}

// writeServiceTable writes n rows made by row(i) to table's one file (not
// partitioned by rank).
func writeServiceTable[T any](outDir, table string, n int, row func(i int) T) error {
	return writeParquet(ServiceFile(outDir, table), table, n, row)
}
