package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

func f64(v float64) *float64 { return &v }

// serviceDoc is a document of a service profile alone, cut short, joined
// to a rank's device steps.
func serviceDoc() *results.Document {
	m := map[string]float64{
		metric.MetricServiceRequestsCount: 90, metric.MetricServiceOutputTPS: 596.8, metric.MetricServiceCacheHitMean: 0.023,
		metric.MetricServiceBatchCount: 83, metric.MetricServiceBatchSizeMean: 46.9, metric.MetricServiceBatchMixedShare: 0.277,
		metric.MetricServiceKVFreeBlocksMin: 3344, metric.MetricServiceKVUsageMax: 0.184, metric.MetricServiceKVPreemptionsCount: 3,
	}
	for i, l := range serviceLatencies {
		for q, k := range l.p {
			m[k] = float64(100*(i+1) + q)
		}
	}
	return &results.Document{Schema: results.Schema, Input: results.Input{Path: "svc"}, Ranks: []results.RankDoc{},
		Detail: results.Detail{Built: true},
		Service: &results.ServiceDoc{Metrics: m, Source: "svc", Files: []string{"request.csv", "batch.csv"},
			Spellings: map[string]string{"request.csv": "datetime", "batch.csv": "datetime"}, Partial: true,
			Issues: []results.ServiceFileIssue{{File: "batch.csv", Cut: true}},
			DP:     []results.ServiceDPDoc{{DP: 0, Busy: true, BusyShare: f64(0.99)}, {DP: 1, BusyShare: f64(0)}},
			Join: &results.ServiceJoinDoc{Rank: 0, Batches: "execution", ClockOffsetUs: -420, Steps: 4, Matched: 4,
				MixedSteps: 1, DecodeSteps: 3, MixedShare: f64(0.25), MixedStepRatio: f64(2.3)}}}
}

// The terminal's service section: at most 10 lines, the cut file named,
// the latencies, the batches, the DP domains, the KV cache and the join.
func TestTextServiceSection(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, serviceDoc()))
	out := b.String()
	_, sec, ok := strings.Cut(out, "\nService profile (")
	require.True(t, ok, out)
	sec, _, _ = strings.Cut(sec, "\n\n")
	lines := strings.Split(sec, "\n")
	require.LessOrEqual(t, len(lines), 10, sec)
	require.Contains(t, lines[0], "svc: request.csv, batch.csv; datetime; PARTIAL: batch.csv cut short")
	require.Contains(t, sec, "90 requests, output 596.8 tok/s, prefix-cache hit 2.3%")
	require.Contains(t, sec, "TTFT        p50    100.00  p90    101.00  p99    102.00 ms")
	require.Contains(t, sec, "queue wait  p50    400.00")
	require.Contains(t, sec, "83 batches, mean size 46.9, 27.7% mix prefill into decode")
	require.Contains(t, sec, "DP domains: 2, 1 with requests; busy share dp0 99.0%, dp1 0.0%")
	require.Contains(t, sec, "KV cache: free blocks min 3344, usage max 18.4%, 3 preemption(s)")
	require.Contains(t, sec, "rank 0 steps: 4/4 matched, clock offset -420.0 µs; 25.0% mix prefill: 2.30x the decode step")
}

// The HTML report's service section: the latency distributions, the batch
// composition and KV cache over time and the load per DP domain, the cut
// file named.
func TestHTMLServiceSection(t *testing.T) {
	doc := serviceDoc()
	doc.Service.Detail = results.ServiceDetail{
		Latency: []results.ServiceDistribution{{Name: "ttft", Count: 3, MinMs: 10, MaxMs: 30, Counts: []int{1, 1, 1}}},
		Batches: []results.ServiceBatchPoint{{TMs: 0, Rows: 2, Size: 3, Prefill: 1, Decode: 2}, {TMs: 50, Rows: 1, Size: 4, Prefill: 0, Decode: 4}},
		KV:      []results.ServiceKVPoint{{TMs: 0, Free: 100, Usage: 0.5}, {TMs: 50, Free: 20, Usage: 0.9, Preempts: 1}},
	}
	var b bytes.Buffer
	require.NoError(t, WriteHTML(&b, doc))
	out := b.String()
	require.Contains(t, out, `<section id="service"`)
	require.Contains(t, out, "batch.csv cut short")
	require.Contains(t, out, "clock offset -420.0 µs")
	for _, id := range []string{"chart-service-latency-ttft", "chart-service-batches", "chart-service-kv", "chart-service-dp"} {
		require.Contains(t, out, `id="`+id+`"`, id)
	}
}
