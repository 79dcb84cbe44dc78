package assemble

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/results"
)

// servicePrefix starts the name of every metric of the service pass: they
// are the document's service.metrics, not cluster.metrics.
const servicePrefix = "service."

// isService reports whether a cluster metric (or its unavailable entry)
// belongs to the service section.
func isService(name string) bool { return strings.HasPrefix(name, servicePrefix) }

// splitService moves the service.* metrics and unavailable entries of the
// cluster's maps into their own, leaving the analysis' maps untouched
// (the cluster's are copies when a service entry is in them).
func splitService(metrics map[string]float64, unavailable map[string]string) (cm map[string]float64, cu map[string]string, sm map[string]float64, su map[string]string) {
	cm, sm = splitServiceMap(metrics)
	cu, su = splitServiceMap(unavailable)
	return cm, cu, sm, su
}

// splitServiceMap is m without its service.* keys (m itself when it has
// none) and those keys (an empty map when none).
func splitServiceMap[V any](m map[string]V) (rest, service map[string]V) {
	service, rest = map[string]V{}, m
	for k := range m {
		if isService(k) {
			rest = map[string]V{}
			for k, v := range m {
				if isService(k) {
					service[k] = v
				} else {
					rest[k] = v
				}
			}
			break
		}
	}
	return rest, service
}

// serviceDoc is the document's service section (nil without a service
// profile): the service.* metrics, taken out of the cluster's, the files
// read and the join.
func serviceDoc(doc *results.Document, res *analysis.Result) *results.ServiceDoc {
	c := res.Cluster
	if c == nil {
		return nil
	}
	s := analysis.ServiceOf(c)
	if s == nil || s.Profile == nil {
		return nil
	}
	p := s.Profile
	d := &results.ServiceDoc{Source: p.Source, Files: p.Files, Spellings: p.Spellings, Partial: p.Partial(), Issues: p.Issues}
	if d.Files == nil {
		d.Files = []string{}
	}
	if cd := doc.Cluster; cd != nil {
		cd.Metrics, cd.Unavailable, d.Metrics, d.Unavailable = splitService(cd.Metrics, cd.Unavailable)
	}
	if d.Metrics == nil {
		d.Metrics, d.Unavailable = map[string]float64{}, map[string]string{}
	}
	d.Metrics = clean(d.Metrics)
	for _, dp := range s.DP {
		x := results.ServiceDPDoc{DP: dp.DP, Forwards: dp.Forwards, Busy: dp.Busy}
		if dp.Forwards > 0 && dp.ForwardNs > 0 {
			v := float64(dp.ForwardNs) / 1e6 / float64(dp.Forwards)
			x.ForwardMeanMs = &v
		}
		if dp.Sized > 0 {
			v := float64(dp.SizeSum) / float64(dp.Sized)
			x.BatchSizeMean = &v
		}
		x.BusyShare = metricPtr(d.Metrics, analysis.FamilyServiceDPBusyShare.Of(strconv.Itoa(dp.DP)))
		d.DP = append(d.DP, x)
	}
	d.Join = serviceJoinDoc(s, res.Ranks)
	return d
}

func metricPtr(m map[string]float64, name string) *float64 {
	if v, ok := m[name]; ok {
		return &v
	}
	return nil
}

// serviceJoinDoc is the join of the service result's rank, nil without.
func serviceJoinDoc(s *analysis.ServiceResult, ranks []*analysis.RankResult) *results.ServiceJoinDoc {
	j := s.Join
	if j == nil {
		return nil
	}
	var spans []analysis.StepSpan
	for _, rr := range ranks {
		if rr.Rank == s.JoinRank {
			spans = analysis.StepSpansOf(rr)
			break
		}
	}
	kind := "execution"
	if j.Kind == model.BatchSchedule {
		kind = "scheduling"
	}
	d := &results.ServiceJoinDoc{Rank: s.JoinRank, Batches: kind, ClockOffsetUs: us(j.Offset), ToleranceUs: us(j.Tolerance),
		Steps: len(j.Batch), Matched: j.Matched, MixedSteps: j.Mixed, DecodeSteps: j.Decode, StepBatches: []results.ServiceStepDoc{}}
	if n := j.Mixed + j.Decode; n > 0 {
		v := float64(j.Mixed) / float64(n)
		d.MixedShare = &v
	}
	if j.MixedStepRatio > 0 {
		v := j.MixedStepRatio
		d.MixedStepRatio = &v
	}
	b := &s.Profile.Batches
	const none = model.NoServiceValue
	opt := func(v int32) *int {
		if v == none {
			return nil
		}
		x := int(v)
		return &x
	}
	for i, r := range j.Batch {
		if r < 0 || i >= len(spans) {
			continue
		}
		sd := results.ServiceStepDoc{Step: spans[i].Step, Row: int(r), StepUs: us(spans[i].End - spans[i].Start),
			Size: opt(b.Size[r]), Prefill: opt(b.Prefill[r]), Decode: opt(b.Decode[r]), Cause: analysis.BatchCause(b, r)}
		d.StepBatches = append(d.StepBatches, sd)
	}
	return d
}

// serviceDetail is what the terminal and the HTML show of the profile
// beyond the contract: the latency distributions, the batches and the KV
// cache over time.
func serviceDetail(c *analysis.ClusterResult) results.ServiceDetail {
	var d results.ServiceDetail
	s := analysis.ServiceOf(c)
	if s == nil || s.Profile == nil {
		return d
	}
	p := s.Profile
	for _, x := range []struct {
		name string
		kind analysis.ServiceLatency
	}{{"ttft", analysis.LatencyTTFT}, {"tpot", analysis.LatencyTPOT}, {"e2e", analysis.LatencyE2E}, {"queue_wait", analysis.LatencyQueueWait}} {
		if v := analysis.AppendLatency(nil, &p.Requests, x.kind); len(v) > 0 {
			d.Latency = append(d.Latency, histogram(x.name, v, 20))
		}
	}
	d.Batches = batchSeries(&p.Batches)
	d.KV = kvSeries(&p.KV)
	return d
}

// histogram bins v into bins equal-width bins over its range.
func histogram(name string, v []float64, bins int) results.ServiceDistribution {
	lo, hi := slices.Min(v), slices.Max(v)
	h := results.ServiceDistribution{Name: name, Count: len(v), MinMs: lo, MaxMs: hi, Counts: make([]int, bins)}
	w := (hi - lo) / float64(bins)
	for _, x := range v {
		i := 0
		if w > 0 {
			i = min(bins-1, int((x-lo)/w))
		}
		h.Counts[i]++
	}
	return h
}

// binOf is the bin of t in [first, last] over n bins.
func binOf(t, first, last int64, n int) int {
	if last <= first {
		return 0
	}
	return min(n-1, int(float64(t-first)/float64(last-first)*float64(n)))
}

// batchSeries is the scheduling rows in at most ServiceSeriesPoints bins
// of time.
func batchSeries(b *model.ServiceBatches) []results.ServiceBatchPoint {
	const none = model.NoServiceValue
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range b.Len() {
		if b.Kind[i] == model.BatchSchedule && b.Start[i] != none {
			first, last = min(first, b.Start[i]), max(last, b.Start[i])
		}
	}
	if first > last {
		return nil
	}
	n := results.ServiceSeriesPoints
	type acc struct {
		rows, sized, phased int
		size, pre, dec      int64
	}
	bins := make([]acc, n)
	for i := range b.Len() {
		if b.Kind[i] != model.BatchSchedule || b.Start[i] == none {
			continue
		}
		a := &bins[binOf(b.Start[i], first, last, n)]
		a.rows++
		if s := b.Size[i]; s != none {
			a.size += int64(s)
			a.sized++
		}
		if pr, de := b.Prefill[i], b.Decode[i]; pr != none && de != none {
			a.pre += int64(pr)
			a.dec += int64(de)
			a.phased++
		}
	}
	var out []results.ServiceBatchPoint
	for k, a := range bins {
		if a.rows == 0 {
			continue
		}
		pt := results.ServiceBatchPoint{TMs: float64(last-first) / 1e6 * float64(k) / float64(n), Rows: a.rows, Size: -1, Prefill: -1, Decode: -1}
		if last == first {
			pt.TMs = 0
		}
		if a.sized > 0 {
			pt.Size = float64(a.size) / float64(a.sized)
		}
		if a.phased > 0 {
			pt.Prefill, pt.Decode = float64(a.pre)/float64(a.phased), float64(a.dec)/float64(a.phased)
		}
		out = append(out, pt)
	}
	return out
}

// kvSeries is the KV cache's rows in at most ServiceSeriesPoints bins of
// time.
func kvSeries(k *model.ServiceKV) []results.ServiceKVPoint {
	const none = model.NoServiceValue
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range k.Len() {
		if k.Time[i] != none {
			first, last = min(first, k.Time[i]), max(last, k.Time[i])
		}
	}
	if first > last {
		return nil
	}
	n := results.ServiceSeriesPoints
	pts := make([]results.ServiceKVPoint, n)
	seen := make([]bool, n)
	for j := range pts {
		pts[j] = results.ServiceKVPoint{Free: -1, Usage: -1}
		if last > first {
			pts[j].TMs = float64(last-first) / 1e6 * float64(j) / float64(n)
		}
	}
	for i := range k.Len() {
		if k.Time[i] == none {
			continue
		}
		j := binOf(k.Time[i], first, last, n)
		seen[j] = true
		pt := &pts[j]
		if f := k.Free[i]; f != none && (pt.Free < 0 || int(f) < pt.Free) {
			pt.Free = int(f)
		}
		if u := float64(k.Usage[i]); !math.IsNaN(u) && u > pt.Usage {
			pt.Usage = u
		}
		if k.Event[i] == model.KVPreempt {
			pt.Preempts++
		}
	}
	var out []results.ServiceKVPoint
	for j, pt := range pts {
		if seen[j] {
			out = append(out, pt)
		}
	}
	return out
}
