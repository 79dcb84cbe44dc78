package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// The report's data sections, each built once from the analysis result
// and the JSON document's metrics (rankMetrics). See htmlview.go.

var stepFields = []struct{ key, label string }{
	{"window_us", "window"}, {"computing_us", "computing"}, {"communication_us", "communication"},
	{"communication_not_overlapped_us", "comm. not overlapped"}, {"overlapped_us", "overlapped"}, {"free_us", "free"},
}

func buildBreakdown(v *htmlView, doc *results.Document, rms []rankMetrics) {
	b := &v.Breakdown
	if b.LedgerChart = ledgerChart(doc); b.LedgerChart != nil {
		v.addChart(b.LedgerChart)
	}
	b.Rows = func(yield func([]cell) bool) {
		for _, r := range rms {
			if !yield(breakdownRow(r)) {
				return
			}
		}
	}
	b.Chart = breakdownChart(rms)
	v.addChart(b.Chart)

	for _, rd := range doc.Ranks {
		if len(rd.Steps) > 0 {
			b.HaveSteps = true
			if why, ok := rd.Unavailable[metric.StepCommKeys[0]]; ok {
				b.StepUnavailable = append(b.StepUnavailable, kv{rankLabel(rd.Rank),
					"per-step communication, overlapped, not overlapped and free: " + cleanText(why, 0)})
			}
		}
	}
	if !b.HaveSteps {
		return
	}
	rows := 0
	for _, rd := range doc.Ranks {
		for _, s := range rd.Steps {
			if rows >= maxStepRowsTable {
				break
			}
			row := []cell{rankCell(rd.Rank), {Text: strconv.Itoa(s.Step), Num: true, Sort: strconv.Itoa(s.Step)}}
			for _, f := range stepFields {
				val, ok := s.Value(f.key)
				if !ok {
					why := rd.Unavailable["steps."+f.key]
					if why == "" {
						why = "not measured"
					}
					row = append(row, cell{Text: "unavailable", NA: cleanText(why, 0)})
					continue
				}
				row = append(row, cell{Text: Dur(val), Num: true, Rank: rd.Rank, Metric: fmt.Sprintf("step.%d.%s", s.Step, f.key), Raw: raw(val)})
			}
			if s.Tasks != nil {
				row = append(row, cell{Text: intText(float64(*s.Tasks)), Num: true, Sort: strconv.Itoa(*s.Tasks)})
			} else {
				row = append(row, cell{Text: "unavailable", NA: "a step read from " + rd.Sources.Get("steps") + " counts no tasks"})
			}
			b.StepRows = append(b.StepRows, row)
			rows++
		}
	}
	total := 0
	for _, rd := range doc.Ranks {
		total += len(rd.Steps)
	}
	if total > rows {
		b.StepNote = fmt.Sprintf("The table lists the first %d of %d rank-steps; the chart shows up to %d steps per rank (evenly spaced when there are more). All steps are in the JSON document.", rows, total, maxStepsChart)
	}
	b.StepChart = stepsChart(doc)
	for _, rd := range doc.Ranks {
		b.StepSelect = append(b.StepSelect, rankLabel(rd.Rank))
	}
	v.addChart(b.StepChart)
}

// breakdownRow is a rank's row of the time breakdown table.
func breakdownRow(r rankMetrics) []cell {
	win, ok := r.get(metric.MetricDeviceWindowUs)
	share := txt("–")
	if f, ok2 := r.get(metric.MetricFreeUs); ok && ok2 {
		share = numc(pctText(f, win), f/win)
	}
	return []cell{rankCell(r.rank), r.dur(metric.MetricDeviceWindowUs), r.dur(metric.MetricComputingUs),
		r.dur(metric.MetricCommunicationUs), r.dur(metric.MetricCommNotOverlappedUs),
		r.dur(metric.MetricOverlappedUs), r.dur(metric.MetricFreeUs), share}
}

func buildComm(v *htmlView, doc *results.Document, rms []rankMetrics) {
	c := &v.Comm
	typeSet, groupSet := map[string]bool{}, map[string]bool{}
	any := false
	for i := range doc.Ranks {
		rr := &doc.Ranks[i]
		if rr.Detail.HCCL == nil {
			c.Unavailable = append(c.Unavailable, kv{rankLabel(rr.Rank), cleanText(rms[i].why(metric.MetricHCCLTotalUs), 0)})
			continue
		}
		any = true
		for _, t := range rr.Detail.HCCL.Types {
			typeSet[t] = true
		}
		for _, g := range rr.Detail.HCCL.Groups {
			groupSet[g] = true
		}
	}
	if !any {
		return
	}
	types := slices.Sorted(maps.Keys(typeSet))
	groups := slices.Sorted(maps.Keys(groupSet))
	if len(types) == 0 {
		c.Empty = true
		return
	}
	c.TypeChart = rankChart("comm-type", "Collective time by type", rms, types, metric.FamilyHCCLTypeUs.Of, nil)
	v.addChart(c.TypeChart)
	if len(groups) > 0 {
		c.GroupChart = rankChart("comm-group", "Collective time by group", rms, groups, metric.FamilyHCCLGroupUs.Of, nil)
		v.addChart(c.GroupChart)
	}
	c.TypePivot, c.GroupPivot = commPivots(doc, rms, types, groups)
	commPairRows(c, doc, rms)
	if len(groups) == 0 {
		c.GroupNote = "Collectives could not be attributed to groups: " + rms[0].why(metric.UnavailableHCCLGroups)
	}
}

// commRowSpec is one row of a collectives pivot: its label, class and cell
// per rank.
type commRowSpec struct {
	label, class string
	cell         func(i int, rr *results.RankDoc) cell
}

// commShare is t as a share of rank r's device window ("" when unknown).
func commShare(r rankMetrics, t float64) string {
	if w, ok := r.get(metric.MetricDeviceWindowUs); ok && w > 0 {
		return pctText(t, w)
	}
	return ""
}

// commMetricCell is a pivot cell: a time metric with its count and share.
func commMetricCell(rms []rankMetrics, timeMetric, countMetric, unit string) func(i int, rr *results.RankDoc) cell {
	return func(i int, rr *results.RankDoc) cell {
		r := rms[i]
		if rr.Detail.HCCL == nil {
			return cell{Text: "unavailable", NA: cleanText(r.why(metric.MetricHCCLTotalUs), 0)}
		}
		tm, ok := r.get(timeMetric)
		if !ok {
			return cell{Text: "–", Num: true}
		}
		c := r.dur(timeMetric)
		c.Sub = []cell{r.cell(countMetric, func(v float64) string { return intText(v) + unit }), {Text: commShare(r, tm)}}
		return c
	}
}

// commPivot is a pivot of specs (rows) by rank (columns).
func commPivot(doc *results.Document, rms []rankMetrics, corner string, specs []commRowSpec) *pivot {
	// ranks as rows, the types (groups) as columns: a table as wide at
	// 256 ranks as at 2
	pv := &pivot{Corner: "rank"}
	for _, sp := range specs {
		pv.Cols = append(pv.Cols, sp.label)
	}
	names := rankNames(rms)
	for i := range doc.Ranks {
		pv.Rows = append(pv.Rows, pivotRow{Label: names[i], Cells: func(yield func(cell) bool) {
			for _, sp := range specs {
				c := sp.cell(i, &doc.Ranks[i])
				if sp.class != "" {
					c.Class = strings.TrimSpace(c.Class + " " + sp.class)
				}
				if !yield(c) {
					return
				}
			}
		}})
	}
	return pv
}

// commPivots are the collectives by type and by group (nil: no group).
func commPivots(doc *results.Document, rms []rankMetrics, types, groups []string) (byType, byGroup *pivot) {
	var tspecs []commRowSpec
	for _, t := range types {
		tspecs = append(tspecs, commRowSpec{label: cleanText(t, 60), cell: commMetricCell(rms, metric.FamilyHCCLTypeUs.Of(t), metric.FamilyHCCLTypeCount.Of(t), " ops")})
	}
	tspecs = append(tspecs, commRowSpec{label: "total", class: "total", cell: commMetricCell(rms, metric.MetricHCCLTotalUs, metric.MetricHCCLTotalCount, " ops")})
	byType = commPivot(doc, rms, "type", tspecs)
	var gspecs []commRowSpec
	for _, g := range groups {
		gspecs = append(gspecs, commRowSpec{label: cleanText(g, 60), cell: commMetricCell(rms, metric.FamilyHCCLGroupUs.Of(g), metric.FamilyHCCLGroupCount.Of(g), " ops")})
	}
	anyUnknown := false
	for i := range doc.Ranks {
		if h := doc.Ranks[i].Detail.HCCL; h != nil && h.UnknownGroup.Count > 0 {
			anyUnknown = true
		}
	}
	if anyUnknown {
		gspecs = append(gspecs, commRowSpec{label: "unknown group", class: "muted", cell: func(i int, rr *results.RankDoc) cell {
			if rr.Detail.HCCL == nil {
				return cell{Text: "unavailable", NA: cleanText(rms[i].why(metric.MetricHCCLTotalUs), 0)}
			}
			u := rr.Detail.HCCL.UnknownGroup
			if u.Count == 0 {
				return cell{Text: "–", Num: true}
			}
			c := numc(Dur(us(u.Total)), us(u.Total))
			c.Sub = []cell{{Text: intText(float64(u.Count)) + " ops"}, {Text: commShare(rms[i], us(u.Total))}}
			return c
		}})
	}
	if len(gspecs) > 0 {
		byGroup = commPivot(doc, rms, "group", gspecs)
	}
	return byType, byGroup
}

// commPairRows are the (type, group) rows of every rank.
func commPairRows(c *commView, doc *results.Document, rms []rankMetrics) {
	some := false
	for i := range doc.Ranks {
		if h := doc.Ranks[i].Detail.HCCL; h != nil && len(h.ByTypeGroup) > 0 {
			some = true
		}
	}
	c.PairRows = lazy(some, func(yield func([]cell) bool) {
		for i := range doc.Ranks {
			rr := &doc.Ranks[i]
			if rr.Detail.HCCL == nil {
				continue
			}
			r := rms[i]
			win, haveWin := r.get(metric.MetricDeviceWindowUs)
			for _, k := range slices.Sorted(maps.Keys(rr.Detail.HCCL.ByTypeGroup)) {
				s := rr.Detail.HCCL.ByTypeGroup[k]
				t, g, _ := strings.Cut(k, "@")
				if g == "?" {
					g = "unknown"
				}
				sh := txt("–")
				if haveWin {
					sh = numc(pctText(us(s.Total), win), us(s.Total)/win)
				}
				if !yield([]cell{rankCell(rr.Rank), txt(cleanText(t, 60)), txt(cleanText(g, 60)), numc(intText(float64(s.Count)), float64(s.Count)),
					numc(Dur(us(s.Total)), us(s.Total)), numc(Dur(us(s.Total)/float64(max(s.Count, 1))), us(s.Total)/float64(max(s.Count, 1))), sh}) {
					return
				}
			}
		}
	})
}

// meanCell is time/count of two metrics (a presentation ratio).
func meanCell(r rankMetrics, timeMetric, countMetric string) cell {
	t, ok1 := r.get(timeMetric)
	n, ok2 := r.get(countMetric)
	if !ok1 || !ok2 || n == 0 {
		return txt("–")
	}
	return numc(Dur(t/n), t/n)
}

var moeBuckets = []struct{ metric, label, color string }{
	{metric.MetricMoEGatingUs, "gating (MoeGatingTopK)", "#64748b"},
	{metric.MetricMoERoutingUs, "routing (MoeInitRouting*)", "#0ea5e9"},
	{metric.MetricMoECumsumUs, "Cumsum (routing path)", "#f97316"},
	{metric.MetricMoEDispatchUs, "dispatch", "#a855f7"},
	{metric.MetricMoEGMMUs, "GroupedMatmul", "#22c55e"},
	{metric.MetricMoECombineUs, "combine", "#ec4899"},
}

func buildMoE(v *htmlView, doc *results.Document, rms []rankMetrics) {
	m := &v.MoE
	found := false
	for i := range doc.Ranks {
		rr := &doc.Ranks[i]
		mo := rr.Detail.MoE
		if mo == nil {
			m.Unavailable = append(m.Unavailable, kv{rankLabel(rr.Rank), cleanText(rms[i].why(metric.MetricMoERoutingUs), 0)})
			continue
		}
		if mo.Routing.Count > 0 || mo.Cumsum.Count > 0 || mo.GMM.Count > 0 || mo.Dispatch.Count > 0 || mo.Combine.Count > 0 {
			found = true
		}
	}
	if !found {
		m.None = len(m.Unavailable) < len(doc.Ranks)
		return
	}
	// found: a rank has MoE results, so a row
	m.Rows = func(yield func([]cell) bool) {
		for i := range doc.Ranks {
			if doc.Ranks[i].Detail.MoE != nil && !yield(moeRow(rms[i])) {
				return
			}
		}
	}
	var series []string
	colors := map[string]string{}
	labels := map[string]string{}
	for _, b := range moeBuckets {
		for _, r := range rms {
			if val, ok := r.get(b.metric); ok && val > 0 {
				series = append(series, b.metric)
				colors[b.metric] = b.color
				labels[b.metric] = b.label
				break
			}
		}
	}
	if len(series) > 0 {
		m.Buckets = rankChart("moe-buckets", "MoE time by bucket", rms, series, func(s string) string { return s },
			&seriesStyle{labels: labels, colors: colors})
		v.addChart(m.Buckets)
	}
	// GroupedMatmul skew over ranks (max/min of moe.gmm.time_us).
	hi, lo := -1, -1
	for i, r := range rms {
		val, ok := r.get(metric.MetricMoEGMMUs)
		if !ok || val <= 0 {
			continue
		}
		if hi < 0 || val > rms[hi].m[metric.MetricMoEGMMUs] {
			hi = i
		}
		if lo < 0 || val < rms[lo].m[metric.MetricMoEGMMUs] {
			lo = i
		}
	}
	if hi >= 0 && len(rms) > 1 {
		h, l := rms[hi].m[metric.MetricMoEGMMUs], rms[lo].m[metric.MetricMoEGMMUs]
		m.GMMSkew = fmt.Sprintf("GroupedMatmul time: slowest %s %s, fastest %s %s (max/min %.2f×).",
			rankLabel(rms[hi].rank), Dur(h), rankLabel(rms[lo].rank), Dur(l), h/l)
	}
	layers := moeLayerStats(doc)
	if layers != nil {
		m.LayerChart, m.LayerHeat = layerCharts(layers)
		v.addChart(m.LayerChart)
		v.addChart(m.LayerHeat)
		m.LayerNote = layers.note
	}
}

// moeRow is a rank's row of the MoE table.
func moeRow(r rankMetrics) []cell {
	fb := metric.MetricMoERoutingUs
	return []cell{rankCell(r.rank), r.count(metric.MetricMoERoutingCount, fb), r.dur(metric.MetricMoERoutingUs),
		r.count(metric.MetricMoECumsumCount, fb), r.dur(metric.MetricMoECumsumUs), r.count(metric.MetricMoECumsumAICPUCount, fb),
		meanCell(r, metric.MetricMoECumsumUs, metric.MetricMoECumsumCount), r.dur(metric.MetricMoEGMMUs), r.count(metric.MetricMoEGMMTokens, fb),
		r.dur(metric.MetricMoEDispatchUs, fb), r.dur(metric.MetricMoECombineUs, fb)}
}

// layerStats are MoE routing and Cumsum durations by layer position: the
// n-th MoeInitRouting* of a step is layer n. Values are the mean over that
// position's occurrences (over steps) per rank, in µs.
type layerStats struct {
	ranks     []int
	positions int
	routing   [][]float64 // [rank][pos], NaN when absent
	cumsum    [][]float64
	note      string
}

func moeLayerStats(doc *results.Document) *layerStats {
	ls := &layerStats{}
	binned := false
	for r := range doc.Ranks {
		rr := &doc.Ranks[r]
		mo := rr.Detail.MoE
		if mo == nil || len(mo.Positions) == 0 {
			continue
		}
		binned = binned || mo.PositionsCapped
		rrow, crow := make([]float64, len(mo.Positions)), make([]float64, len(mo.Positions))
		for i, p := range mo.Positions {
			rrow[i], crow[i] = p.RoutingUs, p.CumsumUs
		}
		ls.ranks = append(ls.ranks, rr.Rank)
		ls.routing = append(ls.routing, rrow)
		ls.cumsum = append(ls.cumsum, crow)
		ls.positions = max(ls.positions, len(rrow))
	}
	if len(ls.ranks) == 0 {
		return nil
	}
	ls.note = "Layer n is the n-th MoeInitRouting* kernel of a profiler step (of the whole capture when there are no steps); values are the mean over that layer's occurrences."
	if binned {
		ls.note += fmt.Sprintf(" Only the first %d layer positions per step are drawn.", maxLayerPositions)
	}
	return ls
}

func buildWait(v *htmlView, doc *results.Document, rms []rankMetrics) {
	w := &v.Wait
	streamSet := map[int32]bool{}
	computeStream := map[int32]bool{}
	span := map[[2]int]int64{} // (rank index, stream) -> span
	var longest []longWait
	for i := range doc.Ranks {
		rr := &doc.Ranks[i]
		r := rms[i]
		if rr.Detail.EventWait == nil {
			w.Unavailable = append(w.Unavailable, kv{rankLabel(rr.Rank), cleanText(r.why(metric.MetricEventWaitUs), 0)})
			continue
		}
		for _, s := range rr.Detail.EventWait.Streams {
			if s.Wait.Count == 0 {
				continue
			}
			streamSet[s.Stream] = true
			if s.Compute {
				computeStream[s.Stream] = true
			}
			span[[2]int{i, int(s.Stream)}] = s.Span
		}
		var origin int64
		if rr.Detail.Timeline != nil {
			origin = rr.Detail.Timeline.WindowStart
		}
		k := 0
		for _, wt := range rr.Detail.EventWait.Longest {
			if k >= maxWaitsPerRank || wt.Dur <= 0 {
				break
			}
			k++
			e := longWait{rank: rr.Rank, stream: wt.Stream, dur: wt.Dur, start: wt.Start, rel: wt.Start - origin}
			if wt.HasNext {
				e.next, e.nextD, e.nextOK = wt.NextName, wt.NextDur, true
			}
			longest = append(longest, e)
		}
	}
	if len(streamSet) > 0 {
		pv, metrics, labels := waitPivot(doc, rms, streamSet, computeStream, span)
		w.Streams = pv
		w.Chart = rankChart("wait-streams", "EVENT_WAIT time by stream", rms, metrics, func(s string) string { return s }, &seriesStyle{labels: labels})
		v.addChart(w.Chart)
	}
	waitLongest(w, longest)
}

// longWait is one of the longest EVENT_WAITs of a rank (the HTML table).
type longWait struct {
	rank   int
	stream int32
	dur    int64
	start  int64
	next   string
	nextD  int64
	nextOK bool
	rel    int64
}

// waitPivot is the EVENT_WAIT time of each stream (rows) by rank
// (columns), with the chart's metrics and series labels.
func waitPivot(doc *results.Document, rms []rankMetrics, streamSet, computeStream map[int32]bool, span map[[2]int]int64) (pv *pivot, metrics []string, labels map[string]string) {
	var ids []int
	for st := range streamSet {
		ids = append(ids, int(st))
	}
	slices.Sort(ids)
	labels = map[string]string{}
	pv = &pivot{Corner: "stream", Cols: rankNames(rms)}
	for _, id := range ids {
		timeUs := metric.FamilyEventWaitStreamUs.Of(strconv.Itoa(id))
		label := "stream " + strconv.Itoa(id)
		if computeStream[int32(id)] {
			label += " (compute)"
		}
		labels[timeUs] = label
		metrics = append(metrics, timeUs)
		pv.Rows = append(pv.Rows, pivotRow{Label: label, Cells: func(yield func(cell) bool) {
			for i := range doc.Ranks {
				if !yield(waitCell(doc, rms[i], i, id, timeUs, span)) {
					return
				}
			}
		}})
	}
	return pv, metrics, labels
}

// waitCell is rank i's EVENT_WAIT time on stream id (metric timeUs).
func waitCell(doc *results.Document, r rankMetrics, i, id int, timeUs string, span map[[2]int]int64) cell {
	if doc.Ranks[i].Detail.EventWait == nil {
		return cell{Text: "unavailable", NA: cleanText(r.why(metric.MetricEventWaitUs), 0)}
	}
	tm, ok := r.get(timeUs)
	if !ok {
		return cell{Text: "–", Num: true}
	}
	c := r.dur(timeUs)
	sh := ""
	if sp := span[[2]int{i, id}]; sp > 0 {
		sh = pctText(tm, us(sp)) + " of span"
	}
	c.Sub = []cell{r.cell(metric.FamilyEventWaitStreamCount.Of(strconv.Itoa(id)), func(v float64) string { return intText(v) + " waits" }), {Text: sh}}
	return c
}

// waitLongest lists the longest waits, at most maxWaitRows.
func waitLongest(w *waitView, longest []longWait) {
	slices.SortStableFunc(longest, func(a, b longWait) int { return cmp.Or(cmp.Compare(b.dur, a.dur), cmp.Compare(a.rank, b.rank)) })
	if len(longest) > maxWaitRows {
		w.LongestNote = fmt.Sprintf("The %d longest of %d listed waits.", maxWaitRows, len(longest))
		longest = longest[:maxWaitRows]
	}
	for _, e := range longest {
		next, nd := cell{Text: "(end of stream)", Class: "muted"}, txt("–")
		if e.nextOK {
			next = cell{Text: cleanText(e.next, maxTextLen), Class: "mono"}
			nd = numc(Dur(us(e.nextD)), us(e.nextD))
		}
		w.Longest = append(w.Longest, []cell{rankCell(e.rank), {Text: strconv.Itoa(int(e.stream)), Num: true, Sort: strconv.Itoa(int(e.stream))},
			numc(Dur(us(e.dur)), us(e.dur)), numc(Dur(us(e.rel)), us(e.rel)), next, nd})
	}
}

func buildKernels(v *htmlView, doc *results.Document, rms []rankMetrics) {
	k := &v.Kernels
	total := 0
	for i := range doc.Ranks {
		rr := &doc.Ranks[i]
		if rr.Detail.Kernels == nil {
			k.Unavailable = append(k.Unavailable, kv{rankLabel(rr.Rank), cleanText(rms[i].why(metric.MetricKernelComputeUs), 0)})
			continue
		}
		k.Ranks = append(k.Ranks, strconv.Itoa(rr.Rank))
		total += len(rr.Detail.Kernels.Top)
	}
	shown := min(total, maxKernelRows)
	k.Rows = lazy(shown > 0, func(yield func([]cell) bool) {
		n := 0
		for i := range doc.Ranks {
			rr := &doc.Ranks[i]
			if rr.Detail.Kernels == nil {
				continue
			}
			for _, ks := range rr.Detail.Kernels.Top {
				if n >= shown {
					return
				}
				n++
				if !yield([]cell{rankCell(rr.Rank), {Text: cleanText(ks.Name, maxTextLen), Class: "mono name"}, txt(cleanText(orDash(ks.OpType), 80)),
					txt(cleanText(orDash(ks.Core), 40)), numc(intText(float64(ks.Count)), float64(ks.Count)), numc(Dur(us(ks.Total)), us(ks.Total)),
					numc(Dur(ks.Mean), ks.Mean), numc(Dur(ks.P50), ks.P50), numc(Dur(ks.P99), ks.P99)}) {
					return
				}
			}
		}
	})
	if total > shown {
		k.Note = fmt.Sprintf("Showing %d of %d rank×kernel rows.", shown, total)
	}
	if len(k.Ranks) > 0 {
		k.Note = strings.TrimSpace(fmt.Sprintf("Top %d compute kernels per rank by total time. %s", metric.TopKernels, k.Note))
	}
}

// skewMetrics are the rank-skew heatmap's columns.
// kept: the heatmap's columns as data, a metric and its label a line
var skewMetrics = []struct{ metric, label string }{
	{metric.MetricDeviceWindowUs, "window"},
	{metric.MetricComputingUs, "computing"},
	{metric.MetricCommunicationUs, "communication"},
	{metric.MetricCommNotOverlappedUs, "comm. not overlapped"},
	{metric.MetricFreeUs, "free"},
	{metric.MetricHCCLTotalUs, "HCCL total"},
	{metric.MetricMoERoutingUs, "MoE routing"},
	{metric.MetricMoECumsumUs, "MoE Cumsum"},
	{metric.MetricMoEGMMUs, "GroupedMatmul"},
	{metric.MetricMoEDispatchUs, "dispatch"},
	{metric.MetricMoECombineUs, "combine"},
	{metric.MetricEventWaitUs, "EVENT_WAIT"},
	{metric.MetricKernelComputeUs, "kernel time (sum)"},
}

func buildSkew(v *htmlView, rms []rankMetrics) {
	v.Skew.Chart = skewChart(rms)
	if v.Skew.Chart == nil {
		v.Skew.Note = "No metric was measured on any rank."
		return
	}
	v.Skew.Note = "Each metric is normalized to its median over ranks: 1.00 is a typical rank, red is more time than the median, blue less. Hover a cell for the measured value; blank cells are unavailable on that rank."
	v.addChart(v.Skew.Chart)
}

func buildExperts(v *htmlView, e *ExpertLoads) *expertView {
	ev := &expertView{Source: cleanText(e.Source, 0)}
	ev.Chart = expertChart(e)
	if len(e.Layers)*len(e.Experts) > maxExpertHeatCells {
		ev.Note = fmt.Sprintf("Only the first %d layer×expert cells are drawn.", maxExpertHeatCells)
	}
	v.addChart(ev.Chart)
	return ev
}

func buildUnmeasured(v *htmlView, doc *results.Document) {
	seen := map[string][]int{}
	for _, rd := range doc.Ranks {
		for k, why := range rd.Unavailable {
			key := k + "\x00" + why
			seen[key] = append(seen[key], rd.Rank)
		}
	}
	keys := slices.Sorted(maps.Keys(seen))
	for _, k := range keys {
		m, why, _ := strings.Cut(k, "\x00")
		v.Unmeasured = append(v.Unmeasured, kv{cleanText(m, 120), cleanText(why, 0) + " (ranks " + compactRanks(seen[k]) + ")"})
	}
	for i := range doc.Ranks {
		rr := &doc.Ranks[i]
		for _, w := range rr.Warnings {
			v.Problems = append(v.Problems, cleanText(fmt.Sprintf("%s: warning: %s", rankLabel(rr.Rank), w.Text()), 0))
		}
		if rr.Partial {
			v.Problems = append(v.Problems, cleanText(fmt.Sprintf("%s: partial: %s", rankLabel(rr.Rank), rr.PartialReason), 0))
		}
		for _, e := range rr.Detail.Errors {
			v.Problems = append(v.Problems, cleanText("error: "+e.Error(), 0))
		}
	}
}
