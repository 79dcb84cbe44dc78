package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/redact"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// WriteText writes the terminal summary of a results document: with a
// rule evaluation (assemble.New), the findings first (fix, evidence, diff),
// then which rules could not be evaluated and why, and the facts used;
// capped by the run's text options. A check's document then gets the
// comparison with its baseline (baseline_diff) and, under a gate, the
// verdict line.
func WriteText(w io.Writer, doc *results.Document) error {
	if err := needDetail(doc); err != nil {
		return err
	}
	opts := doc.Run.Text
	ww := &wrapWriter{w: w, width: textWidth(opts), ascii: opts.ASCIIUnits, colour: opts.Colour}
	ew := &errWriter{w: ww, wrap: ww, l: labelsOf(doc), width: ww.width, term: opts.Terminal}
	writeTextBody(ew, doc, opts)
	if ew.err != nil {
		return ew.err
	}
	if err := ww.Flush(); err != nil {
		return err
	}
	if len(doc.BaselineDiff) > 0 {
		var cmp diff.Result
		if err := json.Unmarshal(doc.BaselineDiff, &cmp); err != nil {
			return fmt.Errorf("baseline_diff: %w", err)
		}
		// on a terminal the comparison fits it, as npuprof diff does; it
		// is in the summary's language and spells µs as the summary does
		cmp.Run.Width, cmp.Run.Lang, cmp.Run.ASCIIUnits = opts.Width, doc.Lang, opts.ASCIIUnits
		if err := WriteDiffSummary(w, &cmp); err != nil {
			return err
		}
	}
	if v, ok := doc.Verdict(); ok {
		_, err := io.WriteString(w, "\n"+labelsOf(doc).phrase(v.Summary())+"\n")
		return err
	}
	return nil
}

// needDetail refuses a document without its detail (a contract-only one,
// written with --format json): the summary and the report would show what
// the contract lacks as unavailable.
func needDetail(doc *results.Document) error {
	if !doc.Detail.Built {
		return errkind.Errorf(errkind.Usage, "%s: the document has no detail, which the terminal summary and the HTML report read: write it with --format json-full, or give the profile", doc.Input.Path)
	}
	return nil
}

// writeTextBody writes the summary's sections in order: the header, the
// fix plan, the findings and the rules, then the measured sections, one
// line each unless opts.Tables (--detail tables or all) asks for their
// tables.
func writeTextBody(ew *errWriter, doc *results.Document, opts results.TextOptions) {
	writeHeader(ew, doc, opts.AllDetail)
	writeServing(ew, doc.Serving, opts.AllDetail, opts.Tables)
	writeService(ew, doc.Service)
	// The fix plan, when there is one, opens the summary here, before the
	// findings it orders (the summary fits a screen: it is capped too).
	writePlan(ew, doc.Plan)
	writeFindings(ew, doc, opts.AllDetail)
	if doc.Detail.Evaluated {
		writeRuleOutcomes(ew, doc, opts.AllDetail, opts.Tables)
	}
	writeLedger(ew, doc, opts.Tables)
	if !opts.Tables {
		writeSectionLines(ew, doc)
		return
	}
	writeBreakdown(ew, doc, opts.AllRanks)
	writeSlowRanks(ew, doc, opts.AllRanks)
	if anySteps(doc) {
		writeSteps(ew, doc, opts.AllSteps)
	}
	writeCollectives(ew, doc)
	writeMoE(ew, doc, opts.AllRanks)
	writeEventWait(ew, doc)
	writeExperts(ew, doc, opts.AllRanks)
	writeTopKernels(ew, doc, opts.AllDetail)
	writeUnavailable(ew, doc)
}

// writeHeader names the input, its ranks, formats and workload, the notes,
// warnings and partial ranks.
func writeHeader(ew *errWriter, doc *results.Document, all bool) {
	levels := map[string]bool{}
	formats := map[string]bool{}
	for i := range doc.Ranks {
		rd := &doc.Ranks[i]
		if rd.ProfilerLevel != "" {
			levels[rd.ProfilerLevel] = true
		}
		formats[rd.Detail.Format] = true
	}
	ew.printf("npuprof: %s\n", Safe(doc.Input.Path, 200))
	ew.printf("  %d rank(s), %s, profiler level %s\n", len(doc.Ranks), Safe(joinKeys(formats), 100), Safe(orDash(joinKeys(levels)), 100))
	writeWorkload(ew, doc, all)
	for _, n := range doc.Notes {
		ew.printf("  note: %s\n", Safe(n, 300))
	}
	for _, w := range doc.Warnings {
		ew.printf("  warning: %s\n", Safe(w, 600))
	}
	for i := range doc.Ranks {
		if rd := &doc.Ranks[i]; rd.Partial {
			ew.printf("  PARTIAL rank %d: %s\n", rd.Rank, Safe(rd.PartialReason, 300))
		}
	}
}

// writeFindings lists the findings: severity, title, saving, prediction
// and its basis, caveat, ranks, fix, and with a rule evaluation their
// evidence. The summary shows each fix's first lines (fixHead), no
// evidence, and one line saying where the rest is; all (--detail all)
// shows everything.
func writeFindings(ew *errWriter, doc *results.Document, all bool) {
	ew.printf("\nFindings\n")
	if len(doc.Findings) == 0 {
		ew.printf("  none\n")
	}
	cut := false
	for i := range doc.Findings {
		cut = writeFinding(ew, doc, &doc.Findings[i], all) || cut
	}
	if cut {
		ew.printf("  (fixes cut to their first lines, no evidence: see --detail all, --format json or --html)\n")
	}
}

// maxTitle caps a finding's title in the summary (two lines with its
// rule and saving); --detail all shows it to 200 runes.
const maxTitle = 130

// cutTitle is a finding's title within max runes. A longer title is cut
// after its last whole clause that fits (at "; " or "；"), else after its
// last whole word or list item, never inside a word or a number ("over 10
// o…"): the fix below it carries the rest.
func cutTitle(title string, max int) string {
	t := Safe(title, 0)
	r := []rune(t)
	if len(r) <= max {
		return t
	}
	head := string(r[:max])
	for _, sep := range []string{"; ", "；"} {
		if i := strings.LastIndex(head, sep); i >= len(head)/3 {
			return strings.TrimRight(head[:i], " ,;:") + "…"
		}
	}
	if i := strings.LastIndexAny(head, " ,"); i >= len(head)/3 && !strings.ContainsRune(" ,", r[max]) {
		head = head[:i+1] // a list item's comma stays: "1,2,4,…"
	}
	return strings.TrimRight(head, " ;:") + "…"
}

// titleLine is a finding's title line, wrapped, and its "(rule, saving)"
// tail, which wrapping never splits: on the title's last line when it
// fits, else on a line of its own.
func titleLine(head, tail string, width int) string {
	lines := strings.Split(wrapLine(head, width), "\n")
	last := len(lines) - 1
	if DisplayWidth(lines[last]+tail) <= width {
		lines[last] += tail
	} else {
		lines = append(lines, "      "+strings.TrimLeft(tail, " "))
	}
	return strings.Join(lines, "\n")
}

// writeFinding writes one finding and reports whether the summary left
// part of it out.
func writeFinding(ew *errWriter, doc *results.Document, f *results.Finding, all bool) bool {
	title := maxTitle
	if all {
		title = 200
	}
	head := fmt.Sprintf("  [%s] %s", strings.ToUpper(f.Severity), cutTitle(f.Title, title))
	ew.printf("%s\n", titleLine(head, fmt.Sprintf("  (%s, %s)", f.Rule, savingText(f, ew.l)), ew.width))
	// the summary's plan gives a planned finding's prediction already
	if f.Predicted != nil && (all || !planned(doc.Plan, f.Rule)) {
		ew.printf("      predicted: %s\n", predictedText(f.Predicted, ew.l))
		if b := f.Predicted.Basis; b != "" {
			label := ew.t("      basis: ")
			basis := Safe(b, 400)
			if !all {
				basis = Safe(b, ew.width-DisplayWidth(label)-1) // one line
			}
			ew.printf("%s%s\n", label, basis)
		}
	}
	if f.Revisit != "" {
		ew.printf("      revisit: %s\n", Safe(f.Revisit, 400))
	}
	if c := PartialCaveat(f); c != "" {
		ew.printf("      ! %s\n", Safe(c, 600))
	}
	if len(f.Ranks) > 0 && len(f.Ranks) < len(doc.Ranks) {
		ew.printf("      ranks %s\n", rankList(f.Ranks))
	}
	const indent = "      "
	// --detail all shows the whole fix; the summary its head, a line of
	// the source longer than MaxFixLineRunes cut
	most := MaxFixLineRunes
	if all {
		most = 0
	}
	text, cut := reflow(f.Fix, most)
	fix, rest := strings.Split(text, "\n"), 0
	if !all {
		fix, rest = fixHead(text, indent, ew.width)
	}
	if cut {
		rest++ // the note points to --detail all
	}
	for _, line := range fix {
		ew.printf("%s%s\n", indent, line)
	}
	if f.DiffError != "" {
		ew.printf("      (no diff: the deployment script could not be edited: %s)\n", Safe(f.DiffError, 400))
	}
	if f.CodePatchError != "" {
		ew.printf("      (no code patch: %s)\n", Safe(f.CodePatchError, 600))
	}
	evidence := doc.Detail.Evaluated && len(f.Evidence) > 0
	if evidence && all {
		ew.printf("      evidence:\n")
		for _, e := range f.Evidence {
			ew.printf("        %s\n", Safe(evidenceLine(e, ew.l), 300))
		}
	}
	return rest > 0 || (evidence && !all)
}

// planned reports whether the fix plan has a step for rule.
func planned(p *results.Plan, rule string) bool {
	if p == nil {
		return false
	}
	for _, st := range p.Steps {
		if st.Rule == rule {
			return true
		}
	}
	return false
}

// writeBreakdown is the time breakdown table, one row per rank.
func writeBreakdown(ew *errWriter, doc *results.Document, all bool) {
	ew.printf("\nTime breakdown over the profiled window\n")
	t := &rankTable{header: ew.t("window\tcomputing\tcomm\tcomm not overlapped\tfree\tfree share"),
		format: []func(float64) string{Dur, Dur, Dur, Dur, Dur, pctOf1}, outlierWhat: ew.t("window")}
	nan := math.NaN()
	for i := range doc.Ranks {
		rd := &doc.Ranks[i]
		m := rd.Metrics
		win, ok := m[metric.MetricDeviceWindowUs]
		if !ok {
			t.add(rd.Rank, []string{ew.t("unavailable"), "", "", "", "", ""}, []float64{nan, nan, nan, nan, nan, nan})
			continue
		}
		share := nan
		if f, ok := m[metric.MetricFreeUs]; ok && win > 0 {
			share = f / win
		}
		t.add(rd.Rank, []string{Dur(win), metricDur(m, metric.MetricComputingUs),
			metricDur(m, metric.MetricCommunicationUs), metricDur(m, metric.MetricCommNotOverlappedUs),
			metricDur(m, metric.MetricFreeUs), pctMetric(m, metric.MetricFreeUs, win)},
			[]float64{win, value(m, metric.MetricComputingUs), value(m, metric.MetricCommunicationUs),
				value(m, metric.MetricCommNotOverlappedUs), value(m, metric.MetricFreeUs), share})
	}
	t.write(ew, all)
}

func anySteps(doc *results.Document) bool {
	for i := range doc.Ranks {
		if len(doc.Ranks[i].Detail.Steps) > 0 {
			return true
		}
	}
	return false
}

// value is a metric's value, NaN when it was not measured.
func value(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

// pctOf1 is a ratio as a percentage.
func pctOf1(r float64) string { return pct(r, 1) }

func metricDur(m map[string]float64, k string) string {
	v, ok := m[k]
	if !ok {
		return "n/a"
	}
	return Dur(v)
}

func pctMetric(m map[string]float64, k string, whole float64) string {
	v, ok := m[k]
	if !ok {
		return "n/a"
	}
	return pct(v, whole)
}

func writeCollectives(ew *errWriter, doc *results.Document) {
	type agg struct {
		count      int
		total, max int64
		maxRank    int
		ranks      int
	}
	by := map[string]*agg{}
	have := false
	for i := range doc.Ranks {
		rd := &doc.Ranks[i]
		if rd.Detail.HCCL == nil {
			continue
		}
		have = true
		for k, s := range rd.Detail.HCCL.ByTypeGroup {
			a := by[k]
			if a == nil {
				a = &agg{maxRank: rd.Rank}
				by[k] = a
			}
			a.count += s.Count
			a.total += s.Total
			a.ranks++
			if s.Total > a.max {
				a.max, a.maxRank = s.Total, rd.Rank
			}
		}
	}
	ew.printf("\nCollectives by type and group (HCCL big ops, mean per rank)\n")
	if !have {
		ew.printf("  unavailable: no collective data\n")
		return
	}
	if len(by) == 0 {
		ew.printf("  none\n")
		return
	}
	// most time first, then by key
	keys := slices.Sorted(maps.Keys(by))
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(by[b].total, by[a].total) })
	tw := ew.table(tabwriter.AlignRight)
	fmt.Fprint(tw, ew.t("type\tgroup\tcount/rank\ttime/rank\tmean op\tmax rank\t\n"))
	for _, k := range keys {
		a := by[k]
		typ, grp, _ := strings.Cut(k, "@")
		if grp == "?" {
			grp = "unknown"
		}
		n := float64(a.ranks)
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%s\t%d (%s)\t\n", Safe(typ, 30), Safe(grp, 30), float64(a.count)/n, Dur(us(a.total)/n),
			Dur(us(a.total)/float64(max(a.count, 1))), a.maxRank, Dur(us(a.max)))
	}
	tw.Flush()
}

func writeMoE(ew *errWriter, doc *results.Document, all bool) {
	ew.printf("\nMoE routing and Cumsum\n")
	any := false
	for i := range doc.Ranks {
		if m := doc.Ranks[i].Detail.MoE; m != nil && (m.Routing.Count > 0 || m.Cumsum.Count > 0 || m.GMM.Count > 0) {
			any = true
		}
	}
	if !any {
		if noDevice(ew, doc) {
			return
		}
		ew.printf("  no MoE routing kernels (MoeInitRouting*, GroupedMatmul*) found\n")
		return
	}
	t := &rankTable{header: ew.t("routing\trouting time\tcumsum\tcumsum time\ton AI_CPU\tmean cumsum\tGroupedMatmul"),
		format: []func(float64) string{count, Dur, count, Dur, count, Dur, Dur}, outlierWhat: ew.t("GroupedMatmul time"), outlierBy: 6}
	nan := math.NaN()
	for i := range doc.Ranks {
		rd := &doc.Ranks[i]
		m := rd.Detail.MoE
		if m == nil {
			t.add(rd.Rank, []string{ew.t("unavailable"), "", "", "", "", "", ""}, []float64{nan, nan, nan, nan, nan, nan, nan})
			continue
		}
		mean, meanV := "-", nan
		if m.Cumsum.Count > 0 {
			meanV = us(m.Cumsum.Total) / float64(m.Cumsum.Count)
			mean = Dur(meanV)
		}
		t.add(rd.Rank, []string{strconv.Itoa(m.Routing.Count), Dur(us(m.Routing.Total)), strconv.Itoa(m.Cumsum.Count),
			Dur(us(m.Cumsum.Total)), strconv.Itoa(m.CumsumAICPU.Count), mean, Dur(us(m.GMM.Total))},
			[]float64{float64(m.Routing.Count), us(m.Routing.Total), float64(m.Cumsum.Count), us(m.Cumsum.Total),
				float64(m.CumsumAICPU.Count), meanV, us(m.GMM.Total)})
	}
	t.write(ew, all)
}

// count is a count cell of a summary row (a median may be a half).
func count(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func writeEventWait(ew *errWriter, doc *results.Document) {
	ew.printf("\nEVENT_WAIT by stream (mean per rank)\n")
	type agg struct {
		ranks, count int
		total, span  int64
		max          int64
		maxRank      int
		compute      bool
	}
	by := map[int32]*agg{}
	var missing []int
	why := "" // the first missing rank's own reason, when it gives one
	for i := range doc.Ranks {
		rd := &doc.Ranks[i]
		if rd.Detail.EventWait == nil {
			if len(missing) == 0 {
				why = rd.Unavailable[metric.MetricEventWaitCount]
			}
			missing = append(missing, rd.Rank)
			continue
		}
		for _, s := range rd.Detail.EventWait.Streams {
			if s.Wait.Count == 0 {
				continue
			}
			a := by[s.Stream]
			if a == nil {
				a = &agg{maxRank: rd.Rank}
				by[s.Stream] = a
			}
			a.ranks++
			a.count += s.Wait.Count
			a.total += s.Wait.Total
			a.span += s.Span
			a.compute = a.compute || s.Compute
			if s.Wait.Total > a.max {
				a.max, a.maxRank = s.Wait.Total, rd.Rank
			}
		}
	}
	switch {
	case len(missing) > 0 && why != "":
		// (a Kineto trace: the timeline is there, without EVENT_WAIT tasks)
		ew.printf("  unavailable on ranks %s: %s\n", rankList(missing), why)
	case len(missing) > 0:
		ew.printf("  unavailable on ranks %s: no device timeline (trace_view.json)\n", rankList(missing))
	}
	if len(by) == 0 {
		if len(missing) == 0 {
			ew.printf("  none\n")
		}
		return
	}
	streams := slices.Sorted(maps.Keys(by))
	tw := ew.table(tabwriter.AlignRight)
	fmt.Fprint(tw, ew.t("stream\tranks\twaits/rank\twait/rank\tshare of stream span\tmax rank\tcompute stream\t\n"))
	for _, s := range streams {
		a := by[s]
		yes := ""
		if a.compute {
			yes = ew.t("yes")
		}
		n := float64(a.ranks)
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%s\t%s\t%d (%s)\t%s\t\n", s, a.ranks, float64(a.count)/n, Dur(us(a.total)/n),
			pct(float64(a.total), float64(a.span)), a.maxRank, Dur(us(a.max)), yes)
	}
	tw.Flush()
}

func writeTopKernels(ew *errWriter, doc *results.Document, all bool) {
	n, title := TopKernelsDetail, fmt.Sprintf(ew.t("all ranks; --detail all lists %d"), TopKernelsDetail)
	if !all {
		n = TopKernels
	}
	list := kernelTotals(doc)
	ew.printf("\nTop compute kernels (%s)\n", title)
	if len(list) == 0 {
		if !noDevice(ew, doc) {
			ew.printf("  none\n")
		}
		return
	}
	if len(list) > n {
		list = list[:n]
	}
	tw := ew.table(0)
	fmt.Fprint(tw, ew.t("kernel\ttype\tcore\tcount\ttotal\tmean\t\n"))
	// names are cut to keep the table within the width: 36 runes at 100
	// columns, a rune less per column less
	name, op := min(max(36+ew.width-TextWidth, 12), 80), min(max(16+(ew.width-TextWidth)/4, 10), 30)
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t\n", Safe(a.name, name), Safe(orDash(a.op), op), Safe(orDash(a.core), 14), a.count,
			Dur(us(a.total)), Dur(us(a.total)/float64(a.count)))
	}
	tw.Flush()
}

// kernelTotal is one kernel name's calls and time (ns) over the ranks.
type kernelTotal struct {
	name, op, core string
	count          int
	total          int64
}

// kernelTotals sums the ranks' top kernels by name, the longest total
// first (then by name).
func kernelTotals(doc *results.Document) []*kernelTotal {
	by := map[string]*kernelTotal{}
	for i := range doc.Ranks {
		if doc.Ranks[i].Detail.Kernels == nil {
			continue
		}
		for _, k := range doc.Ranks[i].Detail.Kernels.Top {
			a := by[k.Name]
			if a == nil {
				a = &kernelTotal{name: k.Name, op: k.OpType, core: k.Core}
				by[k.Name] = a
			}
			a.count += k.Count
			a.total += k.Total
		}
	}
	list := slices.Collect(maps.Values(by))
	slices.SortFunc(list, func(a, b *kernelTotal) int { return cmp.Or(cmp.Compare(b.total, a.total), cmp.Compare(a.name, b.name)) })
	return list
}

// writeUnavailable lists what was not measured, the warnings and errors,
// each once: metrics left unavailable for the same reason on the same
// ranks share one line, and with several ranks a reason names a file by
// its path inside the rank's folder, so that ranks with the same reason
// share a line too.
func writeUnavailable(ew *errWriter, doc *results.Document) { writeUnavailableCapped(ew, doc, 0) }

// maxUnavailableLines is how many lines of "Not measured / warnings" the
// summary shows (errors first, then warnings; --detail tables: every one).
const maxUnavailableLines = 8

// writeUnavailableCapped is writeUnavailable within limit lines (0: no
// limit): the errors first, then the warnings, then what was not
// measured, and how many more there are.
func writeUnavailableCapped(ew *errWriter, doc *results.Document, limit int) {
	seen := map[string][]int{}
	for _, e := range doc.Detail.InputErrors {
		seen["ERROR: "+FirstLine(e.Message)] = nil
	}
	byWhy := map[string]map[string][]int{} // reason → metric → ranks
	for i := range doc.Ranks {
		rd := &doc.Ranks[i]
		own := func(s string) string { return s }
		if len(doc.Ranks) > 1 {
			own = func(s string) string { return rankRelative(s, rd, ew.l.phrase("the rank's folder")) }
		}
		if why, none := metric.NoDeviceData(rd.Metrics, rd.Unavailable); none {
			// one line, not one per metric that the missing data feeds
			key := "nothing measured on the device: " + own(why)
			seen[key] = append(seen[key], rd.Rank)
		} else {
			for k, why := range rd.Unavailable {
				why = own(why)
				if byWhy[why] == nil {
					byWhy[why] = map[string][]int{}
				}
				byWhy[why][k] = append(byWhy[why][k], rd.Rank)
			}
		}
		for _, w := range rd.Warnings {
			key := "warning: " + own(w.Text())
			if len(w.Lines) > 0 {
				key += " (first at lines " + joinInts(w.Lines, ", ") + ")"
			}
			seen[key] = append(seen[key], rd.Rank)
		}
		for _, e := range rd.Detail.Errors {
			key := "ERROR: " + own(FirstLine(e.Error()))
			seen[key] = append(seen[key], rd.Rank)
		}
	}
	for why, metrics := range byWhy {
		bySet := map[string][]string{}
		ranks := map[string][]int{}
		for m, rs := range metrics {
			k := joinInts(rs, ",")
			bySet[k] = append(bySet[k], m)
			ranks[k] = rs
		}
		for k, ms := range bySet {
			slices.Sort(ms)
			seen[strings.Join(ms, ", ")+": "+why] = ranks[k]
		}
	}
	if doc.Cluster != nil {
		for _, e := range doc.Cluster.Detail.Errors {
			seen["ERROR: "+e.Error()] = nil
		}
	}
	if len(seen) == 0 {
		return
	}
	keys := slices.Sorted(maps.Keys(seen))
	notMeasured := 0
	if limit > 0 {
		// the summary: the errors, warnings and ranks with nothing
		// measured (at most limit), and how many metrics were not measured
		var shown []string
		for _, k := range keys {
			if strings.HasPrefix(k, "ERROR") || strings.HasPrefix(k, "warning") || strings.HasPrefix(k, "nothing measured") {
				shown = append(shown, k)
			}
		}
		errFirst := func(k string) int {
			if strings.HasPrefix(k, "ERROR") {
				return 0
			}
			return 1
		}
		slices.SortStableFunc(shown, func(a, b string) int { return cmp.Compare(errFirst(a), errFirst(b)) })
		notMeasured = len(keys) - len(shown)
		if len(shown) == 0 {
			ew.line("  not measured: %d (--detail tables lists each, and why)\n", notMeasured)
			return
		}
		if notMeasured > 0 {
			defer ew.line("  not measured: %d (--detail tables lists each, and why)\n", notMeasured)
		}
		if len(shown) > limit {
			defer ew.printf("  +%d more (--detail tables lists each)\n", len(shown)-(limit-1))
			shown = shown[:limit-1]
		}
		keys = shown
	}
	ew.printf("\nNot measured / warnings\n")
	for _, k := range keys {
		// the label apart from its text: in Chinese whether or not the
		// text has a phrase
		label, text := "", k
		for _, p := range []string{"ERROR: ", "warning: "} {
			if strings.HasPrefix(k, p) {
				label, text = ew.t(p), k[len(p):]
			}
		}
		if seen[k] == nil {
			ew.printf("  %s%s\n", label, Safe(text, 800))
			continue
		}
		ew.printf("  %s%s (ranks %s)\n", label, Safe(text, 800), rankList(seen[k]))
	}
}

// noDevice writes, when no rank has device data (neither a device
// timeline nor kernel_details.csv: a summaries-only capture), that a
// section of kernels is unavailable, not empty, and reports whether it did.
func noDevice(ew *errWriter, doc *results.Document) bool {
	for i := range doc.Ranks {
		if _, none := metric.NoDeviceData(doc.Ranks[i].Metrics, doc.Ranks[i].Unavailable); !none {
			return false
		}
	}
	if len(doc.Ranks) == 0 {
		return false
	}
	ew.printf("  unavailable: nothing measured on the device (see Not measured / warnings)\n")
	return true
}

// rankRelative is s with each path under the rank's folder (as read, or
// as exported when read back from a Parquet export) named inside it, and
// the folder itself as folder ("the rank's folder" in the summary's
// language: s may be translated already).
func rankRelative(s string, rd *results.RankDoc, folder string) string {
	dirs := []string{rd.Path}
	if e := rd.ExportedFrom; e != nil {
		dirs = append(dirs, e.Path, e.AbsPath)
	}
	for _, d := range dirs {
		if d = strings.TrimSuffix(d, "/"); d != "" {
			s = replaceWord(strings.ReplaceAll(s, d+"/", ""), d, folder)
		}
	}
	return s
}

// replaceWord replaces each old in s that is a whole path (not followed by
// more of a name: "rank_1" is not in "rank_10").
func replaceWord(s, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			break
		}
		end := i + len(old)
		more := end < len(s) && (isNameByte(s[end]) || s[end] == '/' ||
			s[end] == '.' && end+1 < len(s) && isNameByte(s[end+1])) // "rank_0.json", not "rank_0."
		if more {
			b.WriteString(s[:end])
		} else {
			b.WriteString(s[:i] + new)
		}
		s = s[end:]
	}
	return b.String() + s
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// rankList is "0,2-5,7": a run of three or more consecutive ranks as
// first-last, the first 12 items and "…" when there are more.
func rankList(r []int) string {
	parts := runParts(r, "-")
	if len(parts) > 12 {
		return strings.Join(parts[:12], ",") + ",…"
	}
	return strings.Join(parts, ",")
}

func joinKeys(m map[string]bool) string {
	ks := slices.Sorted(maps.Keys(m))
	return strings.Join(ks, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
	// wrap, when set, is the wrapWriter w writes through: verbatim text
	// bypasses it.
	wrap *wrapWriter
	// l translates printf's formats and t's texts (the summary's language).
	l labels
	// width is the widest line (TextWidth when 0); term: the output is a
	// terminal, whose line wrap verbatim turns off.
	width int
	term  bool
}

// t is the summary's fixed text s in its language, ready for a table
// (padWide).
func (e *errWriter) t(s string) string {
	if !e.l.zh {
		return s
	}
	return padWide(e.l.t(s))
}

// verbatim writes s unwrapped (a diff to apply must stay byte for byte).
func (e *errWriter) verbatim(s string) {
	if e.wrap == nil {
		e.printf("%s", s)
		return
	}
	if e.err == nil {
		e.err = e.wrap.Flush()
	}
	if e.err == nil && e.term && s != "" {
		// the terminal cuts, not wraps, a diff line wider than itself
		s = "\x1b[?7l" + s + "\x1b[?7h"
	}
	if e.err == nil {
		_, e.err = io.WriteString(e.wrap.w, s)
	}
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	// no string from an input reaches a terminal with an escape in it
	// (a path, a version, a reason quoting a file): the writers' own
	// colours are added after, never passed here
	cloned := false
	for i, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case error:
			s = v.Error()
		default:
			continue
		}
		t := redact.Terminal(s)
		if t == s {
			continue
		}
		if !cloned {
			args, cloned = slices.Clone(args), true
		}
		args[i] = t
	}
	fmt.Fprintf(e, e.t(format), e.phrases(args)...)
}

// phrases are args with each string a message composed from data (a
// reason, a basis, a source) in the summary's language (labels.phrase).
func (e *errWriter) phrases(args []any) []any {
	if e.l.zh {
		for i, a := range args {
			if s, ok := a.(string); ok && !strings.ContainsRune(s, widePad) {
				if z := e.l.text(s); z != s {
					args[i] = padWide(z)
				}
			}
		}
	}
	return args
}

// writeSteps prints one row per step: the mean over ranks and the slowest
// rank. Communication, not overlapped and free are means over the ranks
// that measured them (a rank without collective data has none: see
// results.StepNs.CommUnavailable); "n/a" when no rank did, and a
// note names the ranks left out and why, once.
func writeSteps(ew *errWriter, doc *results.Document, all bool) {
	type agg struct {
		n, nComm                   int
		win, comp, comm, not, free int64
		maxWin                     int64
		maxRank                    int
	}
	by := map[int]*agg{}
	noComm := map[string][]int{} // reason -> ranks
	for i := range doc.Ranks {
		rd := &doc.Ranks[i]
		missing := ""
		for _, s := range rd.Detail.Steps {
			a := by[s.Step]
			if a == nil {
				a = &agg{maxRank: rd.Rank}
				by[s.Step] = a
			}
			a.n++
			a.win += s.Window
			a.comp += s.Computing
			if s.HaveComm() {
				a.nComm++
				a.comm += s.Communication
				a.not += s.NotOverlapped
				a.free += s.Free
			} else {
				missing = s.CommUnavailable
			}
			if s.Window > a.maxWin {
				a.maxWin, a.maxRank = s.Window, rd.Rank
			}
		}
		if missing != "" {
			noComm[missing] = append(noComm[missing], rd.Rank)
		}
	}
	ids := slices.Sorted(maps.Keys(by))
	ew.printf("\nPer step (mean over ranks)\n")
	nan := math.NaN()
	rows := make([]stepRow, 0, len(ids))
	cols := make([][]float64, 5) // step time, computing, comm, not overlapped, free
	for _, id := range ids {
		a := by[id]
		n := float64(a.n)
		comm, not, free := "n/a", "n/a", "n/a"
		v := []float64{us(a.win) / n, us(a.comp) / n, nan, nan, nan}
		if a.nComm > 0 {
			m := float64(a.nComm)
			v[2], v[3], v[4] = us(a.comm)/m, us(a.not)/m, us(a.free)/m
			comm, not, free = Dur(v[2]), Dur(v[3]), Dur(v[4])
		}
		for c := range cols {
			cols[c] = append(cols[c], v[c])
		}
		rows = append(rows, stepRow{id: id, key: v[0], cells: []string{strconv.Itoa(a.n), Dur(v[0]), Dur(v[1]), comm,
			not, free, fmt.Sprintf("%d (%s)", a.maxRank, Dur(us(a.maxWin)))}})
	}
	shown, capped := slowestSteps(rows, all)
	tw := newTable(ew)
	fmt.Fprint(tw, ew.t("step\tranks\tstep time\tcomputing\tcomm\tnot overlapped\tfree\tslowest rank\t\n"))
	for _, r := range shown {
		fmt.Fprintf(tw, "%d\t%s\t\n", r.id, strings.Join(r.cells, "\t"))
	}
	if capped {
		stats := make([][]float64, len(cols))
		for c := range cols {
			stats[c] = summaryStats(cols[c])
		}
		for i, name := range []string{"mean", "median", "p90", "max"} {
			cells := make([]string, len(cols))
			for c := range cols {
				cells[c] = "n/a"
				if stats[c] != nil {
					cells[c] = Dur(stats[c][i])
				}
			}
			fmt.Fprintf(tw, "%s\t\t%s\t\n", name, strings.Join(cells, "\t"))
		}
	}
	tw.Flush()
	if capped {
		ew.printf("  the %d slowest of %d steps, then statistics over all of them (--steps all lists each)\n", len(shown), len(rows))
	}
	whys := slices.Sorted(maps.Keys(noComm))
	for _, why := range whys {
		ew.printf("  comm, not overlapped, free: not measured on %s (left out of the means): %s\n", ranksText(noComm[why]), Safe(why, 300))
	}
}

// maxGroupLines is how many communication groups the slow-ranks section of
// a cluster above MaxRankRows ranks names (--ranks all: every group).
const maxGroupLines = 3

// maxStepOutliers is how many ranks with outlier steps the summary names
// (--ranks all names each).
const maxStepOutliers = 6

// ranksText is "rank 3" or "ranks 1, 3".
func ranksText(ranks []int) string {
	if len(ranks) == 1 {
		return "rank " + strconv.Itoa(ranks[0])
	}
	return "ranks " + rankRuns(ranks)
}

// rankRuns joins ranks with ", ", a run of three or more consecutive
// ranks as "first-last": "0, 2-5, 7, 8".
func rankRuns(ranks []int) string { return joinRuns(ranks, "-") }

// writeRanksUsed says which cross-rank metrics used only some ranks
// (cluster.ranks_used): ranks whose input lacks what a metric needs (a
// timeline's collectives, an overlap breakdown) are left out of it.
func writeRanksUsed(ew *errWriter, doc *results.Document) {
	c := doc.Cluster
	all := make([]int, len(doc.Ranks))
	for i := range doc.Ranks {
		all[i] = doc.Ranks[i].Rank
	}
	bySet := map[string][]string{}
	left := map[string][]int{}
	for m, rs := range c.RanksUsed {
		if len(rs) < len(all) {
			k := ranksText(rs)
			bySet[k] = append(bySet[k], m)
			left[k] = nil
			for _, r := range all {
				if !slices.Contains(rs, r) {
					left[k] = append(left[k], r)
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(bySet)) {
		ms := bySet[k]
		slices.Sort(ms)
		why := ""
		if !slices.ContainsFunc(ms, func(m string) bool {
			return !strings.HasPrefix(m, "collectives.") && !strings.HasPrefix(m, "skew.")
		}) {
			why = " (their input lacks what these need: collectives need a timeline or kernel_details.csv)"
		}
		// other metrics (engines.busy.*: the busy engines' ranks) choose
		// their ranks: no input is missing
		ew.printf("  %s used %s of %d; %s left out%s\n", strings.Join(ms, ", "), k, len(all), ranksText(left[k]), why)
	}
}

// writeSlowRanks prints the cross-rank verdict: the slow ranks and why,
// and the skew of each quantity.
func writeSlowRanks(ew *errWriter, doc *results.Document, all bool) {
	c := doc.Cluster
	if c == nil || len(doc.Ranks) < 2 {
		return
	}
	ew.printf("\nSlow ranks (robust z > %.1f against the median over %d ranks)\n", metric.SlowZ, len(doc.Ranks))
	writeRanksUsed(ew, doc)
	if c.StageImbalance != "" {
		ew.printf("  %s\n", Safe(c.StageImbalance, 600))
	}
	if why, ok := c.Unavailable["slow_ranks"]; ok {
		ew.printf("  unavailable: %s\n", Safe(why, 200))
	} else if sk := c.Detail.Skew; sk != nil {
		n := 0
		for _, s := range sk.Slow {
			if s.Step >= 0 {
				continue
			}
			n++
			ew.printf("  rank %d: %s\n", s.Rank, Safe(s.Reason, 400))
		}
		steps := map[int][]int{}
		for _, s := range sk.Slow {
			if s.Step >= 0 {
				steps[s.Rank] = append(steps[s.Rank], s.Step)
			}
		}
		if len(steps) > 0 {
			var parts []string
			for i, r := range slices.Sorted(maps.Keys(steps)) {
				if i == maxStepOutliers && !all && len(steps) > maxStepOutliers+1 {
					parts = append(parts, fmt.Sprintf("+%d more rank(s) (--ranks all lists each)", len(steps)-i))
					break
				}
				parts = append(parts, fmt.Sprintf("rank %d (step(s) %s)", r, stepList(steps[r])))
			}
			ew.printf("  outliers by step: %s\n", strings.Join(parts, ", "))
		}
		if n == 0 && len(steps) == 0 {
			ew.printf("  none: computing and free time of every rank are within the robust band of the median\n")
		}
		if len(sk.Window) > 0 {
			tw := ew.table(tabwriter.AlignRight)
			fmt.Fprint(tw, ew.t("quantity\tmedian\tMAD\tmax\tmax rank\tmax/median\t\n"))
			for _, st := range sk.Window {
				ratio := "-"
				if st.MedianUs > 0 {
					ratio = fmt.Sprintf("%.3f", st.MaxUs/st.MedianUs)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t\n", ew.t(st.Quantity), Dur(st.MedianUs), Dur(st.MADUs), Dur(st.MaxUs), st.MaxRank, ratio)
			}
			tw.Flush()
		}
	}
	if a := c.Detail.Arrival; a != nil && a.Matched > 0 {
		ew.printf("  collectives matched across ranks: %d; total wait for the last arrival %s\n", a.Matched, Dur(us(a.Wait)))
		groups := a.Groups
		capped := !all && len(doc.Ranks) > MaxRankRows && len(groups) > maxGroupLines
		if capped {
			// the groups whose last rank arrived last most often
			groups = append([]results.GroupArrival{}, groups...)
			slices.SortStableFunc(groups, func(a, b results.GroupArrival) int { return cmp.Compare(lastArrivals(b), lastArrivals(a)) })
		}
		shown := 0
		for i, g := range groups {
			if g.LastRank < 0 {
				continue
			}
			if shown == maxGroupLines && capped {
				ew.printf("  +%d more group(s) (--ranks all lists each)\n", len(groups)-i)
				break
			}
			shown++
			name := g.Group
			if name == "" {
				name = g.Comm
			}
			ew.printf("  group %s (ranks %s): rank %d arrived last at %d of %d collectives\n", Safe(name, 60), rankList(g.Ranks), g.LastRank, g.LastCount, g.Collectives)
		}
	}
}

// lastArrivals is how often a group's last rank arrived last (-1: none).
func lastArrivals(g results.GroupArrival) int {
	if g.LastRank < 0 {
		return -1
	}
	return g.LastCount
}

// stepList is rankList of the steps, sorted.
func stepList(s []int) string {
	slices.Sort(s)
	return rankList(s)
}

// FactText prints a fact's value as the terminal and the HTML report show
// it: lists of integers as [1,2,4], everything else as fmt prints it.
func FactText(v any) string {
	if l, ok := v.([]int); ok {
		return "[" + joinInts(l, ",") + "]"
	}
	if l, ok := v.([]any); ok { // a list read back from a saved document
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = FactText(x)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	if f, ok := v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		// 10 significant digits: a mean like 0.14675000000000002 (float
		// sums) prints as 0.14675, never in exponent form
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 10, 64), 64)
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// writeGroupedOutcomes prints the rules of one status, one line per reason.
func writeGroupedOutcomes(ew *errWriter, outs []results.Outcome, status, label string) {
	var reasons []string
	by := map[string][]string{}
	for _, o := range outs {
		if o.Status != status {
			continue
		}
		if _, ok := by[o.Reason]; !ok {
			reasons = append(reasons, o.Reason)
		}
		by[o.Reason] = append(by[o.Reason], o.Rule)
	}
	for _, r := range reasons {
		ew.printf("  %s: %s: %s\n", label, Safe(strings.Join(by[r], ", "), 400), Safe(r, 300))
	}
}

// writeOutcomeNames names the rules of one status (not applicable, not
// evaluated) on one line; --detail all gives each one's reason.
func writeOutcomeNames(ew *errWriter, outs []results.Outcome, status, label string) {
	var names []string
	for _, o := range outs {
		if o.Status == status {
			names = append(names, o.Rule)
		}
	}
	if len(names) > 0 {
		ew.printf("  %s: %s (--detail all says why)\n", label, Safe(strings.Join(names, ", "), 400))
	}
}

// writeWorkload prints the workload with its evidence and the steps'
// phases (counted over ranks and steps).
func writeWorkload(ew *errWriter, doc *results.Document, all bool) {
	w := doc.Context
	head, tail := fmt.Sprintf(ew.t("  workload: %s ("), w.Workload), ew.t(")")
	ev := Safe(ew.l.phrase(strings.Join(w.Evidence, "; ")), 400)
	if !all {
		ev = fitLine(head, ev, tail, ew.width)
	}
	ew.printf("%s%s%s\n", head, ev, tail)
	phases := map[string]int{}
	for i := range doc.Ranks {
		for _, s := range doc.Ranks[i].Steps {
			if s.Phase != "" {
				phases[s.Phase]++
			}
		}
	}
	var parts []string
	for _, p := range []string{metric.PhaseDecode, metric.PhasePrefill, metric.PhaseMixed} {
		if phases[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p, phases[p]))
		}
	}
	if len(parts) > 0 {
		ew.printf("  step phases (rank-steps): %s\n", strings.Join(parts, ", "))
	}
}

// writeRuleOutcomes prints the rules that did not fire cleanly (not
// evaluated, failed), the facts, and the combined deploy diff.
func writeRuleOutcomes(ew *errWriter, doc *results.Document, all, tables bool) {
	outs := doc.Rules
	n := map[string]int{}
	for _, o := range outs {
		n[o.Status]++
	}
	ew.printf("\nRules: %d fired, %d clear, %d not evaluated, %d failed", n[results.StatusFired], n[results.StatusClear],
		n[results.StatusNotEvaluated], n[results.StatusFailed])
	if k := n[results.StatusNotApplicable]; k > 0 {
		ew.printf(", %d not applicable", k)
	}
	if k := n[results.StatusDisabled]; k > 0 {
		ew.printf(", %d disabled", k)
	}
	ew.printf("\n")
	if all {
		writeGroupedOutcomes(ew, outs, results.StatusNotApplicable, ew.t("not applicable"))
	} else {
		writeOutcomeNames(ew, outs, results.StatusNotApplicable, ew.t("not applicable"))
	}
	writeGroupedOutcomes(ew, outs, results.StatusDisabled, ew.t("disabled")) // one line per rule file
	if !all {
		writeOutcomeNames(ew, outs, results.StatusNotEvaluated, ew.t("not evaluated"))
	}
	for _, o := range outs {
		switch {
		case o.Status == results.StatusNotEvaluated && all:
			ew.printf("  not evaluated: %s: %s\n", o.Rule, Safe(o.Reason, 400))
		case o.Status == results.StatusFailed:
			ew.printf("  FAILED: %s: %s\n", o.Rule, Safe(o.Reason, 400))
		}
	}
	var shown, factNames []string
	// versions from one source (profiler_info gives CANN and torch_npu)
	// share a line: name = value, name = value  (source)
	versionLine := map[string]int{}
	serving := 0 // facts the Serving context section showed
	for _, f := range doc.Facts {
		// the workload is printed with its evidence at the top
		if strings.HasPrefix(f.Name, "env.") || (f.Name == "workload" && FactText(f.Value) == doc.Context.Workload) {
			continue
		}
		if inServing(doc.Serving, f) {
			serving++
			continue
		}
		nv := fmt.Sprintf("%s = %s", f.Name, Safe(FactText(f.Value), 100))
		factNames = append(factNames, f.Name+"="+Safe(FactText(f.Value), 40))
		if strings.HasSuffix(f.Name, "_version") {
			if i, ok := versionLine[f.Source]; ok {
				shown[i] = strings.Replace(shown[i], "  (", ", "+nv+"  (", 1)
				continue
			}
			versionLine[f.Source] = len(shown)
		}
		src := Safe(ew.l.phrase(f.Source), 200)
		if !all {
			src = fitLine("  "+nv+"  (", src, ")", ew.width)
		}
		shown = append(shown, fmt.Sprintf("  %s  (%s)", nv, src))
	}
	if serving > 0 {
		shown = append(shown, fmt.Sprintf(ew.l.t("  serving.*: %d facts, the Serving context above"), serving))
	}
	switch {
	case len(shown) > 0 && tables:
		ew.printf("\nFacts\n%s\n", strings.Join(shown, "\n"))
	case len(shown) > 0:
		ew.printf("\nFacts\n")
		ew.line("  %s (--detail tables gives each one's source)\n", strings.Join(factNames, ", "))
	}
	if doc.DeployDiff != "" {
		ew.printf("\nAll fixes as a diff against the deployment script (apply with patch -p1)\n")
		ew.verbatim(redact.Terminal(doc.DeployDiff)) // a patch: never wrapped; no escape reaches the terminal
	}
}
