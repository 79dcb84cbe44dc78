package render

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

func orNA(name string, v *float64) string {
	if v == nil {
		return "n/a"
	}
	return FormatValue(name, *v)
}

func sideLine(s diff.Side) string {
	steps := "steps unknown"
	if s.Steps > 0 {
		steps = fmt.Sprintf("%d step(s)/rank from %s", s.Steps, s.StepsFrom)
	}
	return fmt.Sprintf("%s  (%d rank(s), %s, %s)", Safe(s.Path, 200), len(s.Ranks), s.Kind, steps)
}

// diffWriter is the errWriter of a diff's text in its language
// (diff.RunInfo.Lang), and the function that finishes it: a Chinese
// diff's table cells carry widePad for text/tabwriter, dropped here, and
// µs is spelled us when the run asks (diff.RunInfo.ASCIIUnits).
func diffWriter(w io.Writer, r *diff.Result) (*errWriter, func() error) {
	l := labels{zh: r.Run.Lang == lang.ZH}
	if r.Run.Width > 0 {
		// a terminal's width: lines wrap and table rows are cut to it, as
		// in the analyze summary (wrapWriter drops widePad)
		ww := &wrapWriter{w: w, width: textWidth(results.TextOptions{Width: r.Run.Width}), ascii: r.Run.ASCIIUnits}
		ew := &errWriter{w: ww, wrap: ww, l: l, width: ww.width}
		return ew, func() error {
			if ew.err != nil {
				return ew.err
			}
			return ww.Flush()
		}
	}
	if !l.zh && !r.Run.ASCIIUnits {
		ew := &errWriter{w: w, l: l}
		return ew, func() error { return ew.err }
	}
	var buf bytes.Buffer
	ew := &errWriter{w: &buf, l: l}
	return ew, func() error {
		if ew.err != nil {
			return ew.err
		}
		out := bytes.ReplaceAll(buf.Bytes(), []byte(string(widePad)), nil)
		if r.Run.ASCIIUnits {
			out = bytes.ReplaceAll(out, []byte("µs"), []byte("us"))
		}
		_, err := w.Write(out)
		return err
	}
}

// tf writes a table row to tw: format in the writer's language, its
// string arguments translated (printf's).
func (e *errWriter) tf(tw io.Writer, format string, args ...any) {
	fmt.Fprintf(tw, e.t(format), e.phrases(args)...)
}

// diffStatusText are the statuses of a diff's rows (diff.Status*,
// diff.Finding*) as the text and the page name them: in Chinese by
// zhLabels.
var diffStatusText = map[string]string{"resolved": "resolved", "new": "new", "gone": "gone", "changed": "changed", "persists": "persists"}

// statusText is a row's status in l's language, padded for a table.
func statusText(l labels, s string) string {
	if t, ok := diffStatusText[s]; ok && l.zh {
		return padWide(l.t(t))
	}
	return s
}

// WriteDiffText writes the terminal diff (npuprof diff); the run's --all
// lists unchanged metrics too.
func WriteDiffText(w io.Writer, r *diff.Result) error {
	o := r.Run
	ew, flush := diffWriter(w, r)
	ew.printf("npuprof diff\n  before: %s\n  after:  %s\n", sideLine(r.Before), sideLine(r.After))
	for _, n := range r.Notes {
		ew.printf("  note: %s\n", Safe(n, 300))
	}
	for _, c := range r.PartialCaveats() {
		ew.printf("  ! %s\n", Safe(c, 600))
	}

	writeDiffSteps(ew, r)
	writeDiffFindings(ew, r)
	writeDiffCollectives(ew, r)
	writeDiffKernels(ew, r)
	if len(r.Serving) > 0 {
		ew.printf("\nServing context\n")
		writeMetricTable(ew, r.Serving, true)
	}
	if len(r.Service) > 0 {
		ew.printf("\nService profile\n")
		writeMetricTable(ew, r.Service, true)
	}

	writeDiffRanks(ew, r)
	title := "\nMetrics that changed (mean over ranks)\n"
	if o.AllMetrics {
		title = "\nEvery metric (mean over ranks)\n"
	}
	ew.printf(title)
	writeMetricTable(ew, r.Overall, o.AllMetrics)
	return flush()
}

// writeDiffSteps writes the step time section of the terminal diff.
func writeDiffSteps(ew *errWriter, r *diff.Result) {
	ew.printf("\nStep time (mean per step over every rank's steps)\n")
	if len(r.Steps) == 0 {
		ew.printf("  unavailable: %s\n", r.Unavailable["steps"])
	} else {
		rows, tags := make([][]string, len(r.Steps)), make([]string, len(r.Steps))
		for i, s := range r.Steps {
			rows[i] = []string{ew.stepLabel(s.Quantity), Dur(s.BeforeUs), Dur(s.AfterUs), FormatDelta(aTime, s.DeltaUs, s.Pct)}
			tags[i] = tail(diff.PartialTag(s.Partial))
		}
		ew.fitTable(tabwriter.AlignRight, "quantity\tbefore\tafter\tchange\t\n", rows, tags, fitSpec{trail: true, name: 0, give: []int{3}})
		for _, q := range diff.StepQuantities {
			if why, ok := r.Unavailable["steps."+q]; ok {
				ew.printf("  %s: unavailable: %s\n", q, Safe(why, 400))
			}
		}
	}
}

// stepLabel is the step quantity q (diff.StepQuantities) as the step
// table names it: in English its name, the diff document's key; in
// Chinese its label (zh/labels.txt), communication_not_overlapped's too,
// whose name is no word of its own (a metric id, never translated, is
// the metrics table's).
func (e *errWriter) stepLabel(q string) string {
	switch q {
	case "window", "computing", "communication", "communication_not_overlapped", "free":
		return e.t(q)
	}
	return q
}

// ratioPct is a measured/predicted ratio in whole percent: one that
// rounds to zero from below is "0%", not "-0%".
func ratioPct(r float64) string {
	if s := fmt.Sprintf("%.0f%%", r*100); s != "-0%" {
		return s
	}
	return "0%"
}

// writeDiffFindings writes the findings section of the terminal diff.
func writeDiffFindings(ew *errWriter, r *diff.Result) {
	ew.printf("\nFindings (predicted saving on the before side vs measured)\n")
	if len(r.Findings) == 0 {
		why := r.Unavailable["findings"]
		if why == "" {
			why = "none"
		}
		ew.printf("  %s\n", why)
	} else {
		rows, tags := make([][]string, len(r.Findings)), make([]string, len(r.Findings))
		for i, f := range r.Findings {
			meas, ratio := "n/a", "-"
			if f.MeasuredUs != nil {
				meas = Dur(*f.MeasuredUs)
			}
			if f.Ratio != nil {
				ratio = ratioPct(*f.Ratio)
			}
			on := f.MeasuredMetric
			if f.MeasuredMissing != "" {
				on += " (" + f.MeasuredMissing + ")"
			}
			rows[i] = []string{statusText(ew.l, f.Status), f.Rule, predictedSaving(f.PredictedUs), meas, ratio, Safe(on, 200)}
			tags[i] = tail(diff.FindingPartialTag(f))
		}
		// on a narrow terminal the metric measured on, then the ratio, go
		// under their row
		ew.fitTable(0, "  status\trule\tpredicted\tmeasured\tmeasured/predicted\tmeasured on\n", rows, tags, fitSpec{indent: "  ", name: -1, give: []int{5, 4}})
	}
	writeDiffStepChanges(ew, r)
}

// writeDiffCollectives writes the collectives section of the terminal diff.
func writeDiffCollectives(ew *errWriter, r *diff.Result) {
	ew.printf("\nCollectives by type and group (per rank)\n")
	if len(r.Collectives) == 0 {
		if why := r.Unavailable["collectives"]; why != "" {
			ew.printf("  unavailable: %s\n", why)
		} else {
			ew.printf("  none on either side\n")
		}
	} else {
		rows, tags := make([][]string, len(r.Collectives)), make([]string, len(r.Collectives))
		for i, c := range r.Collectives {
			ps := "-"
			if c.BeforeCountPerStep != nil {
				ps = fmt.Sprintf("%.3g → %.3g", *c.BeforeCountPerStep, *c.AfterCountPerStep)
			}
			rows[i] = []string{statusText(ew.l, c.Status), c.Type, c.Group, fmt.Sprintf("%.4g → %.4g", c.BeforeCount, c.AfterCount),
				Dur(c.BeforeUs) + " → " + Dur(c.AfterUs), ps}
			tags[i] = tail(diff.PartialTag(c.Partial))
		}
		// on a narrow terminal the counts per step, then the times, go
		// under their row
		ew.fitTable(0, "  status\ttype\tgroup\tcount before → after\ttime before → after\tper step before → after\n", rows, tags, fitSpec{indent: "  ", name: -1, give: []int{5, 4}})
	}
}

// writeDiffKernels writes the kernels section of the terminal diff.
func writeDiffKernels(ew *errWriter, r *diff.Result) {
	unit := "per step"
	if r.Unavailable["kernels.per_step"] != "" {
		unit = "per rank, whole capture"
	}
	ew.printf("\nKernels whose time changed most (%s, mean over ranks)\n", unit)
	if len(r.Kernels) == 0 {
		ew.printf("  unavailable: %s\n", r.Unavailable["kernels"])
	} else {
		rows := make([][]string, len(r.Kernels))
		for i, k := range r.Kernels {
			rows[i] = []string{statusText(ew.l, k.Status), k.Name, Safe(k.OpType, 30), k.Core,
				Dur(k.BeforeUs), Dur(k.AfterUs), FormatDelta(aTime, k.DeltaUs, k.Pct), tail(diff.PartialTag(k.Partial))}
		}
		cols, room := kernelColumns(ew, rows)
		cells, tags := make([][]string, len(rows)), make([]string, len(rows))
		for i, row := range rows {
			if room == 0 {
				row[1] = Safe(row[1], 60)
			} else {
				row[1] = kernelName(row[1], room)
			}
			cells[i], tags[i] = pickStr(row, cols), row[7]
		}
		// each cell translated on its own (a partial tag); on a terminal
		// too narrow for the fewest columns the change goes under its row
		ew.fitTable(0, kernelHeads[len(cols)], cells, tags, fitSpec{indent: "  ", name: -1, give: []int{len(cols) - 1}})
	}
}

// writeDiffRanks writes the per-rank breakdown of the terminal diff.
func writeDiffRanks(ew *errWriter, r *diff.Result) {
	ew.printf("\nPer rank\n")
	rows, tags := make([][]string, len(r.Ranks)), make([]string, len(r.Ranks))
	for i, rd := range r.Ranks {
		rows[i] = []string{fmt.Sprint(rd.Rank)}
		for _, k := range diffRankColumns {
			rows[i] = append(rows[i], diffRankCell(rd, k))
		}
		tags[i] = tail(diff.PartialTag(rankPartial(rd)))
	}
	// on a narrow terminal free, then comm not overlapped, go under their row
	ew.fitTable(tabwriter.AlignRight, "rank\twindow\tcomputing\tcomm not overlapped\tfree\t\n", rows, tags, fitSpec{trail: true, name: -1, give: []int{4, 3}})
}

// diffRankColumns are the metrics the per-rank breakdown shows.
var diffRankColumns = []string{metric.MetricDeviceWindowUs, metric.MetricComputingUs, metric.MetricCommNotOverlappedUs, metric.MetricFreeUs}

// rankPartial is the partial ranks behind a rank's breakdown row.
func rankPartial(rd diff.RankDelta) []diff.PartialRef {
	var out []diff.PartialRef
	for _, m := range rd.Metrics {
		for _, k := range diffRankColumns {
			if m.Metric == k {
				out = diff.JoinRefs(out, m.Partial)
			}
		}
	}
	return out
}

// marker is a row's partial label, "[partial: before rank 3]" ("" for a
// whole row).
func marker(tag string) string {
	if tag == "" {
		return ""
	}
	return "[partial: " + tag + "]"
}

// tail is marker after a row's last cell.
func tail(tag string) string {
	if tag == "" {
		return ""
	}
	return "  " + marker(tag)
}

func diffRankCell(rd diff.RankDelta, k string) string {
	for _, m := range rd.Metrics {
		if m.Metric != k {
			continue
		}
		if m.Delta == nil {
			return "n/a"
		}
		return fmt.Sprintf("%s → %s", Dur(*m.Before), Dur(*m.After))
	}
	return "n/a"
}

func writeMetricTable(ew *errWriter, ms []diff.MetricDelta, all bool) {
	var rows [][]string
	var tags []string
	for _, m := range ms {
		if !all && !m.Changed() {
			continue
		}
		change := "-"
		switch {
		case m.Delta != nil:
			change = FormatDelta(m.Metric, *m.Delta, m.Pct)
		case m.Before == nil && m.After != nil:
			change = "new"
		case m.Before != nil && m.After == nil:
			change = "gone"
		}
		rows = append(rows, []string{m.Metric, orNA(m.Metric, m.Before), orNA(m.Metric, m.After), change})
		tags = append(tags, tail(diff.PartialTag(m.Partial)))
	}
	// on a narrow terminal a long metric name goes above its row, and
	// the change (with a partial tag) under it when that is not enough
	ew.fitTable(0, "  metric\tbefore\tafter\tchange\n", rows, tags, fitSpec{indent: "  ", name: 0, give: []int{3}})
	if len(rows) == 0 {
		ew.printf("  no change\n")
	}
}

// WriteDiffSummary writes the short comparison `npuprof check --baseline`
// shows: the step time, the findings resolved and new, the collectives
// gone and new, and the kernels that changed most.
func WriteDiffSummary(w io.Writer, r *diff.Result) error {
	ew, flush := diffWriter(w, r)
	ew.printf("\nCompared with the baseline %s (npuprof diff shows everything)\n", Safe(r.Before.Path, 200))
	for _, c := range r.PartialCaveatsFor("BEFORE (the baseline)", "AFTER (this capture)") {
		ew.printf("  ! %s\n", Safe(c, 600))
	}
	if s, ok := r.Step("window"); ok {
		ew.printf("  step time: %s → %s, %s%s\n", Dur(s.BeforeUs), Dur(s.AfterUs), FormatDelta(aTime, s.DeltaUs, s.Pct), tail(diff.PartialTag(s.Partial)))
	} else {
		ew.printf("  step time: unavailable: %s\n", r.Unavailable["steps"])
	}
	for _, f := range r.Findings {
		switch f.Status {
		case diff.FindingResolved:
			meas := "not measured"
			if f.MeasuredUs != nil {
				meas = "measured " + Dur(*f.MeasuredUs) + " on " + f.MeasuredMetric
			}
			ew.printf("  resolved: %s (predicted %s, %s)%s\n", f.Rule, predictedSaving(f.PredictedUs), meas, tail(diff.FindingPartialTag(f)))
		case diff.FindingNew:
			ew.printf("  new: %s: %s%s\n", f.Rule, Safe(f.Title, 200), tail(diff.FindingPartialTag(f)))
		}
	}
	for _, c := range r.Collectives {
		if c.Status == diff.StatusGone || c.Status == diff.StatusNew {
			ew.printf("  collectives %s: %s on %s (%.4g → %.4g per rank)%s\n", c.Status, c.Type, c.Group, c.BeforeCount, c.AfterCount, tail(diff.PartialTag(c.Partial)))
		}
	}
	for _, k := range r.Kernels {
		if k.DeltaUs == 0 {
			continue
		}
		args := []any{k.Status, "", k.OpType, Dur(k.BeforeUs), Dur(k.AfterUs), FormatDelta(aTime, k.DeltaUs, k.Pct), tail(diff.PartialTag(k.Partial))}
		args[1] = summaryKernelName(ew, kernelLine, k.Name, args)
		ew.printf(kernelLine, args...)
	}
	return flush()
}

// kernelLine is the comparison's line of a changed kernel (its name the
// second value).
const kernelLine = "  kernel %s: %s (%s), %s → %s, %s%s\n"

// summaryKernelName is a kernel's name on the comparison's line format
// (args its values, the name's empty): with no width cut at 60 runes; on
// a terminal it gets the room the rest of the line leaves, in the
// comparison's language (kernelName). When that is under 24 columns the
// line wraps and the name takes a continuation line of its own (the
// width less its indent of six).
func summaryKernelName(ew *errWriter, format, name string, args []any) string {
	if ew.wrap == nil {
		return Safe(name, 60)
	}
	rest := fmt.Sprintf(ew.t(format), ew.phrases(slices.Clone(args))...)
	room := ew.width - DisplayWidth(strings.TrimRight(rest, "\n"))
	if room < 24 {
		room = ew.width - 6
	}
	return kernelName(name, room)
}

// kernelName is a kernel's name within room columns on a terminal: whole
// when it fits, else cut to room-1 columns and "…" (at least 12 columns
// and "…": in a narrower room the line wraps or the row is cut).
func kernelName(name string, room int) string {
	clean := Safe(name, 0)
	if DisplayWidth(clean) <= room {
		return clean
	}
	return Safe(clean, fitRunes([]rune(clean), max(room-1, 12)))
}

// NoEstimate is what a diff shows for a finding whose rule gave no saving
// estimate (predicted_saving_us null), in place of a number.
const NoEstimate = "no estimate"

// predictedSaving is a finding's predicted saving: its duration, or "no
// estimate" when the rule gave none (never "0.0µs").
func predictedSaving(us *float64) string {
	if us == nil {
		return NoEstimate
	}
	return Dur(*us)
}

// kernelColumns are the kernel table's columns (indexes into its rows)
// and the kernel name's room: with no width (room 0) the name is cut at
// 60 runes; on a terminal it gets the room the other cells leave, whatever
// it is (kernelName), and the type and core columns (the name spells the
// type) go first when that is under 24 columns, and then the change
// (fitTable writes it under its row).
func kernelColumns(ew *errWriter, rows [][]string) ([]int, int) {
	all := []int{0, 1, 2, 3, 4, 5, 6}
	if ew.wrap == nil {
		return all, 0
	}
	colWidth := func(c int) int {
		w := len([]string{"status", "kernel", "type", "core", "before", "after", "change", ""}[c]) // as wide as the Chinese
		for _, r := range rows {
			w = max(w, DisplayWidth(r[c]))
		}
		return w
	}
	for _, cols := range [][]int{all, {0, 1, 2, 4, 5, 6}, {0, 1, 4, 5, 6}} {
		room := ew.width - 2 - 2*(len(cols)-1) // the indent, the gaps
		for _, c := range cols {
			if c != 1 {
				room -= colWidth(c)
			}
			if c == 6 {
				room -= colWidth(7) // the partial tag after the change
			}
		}
		if room < 24 && len(cols) == 5 {
			// the change goes under its row (fitTable): the name takes
			// its room
			room += colWidth(6) + colWidth(7) + 2
		}
		if room >= 24 || len(cols) == 5 {
			return cols, room
		}
	}
	return all, 0 // not reached
}

// kernelHeads are the kernel table's headers by its column count
// (kernelColumns).
var kernelHeads = map[int]string{
	7: "  status\tkernel\ttype\tcore\tbefore\tafter\tchange\n",
	6: "  status\tkernel\ttype\tbefore\tafter\tchange\n",
	5: "  status\tkernel\tbefore\tafter\tchange\n",
}
