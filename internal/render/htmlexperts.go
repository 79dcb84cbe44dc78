package render

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// ExpertLoadsOf converts the experts pass's per-expert loads into the
// HTML heatmap input (layer x expert, unobserved experts left blank); nil
// when the profile has no per-expert loads.
func ExpertLoadsOf(doc *results.Document) *ExpertLoads {
	x := expertsOf(doc)
	if x == nil || !x.Loads.HasLoads() {
		return nil
	}
	l := x.Loads
	stage := ""
	if l.Stage != "" {
		stage = ", " + l.Stage
	}
	e := &ExpertLoads{Source: fmt.Sprintf("%s (%s%s)", l.Source, l.Format, stage), Unit: "tokens"}
	for x := 0; x < l.NumExperts; x++ {
		e.Experts = append(e.Experts, fmt.Sprintf("e%d", x))
	}
	for _, layer := range l.Layers {
		e.Layers = append(e.Layers, fmt.Sprintf("layer %d", layer.ID))
		row := make([]float64, len(layer.Tokens))
		for x, v := range layer.Tokens {
			row[x] = float64(v)
			if !l.IsObserved(x) {
				row[x] = math.NaN()
			}
		}
		e.Load = append(e.Load, row)
	}
	return e
}

// buildExpertRanks adds the per-EP-rank load bar chart and the summary
// lines to the expert section: tokens per rank from the dumps when two
// ranks or more were dumped, else GroupedMatmul time per EP rank from the
// trace.
func buildExpertRanks(v *htmlView, doc *results.Document) {
	x := expertsOf(doc)
	if x == nil {
		return
	}
	m, _ := clusterMaps(doc)
	ev := v.Experts
	if r, ok := m[metric.MetricExpertsImbalanceMax]; ok {
		ev.Summary = append(ev.Summary, fmt.Sprintf("Most loaded expert vs the layer mean: max %.2f (layer %.0f), mean %.2f over layers.",
			r, m[metric.MetricExpertsImbalanceMaxLayer], m[metric.MetricExpertsImbalanceMean]))
	}
	if r, ok := m[metric.MetricSkewGMMMaxOverMean]; ok {
		ev.Summary = append(ev.Summary, fmt.Sprintf("Slowest EP rank: rank %.0f, GroupedMatmul time %.2fx the mean.", m[metric.MetricSkewGMMMaxRank], r))
	}
	if p := x.EPLB; p != nil {
		ev.Summary = append(ev.Summary, cleanText(fmt.Sprintf("Predicted max/mean rank load with an EPLB plan (%d ranks, %d redundant): worst layer %.2f → %.2f, mean %.2f → %.2f. %s",
			p.Ranks, p.Redundant, p.Before.Max, p.After.Max, p.Before.Mean, p.After.Mean, x.PlanCommand), 0))
	}
	var names []string
	var data []opts.BarData
	var hot []bool
	dur := false
	switch {
	case len(x.DumpRanks) >= 2:
		for _, r := range x.DumpRanks {
			names = append(names, rankLabel(r.Rank))
			data = append(data, opts.BarData{Value: r.Tokens})
		}
		ev.RanksNote = "Tokens routed to each EP rank's experts over all layers, from the expert-load dumps."
	case x.EP != nil:
		for _, r := range x.EP.Ranks {
			names = append(names, rankLabel(r.Rank))
			data = append(data, opts.BarData{Value: us(r.GMM.Total)})
			hot = append(hot, r.Hot)
		}
		dur = true
		ev.RanksNote = "GroupedMatmul time of each EP rank, from the trace."
	default:
		return
	}
	for i := range data {
		if i < len(hot) && hot[i] {
			data[i].ItemStyle = &opts.ItemStyle{Color: "#dc2626"}
		}
	}
	b := charts.NewBar()
	b.SetGlobalOptions(baseGlobals()...)
	y := opts.YAxis{Type: "value", SplitLine: &opts.SplitLine{Show: opts.Bool(true), LineStyle: &opts.LineStyle{Color: "#e2e8f0"}}}
	tip := opts.Tooltip{Show: opts.Bool(true), Trigger: "axis", AxisPointer: &opts.AxisPointer{Type: "shadow"}}
	series := "tokens"
	if dur {
		y = durYAxis("")
		tip.ValueFormatter = "fn:dur"
		series = "GroupedMatmul time"
	}
	b.SetGlobalOptions(
		charts.WithTooltipOpts(tip),
		charts.WithXAxisOpts(opts.XAxis{Type: "category"}),
		charts.WithYAxisOpts(y),
		grid("8", "24", "36", "8"),
	)
	b.SetXAxis(names)
	b.AddSeries(series, data)
	bo := finish(b)
	setAll(bo, "series", "barMaxWidth", 40)
	if dur {
		titled(bo, axisEPRank, "", "yAxis", axisTotalTime, stackMax(listOf(bo["series"])))
	} else {
		titled(bo, axisEPRank, axisTokens, "", "", 0)
	}
	ev.Ranks = &chartPayload{ID: "chart-expert-ranks", Kind: "plain", Option: bo, Height: 280, Label: "load per EP rank"}
	v.addChart(ev.Ranks)
}
