package compare

import (
	"fmt"
	"io"

	"github.com/npuprof/npuprof/render"
)

func num(text string, v float64) render.DiffCell {
	return render.DiffCell{Text: text, Num: true, Value: &v}
}

func txt(s string) render.DiffCell { return render.DiffCell{Text: s} }

// goodBad colours a change: lower is better for times, higher for
// serving throughput and hit rates.
func goodBad(name string, delta float64) string {
	if delta == 0 {
		return ""
	}
	better := delta < 0
	if isHigherBetter(name) {
		better = delta > 0
	}
	if better {
		return "good"
	}
	return "bad"
}

func isHigherBetter(name string) bool {
	switch name {
	case "serving.output_tps", "serving.request_tps", "serving.total_tps", "serving.prompt_tps", "serving.generation_tps",
		"serving.prefix_cache_hit_rate", "serving.mm_cache_hit_rate", "graph.kernels.share":
		return true
	}
	return false
}

// withPartial adds a "Partial input" column to a section when one of its
// rows read a file cut short; tags holds each row's PartialTag, in row
// order (rows beyond it are whole).
func withPartial(sec render.DiffSection, tags []string) render.DiffSection {
	any := false
	for _, t := range tags {
		any = any || t != ""
	}
	if !any {
		return sec
	}
	sec.Columns = append(append([]render.DiffColumn{}, sec.Columns...), render.DiffColumn{Name: "Partial input"})
	for i := range sec.Rows {
		c := render.DiffCell{}
		if i < len(tags) && tags[i] != "" {
			c = render.DiffCell{Text: tags[i], Class: "partial"}
		}
		sec.Rows[i] = append(sec.Rows[i], c)
	}
	return sec
}

func metricRows(ms []MetricDelta, all bool) ([][]render.DiffCell, []string) {
	var rows [][]render.DiffCell
	var tags []string
	for _, m := range ms {
		if !all && !m.Changed() {
			continue
		}
		row := []render.DiffCell{{Text: m.Metric, Class: "mono"}}
		for _, v := range []*float64{m.Before, m.After} {
			if v == nil {
				row = append(row, render.DiffCell{Text: "n/a", Num: true})
			} else {
				row = append(row, num(FormatValue(m.Metric, *v), *v))
			}
		}
		switch {
		case m.Delta != nil:
			c := num(FormatDelta(m.Metric, *m.Delta, m.Pct), *m.Delta)
			c.Class = goodBad(m.Metric, *m.Delta)
			row = append(row, c)
		case m.Before == nil:
			row = append(row, render.DiffCell{Text: "new", Num: true})
		default:
			row = append(row, render.DiffCell{Text: "gone", Num: true})
		}
		why := m.BeforeMissing
		if m.AfterMissing != "" {
			why = m.AfterMissing
		}
		row = append(row, txt(why))
		rows = append(rows, row)
		tags = append(tags, PartialTag(m.Partial))
	}
	return rows, tags
}

// HTMLInput builds the diff report's input.
func HTMLInput(r *Result, version string) render.DiffHTMLInput {
	in := render.DiffHTMLInput{Version: version, Notes: r.Notes, Partial: r.PartialCaveats(),
		Before: render.DiffSideInfo{Path: r.Before.Path, Detail: sideDetail(r.Before)},
		After:  render.DiffSideInfo{Path: r.After.Path, Detail: sideDetail(r.After)}}
	if w, ok := r.Step("window"); ok {
		k := "Step time"
		if len(w.Partial) > 0 {
			k = "Step time (partial: " + PartialTag(w.Partial) + ")"
		}
		in.Cards = append(in.Cards, render.DiffCard{K: k, V: fmt.Sprintf("%s → %s", render.Dur(w.BeforeUs), render.Dur(w.AfterUs)), Class: goodBad("x.time_us", w.DeltaUs)})
		in.Cards = append(in.Cards, render.DiffCard{K: "Change per step", V: FormatDelta("x.time_us", w.DeltaUs, w.Pct), Class: goodBad("x.time_us", w.DeltaUs)})
	}
	resolved, added := 0, 0
	for _, f := range r.Findings {
		switch f.Status {
		case FindingResolved:
			resolved++
		case FindingNew:
			added++
		}
	}
	in.Cards = append(in.Cards, render.DiffCard{K: "Findings resolved", V: fmt.Sprint(resolved), Class: map[bool]string{true: "good"}[resolved > 0]})
	in.Cards = append(in.Cards, render.DiffCard{K: "New findings", V: fmt.Sprint(added), Class: map[bool]string{true: "bad"}[added > 0]})
	gone := 0
	for _, c := range r.Collectives {
		if c.Status == StatusGone {
			gone++
		}
	}
	in.Cards = append(in.Cards, render.DiffCard{K: "Collective kinds gone", V: fmt.Sprint(gone)})
	if len(r.Steps) > 0 {
		b := &render.DiffBars{}
		for _, s := range r.Steps {
			b.Labels = append(b.Labels, s.Quantity)
			b.Before = append(b.Before, s.BeforeUs)
			b.After = append(b.After, s.AfterUs)
		}
		in.StepBars = b
	}

	// Step time.
	st := render.DiffSection{ID: "steps", Title: "Step time", Lede: "Mean per step over every step of every rank.", Empty: r.Unavailable["steps"],
		Columns: []render.DiffColumn{{Name: "Quantity"}, {Name: "Before", Num: true}, {Name: "After", Num: true}, {Name: "Change", Num: true}}}
	var stTags []string
	for _, s := range r.Steps {
		c := num(FormatDelta("x.time_us", s.DeltaUs, s.Pct), s.DeltaUs)
		c.Class = goodBad("x.time_us", s.DeltaUs)
		st.Rows = append(st.Rows, []render.DiffCell{txt(s.Quantity), num(render.Dur(s.BeforeUs), s.BeforeUs), num(render.Dur(s.AfterUs), s.AfterUs), c})
		stTags = append(stTags, PartialTag(s.Partial))
	}
	if len(r.Steps) > 0 {
		for _, q := range StepQuantities {
			if why, ok := r.Unavailable["steps."+q]; ok {
				st.Rows = append(st.Rows, []render.DiffCell{txt(q), txt("unavailable"), txt("unavailable"), txt(why)})
			}
		}
	}

	// Findings.
	fs := render.DiffSection{ID: "findings", Title: "Findings", Empty: "No findings on either side.",
		Lede: "Resolved findings with the saving the rule predicted (per rank, over the before capture) and the measured decrease of the metric it estimates (after side scaled to the before side's step count).",
		Columns: []render.DiffColumn{{Name: "Status"}, {Name: "Rule"}, {Name: "Title"}, {Name: "Predicted", Num: true}, {Name: "Measured", Num: true},
			{Name: "Measured / predicted", Num: true}, {Name: "Measured on"}}}
	if why := r.Unavailable["findings"]; why != "" {
		fs.Empty = why
	}
	var fsTags []string
	for _, f := range r.Findings {
		fsTags = append(fsTags, FindingPartialTag(f))
		meas, ratio := render.DiffCell{Text: "n/a", Num: true}, render.DiffCell{Text: "-", Num: true}
		if f.MeasuredUs != nil {
			meas = num(render.Dur(*f.MeasuredUs), *f.MeasuredUs)
		}
		if f.Ratio != nil {
			ratio = num(fmt.Sprintf("%.0f%%", *f.Ratio*100), *f.Ratio)
		}
		on := f.MeasuredMetric
		if f.MeasuredMissing != "" {
			on += " (" + f.MeasuredMissing + ")"
		}
		status := txt(f.Status)
		status.Class = map[string]string{FindingResolved: "good", FindingNew: "bad"}[f.Status]
		fs.Rows = append(fs.Rows, []render.DiffCell{status, {Text: f.Rule, Class: "mono"}, txt(f.Title), num(render.Dur(f.PredictedUs), f.PredictedUs), meas, ratio, txt(on)})
	}

	// Collectives.
	cs := render.DiffSection{ID: "collectives", Title: "Collectives by type and group", Lede: "HCCL big ops per rank (mean over ranks): gone, new, changed.",
		Empty:   orDefault(r.Unavailable["collectives"], "No collectives on either side."),
		Columns: []render.DiffColumn{{Name: "Status"}, {Name: "Type"}, {Name: "Group"}, {Name: "Count before", Num: true}, {Name: "Count after", Num: true}, {Name: "Time before", Num: true}, {Name: "Time after", Num: true}}}
	var csTags []string
	for _, c := range r.Collectives {
		status := txt(c.Status)
		status.Class = map[string]string{StatusGone: "good", StatusNew: "bad"}[c.Status]
		cs.Rows = append(cs.Rows, []render.DiffCell{status, txt(c.Type), txt(c.Group), num(fmt.Sprintf("%.4g", c.BeforeCount), c.BeforeCount),
			num(fmt.Sprintf("%.4g", c.AfterCount), c.AfterCount), num(render.Dur(c.BeforeUs), c.BeforeUs), num(render.Dur(c.AfterUs), c.AfterUs)})
		csTags = append(csTags, PartialTag(c.Partial))
	}

	// Kernels.
	ks := render.DiffSection{ID: "kernels", Title: "Kernels whose time changed most", Lede: "Compute kernels matched by op type and name; total time per step, mean over ranks.",
		Empty:   orDefault(r.Unavailable["kernels"], "No kernels."),
		Columns: []render.DiffColumn{{Name: "Status"}, {Name: "Kernel"}, {Name: "Type"}, {Name: "Core"}, {Name: "Before", Num: true}, {Name: "After", Num: true}, {Name: "Change", Num: true}}}
	var ksTags []string
	for _, k := range r.Kernels {
		c := num(FormatDelta("x.time_us", k.DeltaUs, k.Pct), k.DeltaUs)
		c.Class = goodBad("x.time_us", k.DeltaUs)
		ks.Rows = append(ks.Rows, []render.DiffCell{txt(k.Status), {Text: k.Name, Class: "mono"}, txt(k.OpType), txt(k.Core), num(render.Dur(k.BeforeUs), k.BeforeUs), num(render.Dur(k.AfterUs), k.AfterUs), c})
		ksTags = append(ksTags, PartialTag(k.Partial))
	}

	metricCols := []render.DiffColumn{{Name: "Metric"}, {Name: "Before", Num: true}, {Name: "After", Num: true}, {Name: "Change", Num: true}, {Name: "Unavailable"}}
	in.Sections = []render.DiffSection{withPartial(st, stTags), withPartial(fs, fsTags), withPartial(cs, csTags), withPartial(ks, ksTags)}
	if len(r.Serving) > 0 {
		rows, _ := metricRows(r.Serving, true)
		in.Sections = append(in.Sections, render.DiffSection{ID: "serving", Title: "Serving context", Lede: "From vLLM's server log and vllm bench serve results.",
			Columns: metricCols, Rows: rows, Empty: "No serving metrics."})
	}
	// Per rank: the breakdown.
	rk := render.DiffSection{ID: "ranks", Title: "Per rank", Lede: "Each rank's window and breakdown, before → after.", Empty: "No rank on both sides.",
		Columns: []render.DiffColumn{{Name: "Rank", Num: true}, {Name: "Window", Num: true}, {Name: "Computing", Num: true}, {Name: "Comm. not overlapped", Num: true}, {Name: "Free", Num: true}}}
	var rkTags []string
	for _, rd := range r.Ranks {
		rkTags = append(rkTags, PartialTag(rankPartial(rd)))
		row := []render.DiffCell{num(fmt.Sprint(rd.Rank), float64(rd.Rank))}
		for _, k := range RankColumns {
			c := render.DiffCell{Text: rankCell(rd, k), Num: true}
			for _, m := range rd.Metrics {
				if m.Metric == k && m.Delta != nil {
					c.Value = m.Delta
					c.Class = goodBad(k, *m.Delta)
				}
			}
			row = append(row, c)
		}
		rk.Rows = append(rk.Rows, row)
	}
	rows, tags := metricRows(r.Overall, true)
	in.Sections = append(in.Sections, withPartial(rk, rkTags), withPartial(render.DiffSection{ID: "metrics", Title: "Every metric", Lede: "Mean over the ranks that measured it.",
		Columns: metricCols, Rows: rows, Empty: "No metrics."}, tags))
	return in
}

func orDefault(s, d string) string {
	if s != "" {
		return s
	}
	return d
}

func sideDetail(s Side) string {
	steps := "steps unknown"
	if s.Steps > 0 {
		steps = fmt.Sprintf("%d step(s)/rank", s.Steps)
	}
	return fmt.Sprintf("%d rank(s), %s, %s", len(s.Ranks), s.Kind, steps)
}

// WriteHTML writes the self-contained diff report.
func WriteHTML(w io.Writer, r *Result, version string) error {
	return render.WriteDiffHTML(w, HTMLInput(r, version))
}
