package render

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// The summary's measured sections, one line each (the default): the
// tables they stand for are written under --detail tables or all. Each
// line is cut, never wrapped, to the summary's width.

// writeSectionLines writes one line per measured section.
func writeSectionLines(ew *errWriter, doc *results.Document) {
	if n := len(doc.Ranks); n > 1 {
		ew.printf("\nMeasured (medians and means over %d ranks; --detail tables shows each table)\n", n)
	} else {
		ew.printf("\nMeasured (--detail tables shows each table)\n")
	}
	writeBreakdownLine(ew, doc)
	writeSlowRanksLine(ew, doc)
	if anySteps(doc) {
		writeStepsLine(ew, doc)
	}
	writeCollectivesLine(ew, doc)
	writeMoELine(ew, doc)
	writeEventWaitLine(ew, doc)
	writeExpertsLine(ew, doc)
	writeKernelsLine(ew, doc)
	writeUnavailableCapped(ew, doc, maxUnavailableLines)
}

// column is one metric over the ranks that measured it.
func column(doc *results.Document, name string) []float64 {
	var v []float64
	for i := range doc.Ranks {
		if x, ok := doc.Ranks[i].Metrics[name]; ok {
			v = append(v, x)
		}
	}
	return v
}

// medianOf is the median of xs (ok false when empty).
func medianOf(xs []float64) (float64, bool) {
	m, _, _, _, _, ok := minMedMax(xs)
	return m, ok
}

func writeBreakdownLine(ew *errWriter, doc *results.Document) {
	win := column(doc, metric.MetricDeviceWindowUs)
	w, ok := medianOf(win)
	if !ok {
		ew.line("  window: unavailable (no device window)\n")
		return
	}
	var parts []string
	for _, q := range []struct{ name, label string }{
		{metric.MetricComputingUs, "computing"}, {metric.MetricCommNotOverlappedUs, "comm not overlapped"}, {metric.MetricFreeUs, "free"},
	} {
		if v, ok := medianOf(column(doc, q.name)); ok {
			parts = append(parts, fmt.Sprintf("%s %s", ew.l.t(q.label), pct(v, w)))
		}
	}
	ew.line("  window %s: %s\n", Dur(w), strings.Join(parts, ew.l.t(", ")))
}

func writeSlowRanksLine(ew *errWriter, doc *results.Document) {
	c := doc.Cluster
	if c == nil || len(doc.Ranks) < 2 {
		return
	}
	var parts []string
	if why, ok := c.Unavailable["slow_ranks"]; ok {
		parts = append(parts, ew.l.t("unavailable: ")+Safe(why, 200))
	} else if sk := c.Detail.Skew; sk != nil {
		var slow []int
		steps := map[int]bool{}
		for _, s := range sk.Slow {
			if s.Step < 0 {
				slow = append(slow, s.Rank)
			} else {
				steps[s.Rank] = true
			}
		}
		switch {
		case len(slow) > 0:
			idx := make([]int, len(slow))
			for i := range idx {
				idx[i] = i
			}
			parts = append(parts, rankLabels(slow, idx, maxStepOutliers))
		case len(steps) == 0:
			parts = append(parts, ew.l.t("none"))
		}
		if len(steps) > 0 {
			parts = append(parts, fmt.Sprintf(ew.l.t("outlier steps on %d rank(s)"), len(steps)))
		}
	}
	if a := c.Detail.Arrival; a != nil && a.Matched > 0 {
		parts = append(parts, fmt.Sprintf(ew.l.t("%s waited for last arrivals in %d collectives"), Dur(us(a.Wait)), a.Matched))
	}
	if len(parts) > 0 {
		ew.line("  slow ranks: %s\n", strings.Join(parts, ew.l.t("; ")))
	}
}

func writeStepsLine(ew *errWriter, doc *results.Document) {
	type agg struct {
		n   int
		win int64
	}
	by := map[int]*agg{}
	for i := range doc.Ranks {
		for _, s := range doc.Ranks[i].Detail.Steps {
			a := by[s.Step]
			if a == nil {
				a = &agg{}
				by[s.Step] = a
			}
			a.n++
			a.win += s.Window
		}
	}
	ids := slices.Sorted(maps.Keys(by))
	means := make([]float64, len(ids))
	slowest := 0
	for i, id := range ids {
		means[i] = us(by[id].win) / float64(by[id].n)
		if means[i] > means[slowest] {
			slowest = i
		}
	}
	st := summaryStats(means)
	if st == nil {
		return
	}
	ew.line("  per step: %d steps, mean %s, p90 %s, max %s (step %d)\n", len(ids), Dur(st[0]), Dur(st[2]), Dur(st[3]), ids[slowest])
}

// detailsOf are the ranks' details that get picks, in rank order, the
// ranks without one skipped.
func detailsOf[T any](doc *results.Document, get func(*results.RankDetail) *T) iter.Seq[*T] {
	return func(yield func(*T) bool) {
		for i := range doc.Ranks {
			if d := get(&doc.Ranks[i].Detail); d != nil && !yield(d) {
				return
			}
		}
	}
}

// nothingLine writes a section's line when it has nothing to show: the
// text unavailable when no rank measured it (ranks == 0), none when none
// found any (found == 0). False when there is something to show.
func (e *errWriter) nothingLine(ranks, found int, unavailable, none string) bool {
	text := none
	switch {
	case ranks == 0:
		text = unavailable
	case found > 0:
		return false
	}
	fmt.Fprint(tableWriter{e}, e.t(text)) // as line, with no value to format
	return true
}

func writeCollectivesLine(ew *errWriter, doc *results.Document) {
	type agg struct {
		count int
		total int64
	}
	by := map[string]*agg{}
	n, count, total := 0, 0, int64(0)
	for h := range detailsOf(doc, func(d *results.RankDetail) *results.HCCLDetail { return d.HCCL }) {
		n++
		for k, s := range h.ByTypeGroup {
			a := by[k]
			if a == nil {
				a = &agg{}
				by[k] = a
			}
			a.count += s.Count
			a.total += s.Total
			count += s.Count
			total += s.Total
		}
	}
	if ew.nothingLine(n, len(by), "  collectives: unavailable: no collective data\n", "  collectives: none\n") {
		return
	}
	keys := slices.Sorted(maps.Keys(by))
	top := slices.MaxFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(by[a].total, by[b].total), cmp.Compare(b, a)) })
	typ, grp, _ := strings.Cut(top, "@")
	if grp == "?" {
		grp = "unknown"
	}
	ranks := float64(n)
	ew.line("  collectives: %s/rank, %.0f ops/rank in %d type/group pairs; top %s %s %s\n", Dur(us(total)/ranks),
		float64(count)/ranks, len(by), Safe(typ, 30), Safe(grp, 30), Dur(us(by[top].total)/ranks))
}

func writeMoELine(ew *errWriter, doc *results.Document) {
	var cum, cumT, aicpu, gmm []float64
	for m := range detailsOf(doc, func(d *results.RankDetail) *results.MoEDetail { return d.MoE }) {
		if m.Routing.Count == 0 && m.Cumsum.Count == 0 && m.GMM.Count == 0 {
			continue
		}
		cum = append(cum, float64(m.Cumsum.Count))
		cumT = append(cumT, us(m.Cumsum.Total))
		aicpu = append(aicpu, float64(m.CumsumAICPU.Count))
		gmm = append(gmm, us(m.GMM.Total))
	}
	if len(cum) == 0 {
		ew.line("  MoE routing: no MoE routing kernels found\n")
		return
	}
	c, _ := medianOf(cum)
	ct, _ := medianOf(cumT)
	a, _ := medianOf(aicpu)
	g, _ := medianOf(gmm)
	ew.line("  MoE routing: Cumsum %s/rank (%s, %s on AI CPU); GroupedMatmul %s/rank\n", count(c), Dur(ct), count(a), Dur(g))
}

func writeEventWaitLine(ew *errWriter, doc *results.Document) {
	n, waits, total := 0, 0, int64(0)
	streams := map[int32]bool{}
	var cspan, cwait int64
	for e := range detailsOf(doc, func(d *results.RankDetail) *results.EventWaitDetail { return d.EventWait }) {
		n++
		for _, s := range e.Streams {
			if s.Wait.Count == 0 {
				continue
			}
			streams[s.Stream] = true
			waits += s.Wait.Count
			total += s.Wait.Total
			if s.Compute {
				cspan += s.Span
				cwait += s.Wait.Total
			}
		}
	}
	if ew.nothingLine(n, len(streams), "  EVENT_WAIT: unavailable on every rank\n", "  EVENT_WAIT: none\n") {
		return
	}
	tail := ""
	if cspan > 0 {
		tail = fmt.Sprintf(ew.l.t("; %s of the compute stream span"), pct(float64(cwait), float64(cspan)))
	}
	ew.line("  EVENT_WAIT: %s/rank, %.0f waits on %d stream(s)%s\n", Dur(us(total)/float64(n)), float64(waits)/float64(n), len(streams), tail)
}

func writeExpertsLine(ew *errWriter, doc *results.Document) {
	m, na := clusterMaps(doc)
	x := expertsOf(doc)
	if x == nil {
		ew.line("  expert load: not measured: %s\n", Safe(na["pass.experts"], 300))
		return
	}
	var parts []string
	if v, ok := m[metric.MetricExpertsImbalanceMax]; ok {
		parts = append(parts, fmt.Sprintf(ew.l.t("expert imbalance max %.2f (layer %.0f)"), v, m[metric.MetricExpertsImbalanceMaxLayer]))
	}
	if ep := x.EP; ep != nil {
		w := ep.Groups[ep.Worst]
		parts = append(parts, fmt.Sprintf(ew.l.t("EP-rank GroupedMatmul max/mean %.2f (rank %d)"), w.MaxOverMean, w.MaxRank))
	}
	if v, ok := m[metric.MetricSkewGMMLostUs]; ok {
		parts = append(parts, fmt.Sprintf(ew.l.t("%s/layer lost"), Dur(v)))
	}
	if len(parts) == 0 {
		ew.line("  expert load: unavailable: %s\n", Safe(na[metric.MetricExpertsImbalanceMax], 300))
		return
	}
	ew.line("  expert load: %s\n", strings.Join(parts, ew.l.t("; ")))
}

func writeKernelsLine(ew *errWriter, doc *results.Document) {
	list := kernelTotals(doc)
	if len(list) == 0 {
		ew.line("  top kernel: none\n")
		return
	}
	var all int64
	for i := range doc.Ranks {
		if doc.Ranks[i].Detail.Kernels != nil {
			all += int64(value(doc.Ranks[i].Metrics, metric.MetricComputingUs) * 1000)
		}
	}
	top := list[0]
	share := ""
	if all > 0 {
		share = fmt.Sprintf(ew.l.t(", %s of computing"), pct(float64(top.total), float64(all)))
	}
	ew.line("  top kernel: %s over %d calls%s: %s\n", Dur(us(top.total)), top.count, share, Safe(top.name, 60))
}
