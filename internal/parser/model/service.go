package model

import (
	"math"
	"slices"
)

// Column spellings of MS Service Profiler's parse output
// (ServiceProfile.Spellings, docs/formats.md#service-profiles).
const (
	// ServiceSpellingMicros: 2024 to mid 2025, times in "(microsecond)"
	// columns (start_time_httpReq(microsecond), start_time(microsecond)).
	ServiceSpellingMicros = "microsecond"
	// ServiceSpellingMillis: mid 2025 to November 2025, "(ms)" columns
	// holding epoch milliseconds (start_time(ms), timestamp(ms)).
	ServiceSpellingMillis = "ms"
	// ServiceSpellingDatetime: November 2025 on, start_time/start_datetime
	// as "YYYY-MM-DD HH:MM:SS:ffffff" local text (Asia/Shanghai), durations
	// in "(ms)" columns.
	ServiceSpellingDatetime = "datetime"
	// ServiceSpellingDB: profiler.db's tables (column names without unit;
	// durations in ms, times as datetime text).
	ServiceSpellingDB = "profiler.db"
)

// NoServiceValue marks an int64 or int32 cell of the service model the
// input did not give (an absent column, an empty or "N/A" cell).
const NoServiceValue = math.MinInt32

// ServiceProfile is what MS Service Profiler's `ms_service_profiler.parse`
// wrote for one serving run: one row per request, per batch, per KV-cache
// event and per forward, read by package internal/inputs/service. Columns are
// slices of one length per table (a million requests cost 28 bytes each);
// times are int64 ns since the Unix epoch, durations int64 ns, an
// unmeasured cell NoServiceValue (NaN for a float).
type ServiceProfile struct {
	// Source is the folder (or file) read; Files the files read, in order.
	Source string   `json:"source"`
	Files  []string `json:"files"`
	// Spellings names, per file read, its column spelling
	// (ServiceSpelling*).
	Spellings map[string]string `json:"spellings"`
	Requests  ServiceRequests   `json:"-"`
	Batches   ServiceBatches    `json:"-"`
	KV        ServiceKV         `json:"-"`
	Forwards  ServiceForwards   `json:"-"`
	// Issues are the files cut short or with rows that did not parse: the
	// complete rows were read, and these say what was not.
	Issues []ServiceFileIssue `json:"issues,omitempty"`
}

// ServiceFileIssue says what of one file was not read.
type ServiceFileIssue struct {
	File string `json:"file"`
	// Cut: the file ends inside a row (a copy or a write cut short); that
	// row is dropped.
	Cut bool `json:"cut"`
	// BadRows are rows skipped because a cell did not parse or the row had
	// too few cells; FirstBadLine is the first one's line number (1-based,
	// the header is line 1).
	BadRows      int `json:"bad_rows"`
	FirstBadLine int `json:"first_bad_line,omitempty"`
	// Unread says why nothing of the file was read (empty, no header),
	// "" when its rows were.
	Unread string `json:"unread,omitempty"`
}

// Partial reports whether some file of the profile was cut or had bad rows.
func (s *ServiceProfile) Partial() bool { return s != nil && len(s.Issues) > 0 }

// ServiceRequests is request.csv, one entry per request in file order:
// 28 bytes a request (a million requests, 104 MB of request.csv in the
// datetime spelling, keep 28 MB).
type ServiceRequests struct {
	// Start is the request's arrival (httpReq), ns since the epoch.
	Start NsColumn
	// E2E (execution_time), TTFT (first_token_latency) and QueueWait
	// (queue_wait_time), ns.
	E2E, TTFT, QueueWait NsColumn
	// RecvTokens (prompt) and ReplyTokens (output) token counts.
	RecvTokens, ReplyTokens []int32
	// CacheHit is the prefix-cache hit rate (0..1), NaN when "N/A".
	CacheHit []float32
}

// Len is the number of requests.
func (r *ServiceRequests) Len() int { return r.Start.Len() }

// ServiceRequest is one request: one entry of each ServiceRequests column.
type ServiceRequest struct {
	Start, E2E, TTFT, QueueWait int64
	RecvTokens, ReplyTokens     int32
	CacheHit                    float32
}

// Grow reserves room for n more requests.
func (r *ServiceRequests) Grow(n int) {
	for _, c := range []*NsColumn{&r.Start, &r.E2E, &r.TTFT, &r.QueueWait} {
		c.Grow(n)
	}
	growEach(n, &r.RecvTokens, &r.ReplyTokens)
	growEach(n, &r.CacheHit)
}

// Add appends request x.
func (r *ServiceRequests) Add(x ServiceRequest) {
	r.Start.Append(x.Start)
	r.E2E.Append(x.E2E)
	r.TTFT.Append(x.TTFT)
	r.QueueWait.Append(x.QueueWait)
	r.RecvTokens = append(r.RecvTokens, x.RecvTokens)
	r.ReplyTokens = append(r.ReplyTokens, x.ReplyTokens)
	r.CacheHit = append(r.CacheHit, x.CacheHit)
}

// At is request i.
func (r *ServiceRequests) At(i int) ServiceRequest {
	return ServiceRequest{Start: r.Start.At(i), E2E: r.E2E.At(i), TTFT: r.TTFT.At(i), QueueWait: r.QueueWait.At(i),
		RecvTokens: r.RecvTokens[i], ReplyTokens: r.ReplyTokens[i], CacheHit: r.CacheHit[i]}
}

// growEach reserves room for n more values in each column.
func growEach[T any](n int, cols ...*[]T) {
	for _, c := range cols {
		*c = slices.Grow(*c, n)
	}
}

// NsColumn is a column of int64 ns values (times or durations,
// NoServiceValue when unmeasured) kept exactly in 4 bytes a value where
// it can be: each value as int32 microseconds from a base, the first
// value of its block of nsBlock values. A value that is not a whole
// number of microseconds from its block's base, or lies 35 minutes or
// more from it, turns the column wide (8 bytes a value) from then on, so
// every value reads back as it was appended.
type NsColumn struct {
	base []int64 // per block: its first measured value (noBase: none yet)
	us   []int32 // µs from the block's base; math.MinInt32: NoServiceValue
	wide []int64 // every value, once the column is wide (us, base nil)
}

const (
	nsBlockBits = 12
	nsBlock     = 1 << nsBlockBits
	noBase      = math.MinInt64
)

// Len is the number of values.
func (c *NsColumn) Len() int {
	if c.wide != nil {
		return len(c.wide)
	}
	return len(c.us)
}

// Wide reports whether the column keeps 8 bytes a value.
func (c *NsColumn) Wide() bool { return c.wide != nil }

// At is value i.
func (c *NsColumn) At(i int) int64 {
	if c.wide != nil {
		return c.wide[i]
	}
	u := c.us[i]
	if u == math.MinInt32 {
		return NoServiceValue
	}
	return c.base[i>>nsBlockBits] + int64(u)*1000
}

// Grow reserves room for n more values.
func (c *NsColumn) Grow(n int) {
	if c.wide != nil {
		c.wide = slices.Grow(c.wide, n)
		return
	}
	c.us = slices.Grow(c.us, n)
	c.base = slices.Grow(c.base, (len(c.us)+n+nsBlock-1)/nsBlock-len(c.base))
}

// Append adds v.
func (c *NsColumn) Append(v int64) {
	if c.wide != nil {
		c.wide = append(c.wide, v)
		return
	}
	i := len(c.us)
	if v == NoServiceValue {
		if i&(nsBlock-1) == 0 {
			c.base = append(c.base, noBase)
		}
		c.us = append(c.us, math.MinInt32)
		return
	}
	b := i >> nsBlockBits
	if b == len(c.base) {
		c.base = append(c.base, v)
	} else if c.base[b] == noBase {
		c.base[b] = v
	}
	d := v - c.base[b]
	if d%1000 != 0 || d/1000 <= math.MinInt32 || d/1000 > math.MaxInt32 {
		c.widen()
		c.wide = append(c.wide, v)
		return
	}
	c.us = append(c.us, int32(d/1000))
}

// widen moves the values to 8 bytes each, keeping the room reserved.
func (c *NsColumn) widen() {
	w := make([]int64, len(c.us), cap(c.us))
	for i := range c.us {
		w[i] = c.At(i)
	}
	c.wide, c.us, c.base = w, nil, nil
}

// Values returns every value as a new slice.
func (c *NsColumn) Values() []int64 {
	out := make([]int64, c.Len())
	for i := range out {
		out[i] = c.At(i)
	}
	return out
}

// Batch row kinds (ServiceBatches.Kind).
const (
	// BatchSchedule is a scheduling row: BatchSchedule,
	// batchFrameworkProcessing or Schedule.
	BatchSchedule uint8 = iota
	// BatchExecute is an execution row: modelExec or Execute.
	BatchExecute
)

// ServiceBatches is batch.csv, one entry per row in file order.
type ServiceBatches struct {
	Kind []uint8
	// Start and Dur (during_time), ns.
	Start, Dur []int64
	// Size is the batch size (batch_size, total_batch_size).
	Size []int32
	// Prefill and Decode are the requests of each phase in the batch, and
	// PrefillTokens, DecodeTokens their scheduled tokens: the
	// Prefill_/Decode_ columns, else counted from res_list (a request with
	// type 0, or iter 0 without a type, is prefill).
	Prefill, Decode, PrefillTokens, DecodeTokens []int32
	// DP is the row's data-parallel rank (dp_rank), NoServiceValue when
	// the row does not say.
	DP []int32
	// FreeBlocks is the KV cache's free blocks the writer matched to the
	// row (free_blocks), NoServiceValue when absent.
	FreeBlocks []int32
	// PerDP are the per-DP-domain cells of the mid-2025 spelling
	// (dp{i}-size, dp{i}-forward(ms)).
	PerDP []ServiceBatchDP
}

// Len is the number of batch rows.
func (b *ServiceBatches) Len() int { return len(b.Kind) }

// ServiceBatch is one batch row: one entry of each ServiceBatches column
// (PerDP apart).
type ServiceBatch struct {
	Kind                                                               uint8
	Start, Dur                                                         int64
	Size, Prefill, Decode, PrefillTokens, DecodeTokens, DP, FreeBlocks int32
}

// Grow reserves room for n more rows.
func (b *ServiceBatches) Grow(n int) {
	growEach(n, &b.Kind)
	growEach(n, &b.Start, &b.Dur)
	growEach(n, &b.Size, &b.Prefill, &b.Decode, &b.PrefillTokens, &b.DecodeTokens, &b.DP, &b.FreeBlocks)
}

// Add appends row x.
func (b *ServiceBatches) Add(x ServiceBatch) {
	b.Kind = append(b.Kind, x.Kind)
	b.Start = append(b.Start, x.Start)
	b.Dur = append(b.Dur, x.Dur)
	b.Size = append(b.Size, x.Size)
	b.Prefill = append(b.Prefill, x.Prefill)
	b.Decode = append(b.Decode, x.Decode)
	b.PrefillTokens = append(b.PrefillTokens, x.PrefillTokens)
	b.DecodeTokens = append(b.DecodeTokens, x.DecodeTokens)
	b.DP = append(b.DP, x.DP)
	b.FreeBlocks = append(b.FreeBlocks, x.FreeBlocks)
}

// At is row i.
func (b *ServiceBatches) At(i int) ServiceBatch {
	return ServiceBatch{Kind: b.Kind[i], Start: b.Start[i], Dur: b.Dur[i], Size: b.Size[i], Prefill: b.Prefill[i], Decode: b.Decode[i],
		PrefillTokens: b.PrefillTokens[i], DecodeTokens: b.DecodeTokens[i], DP: b.DP[i], FreeBlocks: b.FreeBlocks[i]}
}

// ServiceBatchDP is one DP domain's share of one batch row.
type ServiceBatchDP struct {
	Row     int32 // index into ServiceBatches
	DP      int32
	Size    int32 // dp{i}-size, NoServiceValue when absent
	Forward int64 // dp{i}-forward(ms) in ns, NoServiceValue when absent
}

// KV-cache event kinds (ServiceKV.Event).
const (
	KVOther uint8 = iota
	KVAllocate
	KVFree
	// KVPreempt is a preemption: a row named Preempt* or SwapOut (vLLM
	// swaps a preempted request's blocks out, or frees them to recompute).
	KVPreempt
)

// ServiceKV is kvcache.csv, one entry per row in file order.
type ServiceKV struct {
	Time  []int64
	Event []uint8
	// Free and Total blocks (free_blocks / device_kvcache_left /
	// FreeBlocks=; total_blocks / TotalBlocks=), NoServiceValue when absent.
	Free, Total []int32
	// Usage is the used share of the cache (0..1), NaN when absent.
	Usage []float32
}

// Len is the number of KV-cache rows.
func (k *ServiceKV) Len() int { return len(k.Time) }

// ServiceKVRow is one KV-cache row: one entry of each ServiceKV column.
type ServiceKVRow struct {
	Time        int64
	Event       uint8
	Free, Total int32
	Usage       float32
}

// Grow reserves room for n more rows.
func (k *ServiceKV) Grow(n int) {
	growEach(n, &k.Time)
	growEach(n, &k.Event)
	growEach(n, &k.Free, &k.Total)
	growEach(n, &k.Usage)
}

// Add appends row x.
// kept: each table's own columns, appended one by one as ServiceBatches.Add does (a column store, not a shared loop)
func (k *ServiceKV) Add(x ServiceKVRow) {
	k.Time = append(k.Time, x.Time)
	k.Event = append(k.Event, x.Event)
	k.Free = append(k.Free, x.Free)
	k.Total = append(k.Total, x.Total)
	k.Usage = append(k.Usage, x.Usage)
}

// At is row i.
func (k *ServiceKV) At(i int) ServiceKVRow {
	return ServiceKVRow{Time: k.Time[i], Event: k.Event[i], Free: k.Free[i], Total: k.Total[i], Usage: k.Usage[i]}
}

// ServiceForwards is forward.csv, one entry per forward in file order.
type ServiceForwards struct {
	Start, Dur []int64
	BatchSize  []int32
	// DP is dp_rank, NoServiceValue when absent.
	DP []int32
}

// Len is the number of forwards.
func (f *ServiceForwards) Len() int { return len(f.Start) }

// ServiceForward is one forward: one entry of each ServiceForwards column.
type ServiceForward struct {
	Start, Dur    int64
	BatchSize, DP int32
}

// Grow reserves room for n more forwards.
func (f *ServiceForwards) Grow(n int) {
	growEach(n, &f.Start, &f.Dur)
	growEach(n, &f.BatchSize, &f.DP)
}

// Add appends forward x.
func (f *ServiceForwards) Add(x ServiceForward) {
	f.Start = append(f.Start, x.Start)
	f.Dur = append(f.Dur, x.Dur)
	f.BatchSize = append(f.BatchSize, x.BatchSize)
	f.DP = append(f.DP, x.DP)
}

// At is forward i.
func (f *ServiceForwards) At(i int) ServiceForward {
	return ServiceForward{Start: f.Start[i], Dur: f.Dur[i], BatchSize: f.BatchSize[i], DP: f.DP[i]}
}
