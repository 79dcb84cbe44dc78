package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/npuprof/npuprof/render"
)

// WriteJSON writes the diff document (schema npuprof.diff/v1), indented.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// isTime reports whether a metric is a time in µs.
func isTime(name string) bool { return strings.HasSuffix(name, "time_us") }

// FormatValue formats a metric value for people: µs durations, ratios as
// %, serving metrics in their units, counts as numbers.
func FormatValue(name string, v float64) string {
	switch {
	case strings.HasPrefix(name, "serving."):
		return render.ServingValue(name, v)
	case isTime(name) || strings.HasSuffix(name, "_us"):
		return render.Dur(v)
	case strings.HasSuffix(name, ".share"):
		return fmt.Sprintf("%.1f%%", v*100)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// FormatDelta formats a change: "+1.20ms (+12.3%)".
func FormatDelta(name string, delta float64, pct *float64) string {
	sign := "+"
	if delta < 0 {
		sign = "-"
	}
	var s string
	switch {
	case (strings.HasPrefix(name, "serving.") && (strings.HasSuffix(name, "_rate") || strings.HasSuffix(name, "_usage"))) || strings.HasSuffix(name, ".share"):
		s = fmt.Sprintf("%s%.1f pts", sign, math.Abs(delta)*100)
	default:
		s = sign + FormatValue(name, math.Abs(delta))
	}
	if delta == 0 {
		s = "0"
	}
	if pct != nil && delta != 0 {
		s += fmt.Sprintf(" (%+.1f%%)", *pct)
	}
	return s
}

func orNA(name string, v *float64) string {
	if v == nil {
		return "n/a"
	}
	return FormatValue(name, *v)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// TextOptions tune the terminal diff.
type TextOptions struct {
	// AllMetrics lists unchanged metrics too.
	AllMetrics bool
}

func sideLine(s Side) string {
	steps := "steps unknown"
	if s.Steps > 0 {
		steps = fmt.Sprintf("%d step(s)/rank from %s", s.Steps, s.StepsFrom)
	}
	return fmt.Sprintf("%s  (%d rank(s), %s, %s)", render.Safe(s.Path, 200), len(s.Ranks), s.Kind, steps)
}

// WriteText writes the terminal diff.
func WriteText(w io.Writer, r *Result, o TextOptions) error {
	ew := &errWriter{w: w}
	ew.printf("npuprof diff\n  before: %s\n  after:  %s\n", sideLine(r.Before), sideLine(r.After))
	for _, n := range r.Notes {
		ew.printf("  note: %s\n", render.Safe(n, 300))
	}
	for _, c := range r.PartialCaveats() {
		ew.printf("  ! %s\n", render.Safe(c, 600))
	}

	ew.printf("\nStep time (mean per step over every rank's steps)\n")
	if len(r.Steps) == 0 {
		ew.printf("  unavailable: %s\n", r.Unavailable["steps"])
	} else {
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "quantity\tbefore\tafter\tchange\t\n")
		for _, s := range r.Steps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Quantity, render.Dur(s.BeforeUs), render.Dur(s.AfterUs), FormatDelta("x.time_us", s.DeltaUs, s.Pct), tail(PartialTag(s.Partial)))
		}
		tw.Flush()
		for _, q := range StepQuantities {
			if why, ok := r.Unavailable["steps."+q]; ok {
				ew.printf("  %s: unavailable: %s\n", q, render.Safe(why, 400))
			}
		}
	}

	ew.printf("\nFindings (predicted saving on the before side vs measured)\n")
	if len(r.Findings) == 0 {
		why := r.Unavailable["findings"]
		if why == "" {
			why = "none"
		}
		ew.printf("  %s\n", why)
	} else {
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  status\trule\tpredicted\tmeasured\tmeasured/predicted\tmeasured on\n")
		for _, f := range r.Findings {
			meas, ratio := "n/a", "-"
			if f.MeasuredUs != nil {
				meas = render.Dur(*f.MeasuredUs)
			}
			if f.Ratio != nil {
				ratio = fmt.Sprintf("%.0f%%", *f.Ratio*100)
			}
			on := f.MeasuredMetric
			if f.MeasuredMissing != "" {
				on += " (" + f.MeasuredMissing + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s%s\n", f.Status, f.Rule, render.Dur(f.PredictedUs), meas, ratio, render.Safe(on, 200), tail(FindingPartialTag(f)))
		}
		tw.Flush()
	}

	ew.printf("\nCollectives by type and group (per rank)\n")
	if len(r.Collectives) == 0 {
		if why := r.Unavailable["collectives"]; why != "" {
			ew.printf("  unavailable: %s\n", why)
		} else {
			ew.printf("  none on either side\n")
		}
	} else {
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  status\ttype\tgroup\tcount before → after\ttime before → after\tper step before → after\n")
		for _, c := range r.Collectives {
			ps := "-"
			if c.BeforeCountPerStep != nil {
				ps = fmt.Sprintf("%.3g → %.3g", *c.BeforeCountPerStep, *c.AfterCountPerStep)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%.4g → %.4g\t%s → %s\t%s%s\n", c.Status, c.Type, c.Group, c.BeforeCount, c.AfterCount,
				render.Dur(c.BeforeUs), render.Dur(c.AfterUs), ps, tail(PartialTag(c.Partial)))
		}
		tw.Flush()
	}

	unit := "per step"
	if r.Unavailable["kernels.per_step"] != "" {
		unit = "per rank, whole capture"
	}
	ew.printf("\nKernels whose time changed most (%s, mean over ranks)\n", unit)
	if len(r.Kernels) == 0 {
		ew.printf("  unavailable: %s\n", r.Unavailable["kernels"])
	} else {
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  status\tkernel\ttype\tcore\tbefore\tafter\tchange\n")
		for _, k := range r.Kernels {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", k.Status, render.Safe(k.Name, 60), render.Safe(k.OpType, 30), k.Core,
				render.Dur(k.BeforeUs), render.Dur(k.AfterUs), FormatDelta("x.time_us", k.DeltaUs, k.Pct), tail(PartialTag(k.Partial)))
		}
		tw.Flush()
	}

	if len(r.Serving) > 0 {
		ew.printf("\nServing context\n")
		writeMetricTable(ew, r.Serving, true)
	}

	ew.printf("\nPer rank\n")
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "rank\twindow\tcomputing\tcomm not overlapped\tfree\t\n")
	for _, rd := range r.Ranks {
		cells := []string{fmt.Sprint(rd.Rank)}
		for _, k := range RankColumns {
			cells = append(cells, rankCell(rd, k))
		}
		fmt.Fprintf(tw, "%s\t%s\n", strings.Join(cells, "\t"), tail(PartialTag(rankPartial(rd))))
	}
	tw.Flush()

	title := "\nMetrics that changed (mean over ranks)\n"
	if o.AllMetrics {
		title = "\nEvery metric (mean over ranks)\n"
	}
	ew.printf("%s", title)
	writeMetricTable(ew, r.Overall, o.AllMetrics)
	return ew.err
}

// RankColumns are the metrics the per-rank breakdown shows.
var RankColumns = []string{"device.window.time_us", "overlap.computing.time_us", "overlap.communication_not_overlapped.time_us", "overlap.free.time_us"}

// rankPartial is the partial ranks behind a rank's breakdown row.
func rankPartial(rd RankDelta) []PartialRef {
	var out []PartialRef
	for _, m := range rd.Metrics {
		for _, k := range RankColumns {
			if m.Metric == k {
				out = joinRefs(out, m.Partial)
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

func rankCell(rd RankDelta, k string) string {
	for _, m := range rd.Metrics {
		if m.Metric != k {
			continue
		}
		if m.Delta == nil {
			return "n/a"
		}
		return fmt.Sprintf("%s → %s", render.Dur(*m.Before), render.Dur(*m.After))
	}
	return "n/a"
}

func writeMetricTable(ew *errWriter, ms []MetricDelta, all bool) {
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  metric\tbefore\tafter\tchange\n")
	n := 0
	for _, m := range ms {
		if !all && !m.Changed() {
			continue
		}
		n++
		change := "-"
		switch {
		case m.Delta != nil:
			change = FormatDelta(m.Metric, *m.Delta, m.Pct)
		case m.Before == nil && m.After != nil:
			change = "new"
		case m.Before != nil && m.After == nil:
			change = "gone"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\n", m.Metric, orNA(m.Metric, m.Before), orNA(m.Metric, m.After), change, tail(PartialTag(m.Partial)))
	}
	tw.Flush()
	if n == 0 {
		ew.printf("  no change\n")
	}
}

// WriteSummary writes the short comparison `npuprof check --baseline`
// shows: the step time, the findings resolved and new, the collectives
// gone and new, and the kernels that changed most.
func WriteSummary(w io.Writer, r *Result) error {
	ew := &errWriter{w: w}
	ew.printf("\nCompared with the baseline %s (npuprof diff shows everything)\n", render.Safe(r.Before.Path, 200))
	for _, c := range r.partialCaveats("BEFORE (the baseline)", "AFTER (this capture)") {
		ew.printf("  ! %s\n", render.Safe(c, 600))
	}
	if s, ok := r.Step("window"); ok {
		ew.printf("  step time: %s → %s, %s%s\n", render.Dur(s.BeforeUs), render.Dur(s.AfterUs), FormatDelta("x.time_us", s.DeltaUs, s.Pct), tail(PartialTag(s.Partial)))
	} else {
		ew.printf("  step time: unavailable: %s\n", r.Unavailable["steps"])
	}
	for _, f := range r.Findings {
		switch f.Status {
		case FindingResolved:
			meas := "not measured"
			if f.MeasuredUs != nil {
				meas = "measured " + render.Dur(*f.MeasuredUs) + " on " + f.MeasuredMetric
			}
			ew.printf("  resolved: %s (predicted %s, %s)%s\n", f.Rule, render.Dur(f.PredictedUs), meas, tail(FindingPartialTag(f)))
		case FindingNew:
			ew.printf("  new: %s: %s%s\n", f.Rule, render.Safe(f.Title, 200), tail(FindingPartialTag(f)))
		}
	}
	for _, c := range r.Collectives {
		if c.Status == StatusGone || c.Status == StatusNew {
			ew.printf("  collectives %s: %s on %s (%.4g → %.4g per rank)%s\n", c.Status, c.Type, c.Group, c.BeforeCount, c.AfterCount, tail(PartialTag(c.Partial)))
		}
	}
	for _, k := range r.Kernels {
		if k.DeltaUs == 0 {
			continue
		}
		ew.printf("  kernel %s: %s (%s), %s → %s, %s%s\n", k.Status, render.Safe(k.Name, 60), k.OpType, render.Dur(k.BeforeUs), render.Dur(k.AfterUs), FormatDelta("x.time_us", k.DeltaUs, k.Pct), tail(PartialTag(k.Partial)))
	}
	return ew.err
}
