package analysis

import (
	"math"
	"slices"
	"strconv"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Metrics of the service cluster pass (a public contract, issue 33): what
// MS Service Profiler's parse output says of the serving run. Set only
// when a service profile was read; without one the pass measures nothing
// and says nothing (no service.* name in cluster.metrics or
// cluster.unavailable).
const (
	MetricServiceRequestsCount          = "service.requests.count"                  // count: requests of request.csv
	MetricServiceTTFTP50Ms              = "service.ttft.p50_ms"                     // ms: median first_token_latency (0 is the writer's "not measured" and is left out)
	MetricServiceTTFTP90Ms              = "service.ttft.p90_ms"                     // ms: 90th percentile of first_token_latency
	MetricServiceTTFTP99Ms              = "service.ttft.p99_ms"                     // ms: 99th percentile of first_token_latency
	MetricServiceE2EP50Ms               = "service.e2e.p50_ms"                      // ms: median execution_time (arrival to last token)
	MetricServiceE2EP90Ms               = "service.e2e.p90_ms"                      // ms: 90th percentile of execution_time
	MetricServiceE2EP99Ms               = "service.e2e.p99_ms"                      // ms: 99th percentile of execution_time
	MetricServiceQueueWaitP50Ms         = "service.queue_wait.p50_ms"               // ms: median queue_wait_time
	MetricServiceQueueWaitP90Ms         = "service.queue_wait.p90_ms"               // ms: 90th percentile of queue_wait_time
	MetricServiceQueueWaitP99Ms         = "service.queue_wait.p99_ms"               // ms: 99th percentile of queue_wait_time
	MetricServiceTPOTP50Ms              = "service.tpot.p50_ms"                     // ms: median TPOT, (execution_time - first_token_latency) / (reply_token_size - 1) over requests with 2 output tokens or more
	MetricServiceTPOTP90Ms              = "service.tpot.p90_ms"                     // ms: 90th percentile of TPOT
	MetricServiceTPOTP99Ms              = "service.tpot.p99_ms"                     // ms: 99th percentile of TPOT
	MetricServiceOutputTPS              = "service.output_tps"                      // tokens/s: sum of reply_token_size over the span from the first request's arrival to the last request's end
	MetricServiceCacheHitMean           = "service.cache_hit.mean"                  // ratio: mean prefix-cache hit rate (cache_hit_rate) over the requests that state one
	MetricServiceBatchCount             = "service.batch.count"                     // count: scheduling rows of batch.csv (BatchSchedule, batchFrameworkProcessing or Schedule)
	MetricServiceBatchSizeMean          = "service.batch.size.mean"                 // count: mean batch size over the scheduling rows (not the execution rows)
	MetricServiceBatchMixedShare        = "service.batch.mixed.share"               // ratio: scheduling batches holding both prefill and decode requests
	MetricServiceBatchPrefillMean       = "service.batch.prefill.requests.mean"     // count: mean prefill requests per scheduling batch
	MetricServiceBatchDecodeMean        = "service.batch.decode.requests.mean"      // count: mean decode requests per scheduling batch
	MetricServiceBatchPrefillTokenShare = "service.batch.prefill.tokens.share"      // ratio: prefill share of the scheduled tokens
	MetricServiceBatchMixedTimeRatio    = "service.batch.mixed.time_ratio"          // ratio: mean execution time of the batches that mix prefill into decode over that of the decode-only batches (execution rows)
	MetricServiceDPCount                = "service.dp.count"                        // count: data-parallel domains with forwards
	MetricServiceDPBusyCount            = "service.dp.busy.count"                   // count: DP domains that ran a forward with requests (batch size above 0); the others ran dummy steps
	MetricServiceDPBusyShareMin         = "service.dp.busy.share.min"               // ratio: least busy share over the DP domains
	MetricServiceDPBusyShareMax         = "service.dp.busy.share.max"               // ratio: largest busy share over the DP domains
	FamilyServiceDPForwardMeanMs        = Family("service.dp.<id>.forward.mean_ms") // ms: one DP domain's mean forward time
	FamilyServiceDPBatchSizeMean        = Family("service.dp.<id>.batch.size.mean") // count: one DP domain's mean forward batch size
	FamilyServiceDPBusyShare            = Family("service.dp.<id>.busy.share")      // ratio: one DP domain's forward time with requests over the span of every domain's forwards
	MetricServiceKVFreeBlocksMin        = "service.kv.free_blocks.min"              // count: low-water mark of the KV cache's free blocks
	MetricServiceKVFreeShareMin         = "service.kv.free.share.min"               // ratio: least share of the KV cache's blocks free (free over total blocks, rows that state both)
	MetricServiceKVUsageMax             = "service.kv.usage.max"                    // ratio: largest KV cache usage
	MetricServiceKVPreemptionsCount     = "service.kv.preemptions.count"            // count: preemptions the KV-cache events name (kvcache.csv rows named Preempt* or SwapOut); a recompute preemption that only frees its blocks has no row of its own and is not counted
	MetricServiceJoinMixedShare         = "service.join.mixed.share"                // ratio: of the device steps matched to a batch that states its phases, those whose batch mixes prefill into decode (the joined rank)
	MetricServiceJoinMixedStepRatio     = "service.join.mixed.step_ratio"           // ratio: mean device step of the steps whose batch mixes prefill into decode over that of the decode-only ones (the joined rank)
)

// ServiceResult is the service pass's typed result: the profile read
// (nil without one) and the per-DP-domain statistics.
type ServiceResult struct {
	Profile *model.ServiceProfile
	DP      []ServiceDP
	// Join matches the device steps of JoinRank (the first rank with
	// timeline steps) to the profile's batches; nil without such a rank.
	Join     *ServiceJoin
	JoinRank int
	// stepRow is the joined steps' batch rows by step number.
	stepRow map[int]int32
}

// StepCause is the service cause (BatchCause) of the joined rank's step
// number id and its batch row; ok is false when no batch was matched to
// that step. Every rank runs step id in the same batch, so this is the
// cause of the step on any rank: the ledger's per-step service_cause, an
// annotation of the step (its time stays split over the ledger's causes).
func (r *ServiceResult) StepCause(id int) (cause string, row int32, ok bool) {
	if r == nil {
		return "", -1, false
	}
	row, ok = r.stepRow[id]
	if !ok {
		return "", -1, false
	}
	return BatchCause(&r.Profile.Batches, row), row, true
}

// ServiceDP is one data-parallel domain's forwards.
type ServiceDP struct {
	DP        int
	Forwards  int
	ForwardNs int64 // summed forward time
	BusyNs    int64 // summed forward time of forwards with requests
	SizeSum   int64
	Sized     int
	Busy      bool
}

// ServicePass measures the service profile's metrics.
var ServicePass = &ClusterPass{
	Name: "service",
	Doc: `request latency, batches, DP load and KV cache of the serving run

From MS Service Profiler's parse output (request.csv, batch.csv,
kvcache.csv, forward.csv or profiler.db): TTFT, end-to-end, queue-wait and
TPOT percentiles (linear interpolation between closest ranks), output
throughput, batch size and prefill/decode mix over the scheduling rows,
per-DP-domain forward time, batch size and busy share, the KV cache's
low-water mark and preemptions. With a rank's timeline steps, each device
step is matched to its batch and the clocks' offset estimated
(ServiceResult.Join).`,
	Metrics: serviceMetrics,
	Run: func(ctx *ClusterContext) (any, error) {
		p := ctx.Service
		if p == nil {
			return (*ServiceResult)(nil), nil
		}
		res := &ServiceResult{Profile: p}
		serviceRequests(ctx, p)
		serviceBatches(ctx, p)
		res.DP = serviceDP(ctx, p)
		serviceKV(ctx, p)
		for _, rr := range ctx.Ranks {
			if spans := StepSpansOf(rr); len(spans) > 0 {
				res.Join, res.JoinRank = JoinService(spans, p), rr.Rank
				if j := res.Join; j != nil {
					res.stepRow = make(map[int]int32, j.Matched)
					for i, b := range j.Batch {
						if b >= 0 {
							res.stepRow[j.Step[i]] = b
						}
					}
				}
				break
			}
		}
		serviceJoinMetrics(ctx, res.Join)
		return res, nil
	},
}

// serviceJoinMetrics sets the join's metrics (or says why not).
func serviceJoinMetrics(ctx *ClusterContext, j *ServiceJoin) {
	names := []string{MetricServiceJoinMixedShare, MetricServiceJoinMixedStepRatio}
	switch {
	case j == nil:
		ctx.unavailable("no rank with device steps (ProfilerStep#N) to match the batches to", names...)
		return
	case j.Mixed+j.Decode == 0:
		ctx.unavailable("no matched device step's batch states its requests' phases", names...)
		return
	}
	ctx.set(MetricServiceJoinMixedShare, float64(j.Mixed)/float64(j.Mixed+j.Decode))
	if j.MixedStepRatio > 0 {
		ctx.set(MetricServiceJoinMixedStepRatio, j.MixedStepRatio)
	} else {
		ctx.unavailable("needs matched device steps of both batches that mix prefill into decode and decode-only ones", MetricServiceJoinMixedStepRatio)
	}
}

// ServiceOf is the service pass's result (nil without a service profile).
var ServiceOf = ClusterResultOf[*ServiceResult](ServicePass)

// Percentile is the q-quantile (0..1) of sorted values by linear
// interpolation between the closest ranks: position q*(n-1).
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := int(math.Floor(pos))
	if i >= n-1 {
		return sorted[n-1]
	}
	frac := pos - float64(i)
	return sorted[i] + (sorted[i+1]-sorted[i])*frac
}

const nsPerMs = 1e6

// setPercentiles sorts v and sets its p50, p90 and p99 (or says why not).
func setPercentiles(ctx *ClusterContext, v []float64, why string, names [3]string) {
	if len(v) == 0 {
		ctx.unavailable(why, names[:]...)
		return
	}
	slices.Sort(v)
	for i, q := range []float64{0.5, 0.9, 0.99} {
		ctx.set(names[i], Percentile(v, q))
	}
}

// ServiceLatency names one latency of the requests (AppendLatency).
type ServiceLatency int

// The requests' latencies.
const (
	// LatencyTTFT is first_token_latency, over the requests that state
	// one above 0 (the writer fills 0 for a request without it).
	LatencyTTFT ServiceLatency = iota
	// LatencyTPOT is (execution_time − first_token_latency) /
	// (reply_token_size − 1), over the requests with 2 output tokens or
	// more that state all three.
	LatencyTPOT
	// LatencyE2E is execution_time.
	LatencyE2E
	// LatencyQueueWait is queue_wait_time.
	LatencyQueueWait
)

// AppendLatency appends to v, in ms and in file order, one latency of
// each request that states it: what the service.* percentiles and the
// latency distributions are taken over.
func AppendLatency(v []float64, r *model.ServiceRequests, kind ServiceLatency) []float64 {
	const none = model.NoServiceValue
	for i := range r.Len() {
		switch kind {
		case LatencyTTFT:
			if d := r.TTFT.At(i); d != none && d > 0 {
				v = append(v, float64(d)/nsPerMs)
			}
		case LatencyTPOT:
			e2e, ttft, out := r.E2E.At(i), r.TTFT.At(i), r.ReplyTokens[i]
			if e2e != none && ttft != none && ttft > 0 && out != none && out >= 2 {
				v = append(v, float64(e2e-ttft)/nsPerMs/float64(out-1))
			}
		case LatencyE2E:
			if d := r.E2E.At(i); d != none {
				v = append(v, float64(d)/nsPerMs)
			}
		case LatencyQueueWait:
			if d := r.QueueWait.At(i); d != none {
				v = append(v, float64(d)/nsPerMs)
			}
		}
	}
	return v
}

func serviceRequests(ctx *ClusterContext, p *model.ServiceProfile) {
	r := &p.Requests
	n := r.Len()
	if n == 0 {
		ctx.unavailable("no request.csv (or request table) in the service profile",
			MetricServiceRequestsCount, MetricServiceTTFTP50Ms, MetricServiceTTFTP90Ms, MetricServiceTTFTP99Ms,
			MetricServiceE2EP50Ms, MetricServiceE2EP90Ms, MetricServiceE2EP99Ms,
			MetricServiceQueueWaitP50Ms, MetricServiceQueueWaitP90Ms, MetricServiceQueueWaitP99Ms,
			MetricServiceTPOTP50Ms, MetricServiceTPOTP90Ms, MetricServiceTPOTP99Ms,
			MetricServiceOutputTPS, MetricServiceCacheHitMean)
		return
	}
	ctx.setCount(MetricServiceRequestsCount, n)
	const none = model.NoServiceValue
	v := make([]float64, 0, n)
	for _, l := range []struct {
		kind  ServiceLatency
		why   string
		names [3]string
	}{
		{LatencyTTFT, "no request states a first_token_latency", [3]string{MetricServiceTTFTP50Ms, MetricServiceTTFTP90Ms, MetricServiceTTFTP99Ms}},
		{LatencyE2E, "no request states an execution_time", [3]string{MetricServiceE2EP50Ms, MetricServiceE2EP90Ms, MetricServiceE2EP99Ms}},
		{LatencyQueueWait, "no request states a queue_wait_time", [3]string{MetricServiceQueueWaitP50Ms, MetricServiceQueueWaitP90Ms, MetricServiceQueueWaitP99Ms}},
		{LatencyTPOT, "no request has 2 output tokens or more with both execution_time and first_token_latency", [3]string{MetricServiceTPOTP50Ms, MetricServiceTPOTP90Ms, MetricServiceTPOTP99Ms}},
	} {
		v = AppendLatency(v[:0], r, l.kind)
		setPercentiles(ctx, v, l.why, l.names)
	}

	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	var tokens int64
	for i := range n {
		s, e, out := r.Start.At(i), r.E2E.At(i), r.ReplyTokens[i]
		if s == none || e == none {
			continue
		}
		first, last = min(first, s), max(last, s+e)
		if out != none {
			tokens += int64(out)
		}
	}
	if last > first {
		ctx.set(MetricServiceOutputTPS, float64(tokens)/(float64(last-first)/1e9))
	} else {
		ctx.unavailable("no request states both its start and its execution_time", MetricServiceOutputTPS)
	}
	var hit float64
	hits := 0
	for _, h := range r.CacheHit {
		if !math.IsNaN(float64(h)) {
			hit += float64(h)
			hits++
		}
	}
	if hits > 0 {
		ctx.set(MetricServiceCacheHitMean, hit/float64(hits))
	} else {
		ctx.unavailable("no request states a cache_hit_rate", MetricServiceCacheHitMean)
	}
}

func serviceBatches(ctx *ClusterContext, p *model.ServiceProfile) {
	b := &p.Batches
	const none = model.NoServiceValue
	var count, sized, mixed, phased, tokened int
	var size, pre, dec, ptok, alltok int64
	for i := range b.Len() {
		if b.Kind[i] != model.BatchSchedule {
			continue
		}
		count++
		if s := b.Size[i]; s != none {
			size += int64(s)
			sized++
		}
		if pr, de := b.Prefill[i], b.Decode[i]; pr != none && de != none {
			phased++
			pre += int64(pr)
			dec += int64(de)
			if pr > 0 && de > 0 {
				mixed++
			}
		}
		if pt, dt := b.PrefillTokens[i], b.DecodeTokens[i]; pt != none && dt != none && pt+dt > 0 {
			tokened++
			ptok += int64(pt)
			alltok += int64(pt) + int64(dt)
		}
	}
	serviceMixedTime(ctx, b)
	why := "no scheduling row (BatchSchedule, batchFrameworkProcessing or Schedule) in batch.csv"
	if count == 0 {
		ctx.unavailable(why, MetricServiceBatchCount, MetricServiceBatchSizeMean, MetricServiceBatchMixedShare,
			MetricServiceBatchPrefillMean, MetricServiceBatchDecodeMean, MetricServiceBatchPrefillTokenShare)
		return
	}
	ctx.setCount(MetricServiceBatchCount, count)
	if sized > 0 {
		ctx.set(MetricServiceBatchSizeMean, float64(size)/float64(sized))
	} else {
		ctx.unavailable("no scheduling row states its batch size", MetricServiceBatchSizeMean)
	}
	if phased > 0 {
		ctx.set(MetricServiceBatchMixedShare, float64(mixed)/float64(phased))
		ctx.set(MetricServiceBatchPrefillMean, float64(pre)/float64(phased))
		ctx.set(MetricServiceBatchDecodeMean, float64(dec)/float64(phased))
	} else {
		ctx.unavailable("no scheduling row says its requests' phases (Prefill_batch_size, or res_list with type or iter)",
			MetricServiceBatchMixedShare, MetricServiceBatchPrefillMean, MetricServiceBatchDecodeMean)
	}
	if tokened > 0 {
		ctx.set(MetricServiceBatchPrefillTokenShare, float64(ptok)/float64(alltok))
	} else {
		ctx.unavailable("no scheduling row states its scheduled tokens", MetricServiceBatchPrefillTokenShare)
	}
}

// serviceMixedTime compares the execution rows that mix prefill into
// decode with the decode-only ones: what a prefill costs the decoding
// requests batched with it.
func serviceMixedTime(ctx *ClusterContext, b *model.ServiceBatches) {
	const none = model.NoServiceValue
	var mixedNs, decodeNs int64
	var mixed, decode int
	for i := range b.Len() {
		pr, de, d := b.Prefill[i], b.Decode[i], b.Dur[i]
		if b.Kind[i] != model.BatchExecute || pr == none || de == none || d == none || de == 0 {
			continue
		}
		if pr > 0 {
			mixedNs += d
			mixed++
		} else {
			decodeNs += d
			decode++
		}
	}
	if mixed == 0 || decode == 0 || decodeNs == 0 {
		ctx.unavailable("needs execution rows (modelExec, Execute) with their requests' phases, both decode-only and mixing prefill into decode",
			MetricServiceBatchMixedTimeRatio)
		return
	}
	ctx.set(MetricServiceBatchMixedTimeRatio, (float64(mixedNs)/float64(mixed))/(float64(decodeNs)/float64(decode)))
}

// serviceDP measures each DP domain's forwards: forward.csv's rows with
// a dp_rank (all of them domain 0 when none has one), else batch.csv's
// dp{i}-size and dp{i}-forward(ms) cells.
func serviceDP(ctx *ClusterContext, p *model.ServiceProfile) []ServiceDP {
	const none = model.NoServiceValue
	byDP := map[int]*ServiceDP{}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	add := func(dp int, start, dur int64, size int32) {
		d := byDP[dp]
		if d == nil {
			d = &ServiceDP{DP: dp}
			byDP[dp] = d
		}
		d.Forwards++
		if dur != none {
			d.ForwardNs += dur
			if start != none {
				first, last = min(first, start), max(last, start+dur)
			}
		}
		if size != none {
			d.SizeSum += int64(size)
			d.Sized++
		}
		if size == none || size > 0 {
			d.Busy = true
			if dur != none {
				d.BusyNs += dur
			}
		}
	}
	f := &p.Forwards
	for i := range f.Len() {
		if f.DP[i] != none {
			add(int(f.DP[i]), f.Start[i], f.Dur[i], f.BatchSize[i])
		}
	}
	if len(byDP) == 0 && f.Len() > 0 {
		// no forward names its DP rank (the writer leaves dp_rank empty
		// without data parallel): one domain, 0
		for i := range f.Len() {
			add(0, f.Start[i], f.Dur[i], f.BatchSize[i])
		}
	}
	if len(byDP) == 0 {
		// the mid-2025 batch.csv: dp{i}-forward(ms) on the execution rows
		// (the writer copies them onto the scheduling rows too)
		b := &p.Batches
		for _, e := range b.PerDP {
			if b.Kind[e.Row] != model.BatchExecute {
				continue
			}
			add(int(e.DP), b.Start[e.Row], e.Forward, e.Size)
		}
	}
	names := []string{MetricServiceDPCount, MetricServiceDPBusyCount, MetricServiceDPBusyShareMin, MetricServiceDPBusyShareMax}
	if len(byDP) == 0 {
		ctx.unavailable("no forward with a dp_rank (forward.csv) or dp{i}-forward(ms) column (batch.csv)", names...)
		return nil
	}
	out := make([]ServiceDP, 0, len(byDP))
	for _, d := range byDP {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b ServiceDP) int { return a.DP - b.DP })
	busy := 0
	span := last - first
	minShare, maxShare := math.Inf(1), math.Inf(-1)
	for _, d := range out {
		id := strconv.Itoa(d.DP)
		if d.Busy {
			busy++
		}
		if d.Forwards > 0 && d.ForwardNs > 0 {
			ctx.set(FamilyServiceDPForwardMeanMs.Of(id), float64(d.ForwardNs)/nsPerMs/float64(d.Forwards))
		}
		if d.Sized > 0 {
			ctx.set(FamilyServiceDPBatchSizeMean.Of(id), float64(d.SizeSum)/float64(d.Sized))
		}
		if span > 0 {
			share := float64(d.BusyNs) / float64(span)
			ctx.set(FamilyServiceDPBusyShare.Of(id), share)
			minShare, maxShare = min(minShare, share), max(maxShare, share)
		}
	}
	ctx.setCount(MetricServiceDPCount, len(out))
	ctx.setCount(MetricServiceDPBusyCount, busy)
	if span > 0 {
		ctx.set(MetricServiceDPBusyShareMin, minShare)
		ctx.set(MetricServiceDPBusyShareMax, maxShare)
	} else {
		ctx.unavailable("the forwards state no start and duration", MetricServiceDPBusyShareMin, MetricServiceDPBusyShareMax)
	}
	return out
}

func serviceKV(ctx *ClusterContext, p *model.ServiceProfile) {
	const none = model.NoServiceValue
	k := &p.KV
	low := int32(math.MaxInt32)
	usage, freeShare := math.Inf(-1), math.Inf(1)
	preempt := 0
	for i := range k.Len() {
		if f := k.Free[i]; f != none {
			low = min(low, f)
			if t := k.Total[i]; t != none && t > 0 {
				freeShare = min(freeShare, float64(f)/float64(t))
			}
		}
		if u := float64(k.Usage[i]); !math.IsNaN(u) {
			usage = max(usage, u)
		}
		if k.Event[i] == model.KVPreempt {
			preempt++
		}
	}
	// batch.csv's free_blocks (the writer's KVCacheStatus match) when
	// kvcache.csv has no free-block column
	if low == math.MaxInt32 {
		for _, f := range p.Batches.FreeBlocks {
			if f != none {
				low = min(low, f)
			}
		}
	}
	if k.Len() == 0 {
		ctx.unavailable("no kvcache.csv (or kvcache table) in the service profile", MetricServiceKVPreemptionsCount)
	} else {
		ctx.setCount(MetricServiceKVPreemptionsCount, preempt)
	}
	if low != math.MaxInt32 {
		ctx.setCount(MetricServiceKVFreeBlocksMin, int(low))
	} else {
		ctx.unavailable("no free-block count (kvcache.csv free_blocks or device_kvcache_left)", MetricServiceKVFreeBlocksMin)
	}
	if !math.IsInf(freeShare, 1) {
		ctx.set(MetricServiceKVFreeShareMin, freeShare)
	} else {
		ctx.unavailable("no kvcache.csv row states both its free and its total blocks", MetricServiceKVFreeShareMin)
	}
	if !math.IsInf(usage, -1) {
		ctx.set(MetricServiceKVUsageMax, usage)
	} else {
		ctx.unavailable("no KV cache usage (kvcache.csv kvcache_usage_rate or UsagePercent=)", MetricServiceKVUsageMax)
	}
}
