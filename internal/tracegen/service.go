package tracegen

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Column spellings of MS Service Profiler's parse output that
// GenerateService writes (docs/formats.md#service-profiles).
const (
	ServiceMicros   = "microsecond" // 2024 to mid 2025: (microsecond) columns, no TTFT, no forward.csv
	ServiceMillis   = "ms"          // to November 2025: epoch (ms) columns, UsagePercent=-style kvcache
	ServiceDatetime = "datetime"    // November 2025 on: datetime text, Prefill_/Decode_ batch columns
)

// ServiceSpellings are the spellings GenerateService writes.
var ServiceSpellings = []string{ServiceMicros, ServiceMillis, ServiceDatetime, ServiceDB}

// ServiceScenario is one serving run of the field systems, as MS Service
// Profiler would have recorded it.
type ServiceScenario struct {
	Name string
	// Requests served, at most Concurrency at once.
	Requests, Concurrency int
	// DP domains; only the first Busy of them get requests (the others
	// run dummy forwards of batch size 0).
	DP, Busy int
	// CacheHit: most of each prompt hits the prefix cache (~80-100%).
	CacheHit bool
	// Preemptions are KV-cache preemptions recorded in kvcache.csv.
	Preemptions int
	// StepUs is a busy domain's decode forward time (µs) at batch 1; it
	// grows 100 µs a request.
	StepUs int64
}

// ServiceScenarios are the field systems' serving runs: 25 concurrent
// requests on the A2 system (one DP domain), one request and 90 requests
// on the A3 system (four DP domains), with and without prefix-cache hits;
// and a balanced, unsaturated run (4 requests with cache hits on the A2
// system) on which no service rule fires.
func ServiceScenarios() []ServiceScenario {
	return []ServiceScenario{
		{Name: "a2-25", Requests: 25, Concurrency: 25, DP: 1, Busy: 1, StepUs: 61_000},
		{Name: "a3-1", Requests: 1, Concurrency: 1, DP: 4, Busy: 1, StepUs: 45_000},
		{Name: "a3-90", Requests: 90, Concurrency: 90, DP: 4, Busy: 4, Preemptions: 3, StepUs: 52_000},
		{Name: "a3-90-cache", Requests: 90, Concurrency: 90, DP: 4, Busy: 4, CacheHit: true, StepUs: 52_000},
		{Name: "a2-4-cache", Requests: 4, Concurrency: 4, DP: 1, Busy: 1, CacheHit: true, StepUs: 61_000},
	}
}

// ServiceTruth is the exact value of every service metric the written
// folder yields (metrics the spelling cannot give are absent).
type ServiceTruth struct {
	Metrics map[string]float64
}

// serviceEpochUs is the run's first arrival: 2025-11-20 10:00:00 +08:00.
const serviceEpochUs = int64(1763604000) * 1_000_000

// svcRequest is one simulated request (µs).
type svcRequest struct {
	start, queue, ttft, e2e int64
	recv, out               int
	hit                     float64
}

// svcStep is one scheduling step (µs).
type svcStep struct {
	start, dur        int64
	prefill, decode   []int // request indices
	prefillTokens     int
	free, total, used int
	preempt           bool
}

// simulateService runs the scenario's requests through a simple
// continuous-batching scheduler with one step a StepUs-ish interval.
func simulateService(sc ServiceScenario) ([]svcRequest, []svcStep) {
	n := sc.Requests
	reqs := make([]svcRequest, n)
	for i := range reqs {
		r := &reqs[i]
		r.start = serviceEpochUs + int64(i)*1_250 // arrivals 1.25 ms apart
		r.recv = 512 + (i*37)%1024
		r.out = 24 + (i*11)%40
		if sc.Requests == 1 {
			r.out = 128
		}
		if sc.CacheHit {
			r.hit = float64(52+i%12) / 64 // dyadic: exact in float32 and in decimal text
		} else {
			r.hit = float64(i%4) / 64
		}
	}
	const total = 4096
	var steps []svcStep
	t := serviceEpochUs + 500
	next := 0         // next request to admit
	var running []int // decoding requests
	left := map[int]int{}
	done := 0
	for done < n {
		st := svcStep{start: t, total: total}
		// admit up to 4 prefills a step, while under the concurrency
		for next < n && len(st.prefill) < 4 && len(running)+len(st.prefill) < sc.Concurrency && reqs[next].start <= t {
			st.prefill = append(st.prefill, next)
			next++
		}
		st.decode = slices.Clone(running)
		for _, i := range st.prefill {
			st.prefillTokens += reqs[i].recv
		}
		size := len(st.prefill) + len(st.decode)
		st.dur = sc.StepUs + int64(size)*100 + int64(st.prefillTokens)*20
		if size == 0 {
			// idle: wait for the next arrival
			t = reqs[next].start
			continue
		}
		end := t + st.dur
		for _, i := range st.prefill {
			r := &reqs[i]
			r.queue = t - r.start
			r.ttft = end - r.start
			left[i] = r.out - 1
			running = append(running, i)
		}
		// a decoding request makes one token a step; one that needs a
		// single token ends at its prefill
		keep := running[:0]
		for _, i := range running {
			if !slices.Contains(st.prefill, i) {
				left[i]--
			}
			if left[i] == 0 {
				reqs[i].e2e = end - reqs[i].start
				done++
				continue
			}
			keep = append(keep, i)
		}
		running = keep
		st.used = 0
		for _, i := range running {
			st.used += (reqs[i].recv + reqs[i].out - left[i] + 127) / 128
		}
		st.free = total - st.used
		steps = append(steps, st)
		t = end + 300 // host gap between steps
	}
	for k := 0; k < sc.Preemptions && k < len(steps); k++ {
		steps[(k*7+3)%len(steps)].preempt = true
	}
	return reqs, steps
}

// GenerateService writes the scenario's service folder (request.csv,
// batch.csv, kvcache.csv and, but in the microsecond spelling,
// forward.csv; or their tables in profiler.db) in dir, in the given
// spelling, and returns its truth.
func GenerateService(dir string, sc ServiceScenario, spelling string) (*ServiceTruth, error) {
	if !slices.Contains(ServiceSpellings, spelling) {
		return nil, fmt.Errorf("tracegen: unknown service spelling %q", spelling)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	reqs, steps := simulateService(sc)
	w := svcWriter{spelling: spelling}
	if spelling == ServiceDB {
		w.spelling = ServiceDatetime
	}
	files := map[string]string{
		"request.csv": w.requests(reqs),
		"batch.csv":   w.batches(steps, reqs),
		"kvcache.csv": w.kvcache(steps),
	}
	if spelling != ServiceMicros {
		files["forward.csv"] = w.forwards(sc, steps)
	}
	if spelling == ServiceDB {
		if err := writeServiceDB(dir, files); err != nil {
			return nil, err
		}
	} else {
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return &ServiceTruth{Metrics: serviceTruth(sc, w.spelling, reqs, steps)}, nil
}

type svcWriter struct{ spelling string }

// at writes an epoch time (µs) in the spelling's time format.
func (w svcWriter) at(us int64) string {
	switch w.spelling {
	case ServiceMicros:
		return strconv.FormatInt(us, 10)
	case ServiceMillis:
		return fmt.Sprintf("%d.%03d", us/1000, us%1000)
	}
	t := time.Unix(us/1e6, (us%1e6)*1000).In(time.FixedZone("Asia/Shanghai", 8*3600))
	return t.Format("2006-01-02 15:04:05") + fmt.Sprintf(":%06d", us%1e6)
}

// dur writes a duration (µs) in the spelling's duration unit.
func (w svcWriter) dur(us int64) string {
	if w.spelling == ServiceMicros {
		return strconv.FormatInt(us, 10)
	}
	return fmt.Sprintf("%d.%03d", us/1000, us%1000)
}

// svcHeaders are each file's header line in the microsecond, ms and
// datetime spellings (docs/formats.md#service-profiles).
var svcHeaders = map[string][3]string{
	"request.csv": {
		"http_rid,start_time_httpReq(microsecond),recv_token_size,reply_token_size,execution_time(microsecond),queue_wait_time(microsecond)",
		"http_rid,start_time(ms),recv_token_size,reply_token_size,execution_time(ms),queue_wait_time(ms),first_token_latency(ms),cache_hit_rate",
		"http_rid,start_datetime,recv_token_size,reply_token_size,execution_time(ms),queue_wait_time(ms),first_token_latency(ms),cache_hit_rate",
	},
	"batch.csv": {
		"name,res_list,start_time(microsecond),end_time(microsecond),batch_size,batch_type,during_time(microsecond)",
		"name,res_list,start_time(ms),end_time(ms),during_time(ms),batch_type,prof_id,total_batch_size",
		"name,res_list,start_time,end_time,during_time(ms),batch_type,prof_id,total_batch_size,total_blocks,used_blocks,free_blocks,blocks_allocated,blocks_freed,kvcache_usage_rate,Prefill_batch_size,Decode_batch_size,Prefill_scheduled_tokens,Decode_scheduled_tokens,total_scheduled_tokens,dp_rank",
	},
	"kvcache.csv": {
		"domain,rid,start_time(microsecond),end_time(microsecond),name,device_kvcache_left,during_time(microsecond)",
		"domain,rid,timestamp(ms),name,TotalBlocks=,UsedBlocks=,FreeBlocks=,UsagePercent=,AllocatedBlocks=",
		"domain,name,start_time,total_blocks,used_blocks,free_blocks,blocks_allocated,blocks_freed,kvcache_usage_rate",
	},
}

// header is file's header line in the writer's spelling.
func (w svcWriter) header(file string) string {
	return svcHeaders[file][slices.Index(ServiceSpellings, w.spelling)] + "\n"
}

func (w svcWriter) requests(reqs []svcRequest) string {
	var b strings.Builder
	b.WriteString(w.header("request.csv"))
	for i, r := range reqs {
		fmt.Fprintf(&b, "chatcmpl-%08x,%s,%d,%d,%s,%s", i*2654435761%(1<<32), w.at(r.start), r.recv, r.out, w.dur(r.e2e), w.dur(r.queue))
		if w.spelling != ServiceMicros {
			fmt.Fprintf(&b, ",%s,%s", w.dur(r.ttft), strconv.FormatFloat(r.hit, 'f', -1, 64))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// resList is a batch's res_list cell (quoted: it holds commas).
func (w svcWriter) resList(s svcStep, reqs []svcRequest) string {
	var parts []string
	for _, i := range s.prefill {
		if w.spelling == ServiceMillis {
			parts = append(parts, fmt.Sprintf("{'rid': '%d', 'iter': 0, 'num_scheduled_tokens': %d}", i, reqs[i].recv))
		} else {
			parts = append(parts, fmt.Sprintf("{'rid': '%d', 'iter': 0}", i))
		}
	}
	for _, i := range s.decode {
		if w.spelling == ServiceMillis {
			parts = append(parts, fmt.Sprintf("{'rid': '%d', 'iter': 1, 'num_scheduled_tokens': 1}", i))
		} else {
			parts = append(parts, fmt.Sprintf("{'rid': '%d', 'iter': 1}", i))
		}
	}
	return `"[` + strings.Join(parts, ", ") + `]"`
}

func (w svcWriter) batches(steps []svcStep, reqs []svcRequest) string {
	var b strings.Builder
	b.WriteString(w.header("batch.csv"))
	sched := map[string]string{ServiceMicros: "BatchSchedule", ServiceMillis: "batchFrameworkProcessing", ServiceDatetime: "BatchSchedule"}[w.spelling]
	exec := map[string]string{ServiceMicros: "modelExec", ServiceMillis: "modelExec", ServiceDatetime: "Execute"}[w.spelling]
	for _, s := range steps {
		size := len(s.prefill) + len(s.decode)
		typ := "Decode"
		if len(s.prefill) > 0 {
			typ = "Prefill"
		}
		const schedUs = 200 // the scheduling row's own time, before the execution
		for k, name := range []string{sched, exec} {
			start, d := s.start, int64(schedUs)
			if k == 1 {
				start, d = s.start+schedUs, s.dur-schedUs
			}
			rl := w.resList(s, reqs)
			switch w.spelling {
			case ServiceMicros:
				fmt.Fprintf(&b, "%s,%s,%s,%s,%d,%s,%s\n", name, rl, w.at(start), w.at(start+d), size, typ, w.dur(d))
			case ServiceMillis:
				fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,0,%d\n", name, rl, w.at(start), w.at(start+d), w.dur(d), typ, size)
			default:
				usage := strconv.FormatFloat(float64(s.used)/float64(s.total), 'f', -1, 64)
				fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,0,%d,%d,%d,%d,0,0,%s,%d,%d,%d,%d,%d,0\n", name, rl, w.at(start), w.at(start+d), w.dur(d), typ, size,
					s.total, s.used, s.free, usage, len(s.prefill), len(s.decode), s.prefillTokens, len(s.decode), s.prefillTokens+len(s.decode))
			}
		}
	}
	return b.String()
}

func (w svcWriter) kvcache(steps []svcStep) string {
	var b strings.Builder
	b.WriteString(w.header("kvcache.csv"))
	for k, s := range steps {
		t := s.start + 100
		names := []string{"Allocate"}
		if s.preempt {
			names = append(names, map[string]string{ServiceMicros: "SwapOut", ServiceMillis: "Preempt", ServiceDatetime: "Preempt"}[w.spelling])
		}
		for _, name := range names {
			usage := strconv.FormatFloat(float64(s.used)/float64(s.total), 'f', -1, 64)
			switch w.spelling {
			case ServiceMicros:
				fmt.Fprintf(&b, "KVCache,%d,%s,%s,%s,%d,0\n", k, w.at(t), w.at(t), name, s.free)
			case ServiceMillis:
				fmt.Fprintf(&b, "Schedule.KVCache,%d,%s,%s,%d,%d,%d,%s,%d\n", k, w.at(t), name, s.total, s.used, s.free, usage, s.used)
			default:
				fmt.Fprintf(&b, "Schedule.KVCache,%s,%s,%d,%d,%d,%d,0,%s\n", name, w.at(t), s.total, s.used, s.free, s.used, usage)
			}
		}
	}
	return b.String()
}

// forwardUs is a domain's forward in a step: a busy domain's takes the
// step's execution, a dummy one's a quarter of it.
func forwardUs(sc ServiceScenario, s svcStep, dp int) (start, dur int64, size int) {
	start = s.start + 250
	dur = s.dur - 300
	size = (len(s.prefill) + len(s.decode) + dp) / sc.Busy
	if dp >= sc.Busy {
		return start, dur / 4, 0
	}
	if size == 0 {
		size = 1
	}
	return start, dur, size
}

func (w svcWriter) forwards(sc ServiceScenario, steps []svcStep) string {
	var b strings.Builder
	b.WriteString("name,relative_start_time(ms),start_time" + map[bool]string{true: "(ms),end_time(ms)", false: ",end_time"}[w.spelling == ServiceMillis] +
		",during_time(ms),bubble_time(ms),batch_size,batch_type,forward_iter,dp_rank,prof_id,hostname\n")
	for k, s := range steps {
		for dp := range sc.DP {
			start, d, size := forwardUs(sc, s, dp)
			fmt.Fprintf(&b, "forward,%s,%s,%s,%s,0.3,%d,Decode,%d,%d,%d,node0\n", w.dur(start-steps[0].start), w.at(start), w.at(start+d), w.dur(d), size, k+1, dp, dp)
		}
	}
	return b.String()
}

// percentile is the q-quantile of sorted values, linear between the
// closest ranks (the service pass's definition, restated here as truth).
func percentile(v []float64, q float64) float64 {
	slices.Sort(v)
	pos := q * float64(len(v)-1)
	i := int(math.Floor(pos))
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	return v[i] + (v[i+1]-v[i])*(pos-float64(i))
}

// serviceTruth states every service metric of the written folder.
// kept: the trace generator's ground truth, restated apart from the pass
func serviceTruth(sc ServiceScenario, spelling string, reqs []svcRequest, steps []svcStep) map[string]float64 {
	m := map[string]float64{}
	ms := func(us int64) float64 { return float64(us*1000) / 1e6 }
	pcts := func(name string, v []float64) {
		for _, q := range []struct {
			s string
			q float64
		}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}} {
			m["service."+name+"."+q.s+"_ms"] = percentile(slices.Clone(v), q.q)
		}
	}
	m["service.requests.count"] = float64(len(reqs))
	var e2e, queue, ttft, tpot []float64
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	tokens := 0
	hit := 0.0
	for _, r := range reqs {
		e2e = append(e2e, ms(r.e2e))
		queue = append(queue, ms(r.queue))
		ttft = append(ttft, ms(r.ttft))
		if r.out >= 2 {
			tpot = append(tpot, float64((r.e2e-r.ttft)*1000)/1e6/float64(r.out-1))
		}
		first, last = min(first, r.start), max(last, r.start+r.e2e)
		tokens += r.out
		hit += r.hit
	}
	pcts("e2e", e2e)
	pcts("queue_wait", queue)
	m["service.output_tps"] = float64(tokens) / (float64((last-first)*1000) / 1e9)
	if spelling != ServiceMicros {
		pcts("ttft", ttft)
		pcts("tpot", tpot)
		m["service.cache_hit.mean"] = hit / float64(len(reqs))
	}
	var size, pre, dec, mixed, ptok, alltok int
	low := math.MaxInt
	usage, freeShare := math.Inf(-1), math.Inf(1)
	preempt := 0
	for _, s := range steps {
		size += len(s.prefill) + len(s.decode)
		pre += len(s.prefill)
		dec += len(s.decode)
		if len(s.prefill) > 0 && len(s.decode) > 0 {
			mixed++
		}
		ptok += s.prefillTokens
		alltok += s.prefillTokens + len(s.decode)
		low = min(low, s.free)
		freeShare = min(freeShare, float64(s.free)/float64(s.total))
		usage = max(usage, float64(float32(float64(s.used)/float64(s.total))))
		if s.preempt {
			preempt++
		}
	}
	// execution rows: the step less the scheduling row's 200 µs
	var mixedUs, decodeUs int64
	var nMixed, nDecode int
	for _, s := range steps {
		if len(s.decode) == 0 {
			continue
		}
		if len(s.prefill) > 0 {
			mixedUs += s.dur - 200
			nMixed++
		} else {
			decodeUs += s.dur - 200
			nDecode++
		}
	}
	if nMixed > 0 && nDecode > 0 {
		m["service.batch.mixed.time_ratio"] = (float64(mixedUs*1000) / float64(nMixed)) / (float64(decodeUs*1000) / float64(nDecode))
	}
	n := float64(len(steps))
	m["service.batch.count"] = n
	m["service.batch.size.mean"] = float64(size) / n
	m["service.batch.mixed.share"] = float64(mixed) / n
	m["service.batch.prefill.requests.mean"] = float64(pre) / n
	m["service.batch.decode.requests.mean"] = float64(dec) / n
	if spelling != ServiceMicros {
		m["service.batch.prefill.tokens.share"] = float64(ptok) / float64(alltok)
		m["service.kv.usage.max"] = usage
		m["service.kv.free.share.min"] = freeShare
	}
	m["service.kv.free_blocks.min"] = float64(low)
	m["service.kv.preemptions.count"] = float64(preempt)
	if spelling == ServiceMicros {
		return m
	}
	// per DP domain, from forward.csv
	type acc struct {
		fwd, busy int64
		n, sizes  int
		busyAny   bool
	}
	accs := make([]acc, sc.DP)
	fFirst, fLast := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range steps {
		for dp := range sc.DP {
			start, d, size := forwardUs(sc, s, dp)
			a := &accs[dp]
			a.fwd += d
			a.n++
			a.sizes += size
			if size > 0 {
				a.busy += d
				a.busyAny = true
			}
			fFirst, fLast = min(fFirst, start), max(fLast, start+d)
		}
	}
	busy := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for dp, a := range accs {
		id := strconv.Itoa(dp)
		m["service.dp."+id+".forward.mean_ms"] = float64(a.fwd*1000) / 1e6 / float64(a.n)
		m["service.dp."+id+".batch.size.mean"] = float64(a.sizes) / float64(a.n)
		share := float64(a.busy*1000) / float64((fLast-fFirst)*1000)
		m["service.dp."+id+".busy.share"] = share
		lo, hi = min(lo, share), max(hi, share)
		if a.busyAny {
			busy++
		}
	}
	m["service.dp.count"] = float64(sc.DP)
	m["service.dp.busy.count"] = float64(busy)
	m["service.dp.busy.share.min"] = lo
	m["service.dp.busy.share.max"] = hi
	return m
}
