package render

import (
	"fmt"

	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// diffNum is a number cell: its text and the value it sorts by.
func diffNum(text string, v float64) DiffCell {
	return DiffCell{Text: text, Num: true, Value: &v}
}

// predictedCell is a finding's predicted saving: a number cell, or a
// text cell saying "no estimate" when the rule gave none.
func predictedCell(us *float64) DiffCell {
	if us == nil {
		return DiffCell{Text: NoEstimate, Num: true}
	}
	return diffNum(Dur(*us), *us)
}

// diffTxt is a text cell.
func diffTxt(s string) DiffCell { return DiffCell{Text: s} }

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
		"serving.prefix_cache_hit_rate", "serving.mm_cache_hit_rate", metric.MetricGraphKernelsShare:
		return true
	}
	return false
}

// withPartial adds a "Partial input" column to a section when one of its
// rows read a file cut short; tags holds each row's diff.PartialTag, in row
// order (rows beyond it are whole).
func withPartial(sec DiffSection, tags []string) DiffSection {
	any := false
	for _, t := range tags {
		any = any || t != ""
	}
	if !any {
		return sec
	}
	sec.Columns = append(append([]DiffColumn{}, sec.Columns...), DiffColumn{Name: "Partial input"})
	for i := range sec.Rows {
		c := DiffCell{}
		if i < len(tags) && tags[i] != "" {
			c = DiffCell{Text: tags[i], Class: "partial"}
		}
		sec.Rows[i] = append(sec.Rows[i], c)
	}
	return sec
}

func metricRows(ms []diff.MetricDelta, all bool) ([][]DiffCell, []string) {
	var rows [][]DiffCell
	var tags []string
	for _, m := range ms {
		if !all && !m.Changed() {
			continue
		}
		row := []DiffCell{{Text: m.Metric, Class: "mono"}}
		for _, v := range []*float64{m.Before, m.After} {
			if v == nil {
				row = append(row, DiffCell{Text: "n/a", Num: true})
			} else {
				row = append(row, diffNum(FormatValue(m.Metric, *v), *v))
			}
		}
		switch {
		case m.Delta != nil:
			c := diffNum(FormatDelta(m.Metric, *m.Delta, m.Pct), *m.Delta)
			c.Class = goodBad(m.Metric, *m.Delta)
			row = append(row, c)
		case m.Before == nil:
			row = append(row, DiffCell{Text: "new", Num: true})
		default:
			row = append(row, DiffCell{Text: "gone", Num: true})
		}
		why := m.BeforeMissing
		if m.AfterMissing != "" {
			why = m.AfterMissing
		}
		row = append(row, diffTxt(why))
		rows = append(rows, row)
		tags = append(tags, diff.PartialTag(m.Partial))
	}
	return rows, tags
}

// NewDiffHTMLInput builds the diff report's input from a comparison.
func NewDiffHTMLInput(r *diff.Result, version string) DiffHTMLInput {
	in := DiffHTMLInput{Version: version, Notes: r.Notes, Partial: r.PartialCaveats(), Lang: r.Run.Lang,
		Before: DiffSideInfo{Path: r.Before.Path, Detail: sideDetail(r.Before)},
		After:  DiffSideInfo{Path: r.After.Path, Detail: sideDetail(r.After)}}
	diffCards(&in, r)
	metricCols := []DiffColumn{{Name: "Metric"}, {Name: "Before", Num: true}, {Name: "After", Num: true}, {Name: "Change", Num: true}, {Name: "Unavailable"}}
	in.Sections = []DiffSection{diffStepSection(r), diffFindingSection(r)}
	if sec, ok := diffStepChangeSection(r); ok {
		in.Sections = append(in.Sections, sec)
	}
	in.Sections = append(in.Sections, diffCollectiveSection(r), diffKernelSection(r))
	if len(r.Serving) > 0 {
		rows, _ := metricRows(r.Serving, true)
		in.Sections = append(in.Sections, DiffSection{ID: "serving", Title: "Serving context", Lede: "From vLLM's server log and vllm bench serve results.",
			Columns: metricCols, Rows: rows, Empty: "No serving metrics."})
	}
	if len(r.Service) > 0 {
		rows, _ := metricRows(r.Service, true)
		in.Sections = append(in.Sections, DiffSection{ID: "service", Title: "Service profile", Lede: "From MS Service Profiler's parse output: request latency, batches, DP load, KV cache.",
			Columns: metricCols, Rows: rows, Empty: "No service metrics."})
	}
	rows, tags := metricRows(r.Overall, true)
	in.Sections = append(in.Sections, diffRankSection(r), withPartial(DiffSection{ID: "metrics", Title: "Every metric", Lede: "Mean over the ranks that measured it.",
		Columns: metricCols, Rows: rows, Empty: "No metrics."}, tags))
	return in
}

// diffCards are the headline cards and the step-time bars of the HTML diff.
func diffCards(in *DiffHTMLInput, r *diff.Result) {
	if w, ok := r.Step("window"); ok {
		k := "Step time"
		if len(w.Partial) > 0 {
			k = "Step time (partial: " + diff.PartialTag(w.Partial) + ")"
		}
		in.Cards = append(in.Cards, DiffCard{K: k, V: fmt.Sprintf("%s → %s", Dur(w.BeforeUs), Dur(w.AfterUs)), Class: goodBad(aTime, w.DeltaUs)})
		in.Cards = append(in.Cards, DiffCard{K: "Change per step", V: FormatDelta(aTime, w.DeltaUs, w.Pct), Class: goodBad(aTime, w.DeltaUs)})
	}
	resolved, added := 0, 0
	for _, f := range r.Findings {
		switch f.Status {
		case diff.FindingResolved:
			resolved++
		case diff.FindingNew:
			added++
		}
	}
	in.Cards = append(in.Cards, DiffCard{K: "Findings resolved", V: fmt.Sprint(resolved), Class: map[bool]string{true: "good"}[resolved > 0]})
	in.Cards = append(in.Cards, DiffCard{K: "New findings", V: fmt.Sprint(added), Class: map[bool]string{true: "bad"}[added > 0]})
	gone := 0
	for _, c := range r.Collectives {
		if c.Status == diff.StatusGone {
			gone++
		}
	}
	in.Cards = append(in.Cards, DiffCard{K: "Collective kinds gone", V: fmt.Sprint(gone)})
	if len(r.Steps) > 0 {
		b := &DiffBars{}
		for _, s := range r.Steps {
			b.Labels = append(b.Labels, s.Quantity)
			b.Before = append(b.Before, s.BeforeUs)
			b.After = append(b.After, s.AfterUs)
		}
		in.StepBars = b
	}
}

// diffStepSection is the step time section of the HTML diff.
func diffStepSection(r *diff.Result) DiffSection {
	st := DiffSection{ID: "steps", Title: "Step time", Lede: "Mean per step over every step of every rank.", Empty: r.Unavailable["steps"],
		Columns: []DiffColumn{{Name: "Quantity"}, {Name: "Before", Num: true}, {Name: "After", Num: true}, {Name: "Change", Num: true}}}
	var stTags []string
	for _, s := range r.Steps {
		c := diffNum(FormatDelta(aTime, s.DeltaUs, s.Pct), s.DeltaUs)
		c.Class = goodBad(aTime, s.DeltaUs)
		st.Rows = append(st.Rows, []DiffCell{diffTxt(s.Quantity), diffNum(Dur(s.BeforeUs), s.BeforeUs), diffNum(Dur(s.AfterUs), s.AfterUs), c})
		stTags = append(stTags, diff.PartialTag(s.Partial))
	}
	if len(r.Steps) > 0 {
		for _, q := range diff.StepQuantities {
			if why, ok := r.Unavailable["steps."+q]; ok {
				st.Rows = append(st.Rows, []DiffCell{diffTxt(q), diffTxt("unavailable"), diffTxt("unavailable"), diffTxt(why)})
			}
		}
	}
	return withPartial(st, stTags)
}

// diffFindingSection is the findings section of the HTML diff.
func diffFindingSection(r *diff.Result) DiffSection {
	fs := DiffSection{ID: "findings", Title: "Findings", Empty: "No findings on either side.",
		Lede: "Resolved findings with the saving the rule predicted (per rank, over the before capture) and the measured decrease of the metric it estimates (after side scaled to the before side's step count).",
		Columns: []DiffColumn{{Name: "Status"}, {Name: "Rule"}, {Name: "Title"}, {Name: "Predicted", Num: true}, {Name: "Measured", Num: true},
			{Name: "Measured / predicted", Num: true}, {Name: "Measured on"}}}
	if why := r.Unavailable["findings"]; why != "" {
		fs.Empty = why
	}
	var fsTags []string
	for _, f := range r.Findings {
		fsTags = append(fsTags, diff.FindingPartialTag(f))
		meas, ratio := DiffCell{Text: "n/a", Num: true}, DiffCell{Text: "-", Num: true}
		if f.MeasuredUs != nil {
			meas = diffNum(Dur(*f.MeasuredUs), *f.MeasuredUs)
		}
		if f.Ratio != nil {
			ratio = diffNum(ratioPct(*f.Ratio), *f.Ratio)
		}
		on := f.MeasuredMetric
		if f.MeasuredMissing != "" {
			on += " (" + f.MeasuredMissing + ")"
		}
		status := diffTxt(f.Status)
		status.Class = map[string]string{diff.FindingResolved: "good", diff.FindingNew: "bad"}[f.Status]
		fs.Rows = append(fs.Rows, []DiffCell{status, {Text: f.Rule, Class: "mono"}, diffTxt(f.Title), predictedCell(f.PredictedUs), meas, ratio, diffTxt(on)})
	}
	return withPartial(fs, fsTags)
}

// diffCollectiveSection is the collectives section of the HTML diff.
func diffCollectiveSection(r *diff.Result) DiffSection {
	cs := DiffSection{ID: "collectives", Title: "Collectives by type and group", Lede: "HCCL big ops per rank (mean over ranks): gone, new, changed.",
		Empty:   orDefault(r.Unavailable["collectives"], "No collectives on either side."),
		Columns: []DiffColumn{{Name: "Status"}, {Name: "Type"}, {Name: "Group"}, {Name: "Count before", Num: true}, {Name: "Count after", Num: true}, {Name: "Time before", Num: true}, {Name: "Time after", Num: true}}}
	var csTags []string
	for _, c := range r.Collectives {
		status := diffTxt(c.Status)
		status.Class = map[string]string{diff.StatusGone: "good", diff.StatusNew: "bad"}[c.Status]
		cs.Rows = append(cs.Rows, []DiffCell{status, diffTxt(c.Type), diffTxt(c.Group), diffNum(fmt.Sprintf("%.4g", c.BeforeCount), c.BeforeCount),
			diffNum(fmt.Sprintf("%.4g", c.AfterCount), c.AfterCount), diffNum(Dur(c.BeforeUs), c.BeforeUs), diffNum(Dur(c.AfterUs), c.AfterUs)})
		csTags = append(csTags, diff.PartialTag(c.Partial))
	}
	return withPartial(cs, csTags)
}

// diffKernelSection is the kernels section of the HTML diff.
func diffKernelSection(r *diff.Result) DiffSection {
	ks := DiffSection{ID: "kernels", Title: "Kernels whose time changed most", Lede: "Compute kernels matched by op type and name; total time per step, mean over ranks.",
		Empty:   orDefault(r.Unavailable["kernels"], "No kernels."),
		Columns: []DiffColumn{{Name: "Status"}, {Name: "Kernel"}, {Name: "Type"}, {Name: "Core"}, {Name: "Before", Num: true}, {Name: "After", Num: true}, {Name: "Change", Num: true}}}
	var ksTags []string
	for _, k := range r.Kernels {
		c := diffNum(FormatDelta(aTime, k.DeltaUs, k.Pct), k.DeltaUs)
		c.Class = goodBad(aTime, k.DeltaUs)
		ks.Rows = append(ks.Rows, []DiffCell{diffTxt(k.Status), {Text: k.Name, Class: "mono"}, diffTxt(k.OpType), diffTxt(k.Core), diffNum(Dur(k.BeforeUs), k.BeforeUs), diffNum(Dur(k.AfterUs), k.AfterUs), c})
		ksTags = append(ksTags, diff.PartialTag(k.Partial))
	}
	return withPartial(ks, ksTags)
}

// diffRankSection is the per-rank breakdown of the HTML diff.
func diffRankSection(r *diff.Result) DiffSection {
	rk := DiffSection{ID: "ranks", Title: "Per rank", Lede: "Each rank's window and breakdown, before → after.", Empty: "No rank on both sides.",
		Columns: []DiffColumn{{Name: "Rank", Num: true}, {Name: "Window", Num: true}, {Name: "Computing", Num: true}, {Name: "Comm. not overlapped", Num: true}, {Name: "Free", Num: true}}}
	var rkTags []string
	for _, rd := range r.Ranks {
		rkTags = append(rkTags, diff.PartialTag(rankPartial(rd)))
		row := []DiffCell{diffNum(fmt.Sprint(rd.Rank), float64(rd.Rank))}
		for _, k := range diffRankColumns {
			c := DiffCell{Text: diffRankCell(rd, k), Num: true}
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
	return withPartial(rk, rkTags)
}

func orDefault(s, d string) string {
	if s != "" {
		return s
	}
	return d
}

func sideDetail(s diff.Side) string {
	steps := "steps unknown"
	if s.Steps > 0 {
		steps = fmt.Sprintf("%d step(s)/rank", s.Steps)
	}
	return fmt.Sprintf("%d rank(s), %s, %s", len(s.Ranks), s.Kind, steps)
}
