package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// serviceLatencies are the latency rows of the service section: label,
// p50, p90 and p99 metrics.
var serviceLatencies = []struct {
	label string
	p     [3]string
}{
	{"TTFT", [3]string{metric.MetricServiceTTFTP50Ms, metric.MetricServiceTTFTP90Ms, metric.MetricServiceTTFTP99Ms}},
	{"TPOT", [3]string{metric.MetricServiceTPOTP50Ms, metric.MetricServiceTPOTP90Ms, metric.MetricServiceTPOTP99Ms}},
	{"end-to-end", [3]string{metric.MetricServiceE2EP50Ms, metric.MetricServiceE2EP90Ms, metric.MetricServiceE2EP99Ms}},
	{"queue wait", [3]string{metric.MetricServiceQueueWaitP50Ms, metric.MetricServiceQueueWaitP90Ms, metric.MetricServiceQueueWaitP99Ms}},
}

// serviceSpellings is the profile's column spellings, each once.
func serviceSpellings(s *results.ServiceDoc) string {
	var out []string
	for _, f := range s.Files {
		if sp := s.Spellings[f]; sp != "" && !slices.Contains(out, sp) {
			out = append(out, sp)
		}
	}
	return strings.Join(out, ", ")
}

// serviceIssue says what of one file was not read.
func serviceIssue(is results.ServiceFileIssue) string {
	switch {
	case is.Unread != "":
		return fmt.Sprintf("%s unread (%s)", is.File, is.Unread)
	case is.Cut && is.BadRows > 0:
		return fmt.Sprintf("%s cut short, %d bad row(s) from line %d", is.File, is.BadRows, is.FirstBadLine)
	case is.Cut:
		return is.File + " cut short"
	}
	return fmt.Sprintf("%s: %d bad row(s) from line %d", is.File, is.BadRows, is.FirstBadLine)
}

// writeService writes the service profile's section of the terminal
// summary, at most 10 lines: the files, the requests, the four latencies,
// the batches, the DP domains, the KV cache and the device join.
func writeService(ew *errWriter, s *results.ServiceDoc) {
	if s == nil {
		return
	}
	m := s.Metrics
	has := func(k string) bool { _, ok := m[k]; return ok }
	head := Safe(s.Source, 200) + ": " + Safe(strings.Join(s.Files, ", "), 200) + "; " + serviceSpellings(s)
	if s.Partial {
		var why []string
		for _, is := range s.Issues {
			why = append(why, serviceIssue(is))
		}
		head += "; PARTIAL: " + Safe(strings.Join(why, "; "), 300)
	}
	ew.printf("\nService profile (%s)\n", head)
	var parts []string
	if has(metric.MetricServiceRequestsCount) {
		parts = append(parts, fmt.Sprintf(ew.t("%s requests"), count(m[metric.MetricServiceRequestsCount])))
	}
	if has(metric.MetricServiceOutputTPS) {
		parts = append(parts, fmt.Sprintf(ew.t("output %.1f tok/s"), m[metric.MetricServiceOutputTPS]))
	}
	if has(metric.MetricServiceCacheHitMean) {
		parts = append(parts, fmt.Sprintf(ew.t("prefix-cache hit %s"), pctOf1(m[metric.MetricServiceCacheHitMean])))
	}
	if len(parts) > 0 {
		ew.printf("  %s\n", strings.Join(parts, ", "))
	}
	for _, l := range serviceLatencies {
		if !has(l.p[0]) {
			continue
		}
		ew.printf("  %-10s  p50 %9.2f  p90 %9.2f  p99 %9.2f ms\n", ew.t(l.label), m[l.p[0]], m[l.p[1]], m[l.p[2]])
	}
	if has(metric.MetricServiceBatchCount) {
		line := fmt.Sprintf(ew.t("%s batches"), count(m[metric.MetricServiceBatchCount]))
		if has(metric.MetricServiceBatchSizeMean) {
			line += fmt.Sprintf(ew.t(", mean size %.1f"), m[metric.MetricServiceBatchSizeMean])
		}
		if has(metric.MetricServiceBatchMixedShare) {
			line += fmt.Sprintf(ew.t(", %s mix prefill into decode"), pctOf1(m[metric.MetricServiceBatchMixedShare]))
		}
		if has(metric.MetricServiceBatchMixedTimeRatio) {
			line += fmt.Sprintf(ew.t(" (%.2fx the decode-only batch time)"), m[metric.MetricServiceBatchMixedTimeRatio])
		}
		ew.printf("  %s\n", line)
	}
	if len(s.DP) > 0 {
		var shares []string
		for _, d := range s.DP {
			if d.BusyShare != nil {
				shares = append(shares, fmt.Sprintf("dp%d %s", d.DP, pctOf1(*d.BusyShare)))
			}
		}
		busy := 0
		for _, d := range s.DP {
			if d.Busy {
				busy++
			}
		}
		line := fmt.Sprintf(ew.t("DP domains: %d, %d with requests"), len(s.DP), busy)
		if len(shares) > 0 {
			line += fmt.Sprintf(ew.t("; busy share %s"), Safe(strings.Join(shares, ", "), 200))
		}
		ew.printf("  %s\n", line)
	}
	var kv []string
	if has(metric.MetricServiceKVFreeBlocksMin) {
		kv = append(kv, fmt.Sprintf(ew.t("free blocks min %s"), count(m[metric.MetricServiceKVFreeBlocksMin])))
	}
	if has(metric.MetricServiceKVUsageMax) {
		kv = append(kv, fmt.Sprintf(ew.t("usage max %s"), pctOf1(m[metric.MetricServiceKVUsageMax])))
	}
	if has(metric.MetricServiceKVPreemptionsCount) {
		kv = append(kv, fmt.Sprintf(ew.t("%s preemption(s)"), count(m[metric.MetricServiceKVPreemptionsCount])))
	}
	if len(kv) > 0 {
		ew.printf("  %s%s\n", ew.t("KV cache: "), strings.Join(kv, ", "))
	}
	if j := s.Join; j != nil {
		line := fmt.Sprintf(ew.t("rank %d steps: %d/%d matched, clock offset %.1f µs"), j.Rank, j.Matched, j.Steps, j.ClockOffsetUs)
		if j.MixedStepRatio != nil && j.MixedShare != nil {
			line += fmt.Sprintf(ew.t("; %s mix prefill: %.2fx the decode step"), pctOf1(*j.MixedShare), *j.MixedStepRatio)
		}
		ew.printf("  %s\n", line)
	}
}
