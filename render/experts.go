package render

import (
	"fmt"
	"math"
	"sort"
	"text/tabwriter"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/npuprof/npuprof/analysis"
)

// expertsOf returns the experts pass's result, nil if it did not run.
func expertsOf(res *analysis.Result) *analysis.ExpertsResult {
	if res == nil || res.Cluster == nil {
		return nil
	}
	return res.Cluster.Experts
}

// clusterMaps returns the profile-level metrics and unavailable reasons.
func clusterMaps(res *analysis.Result) (map[string]float64, map[string]string) {
	if res.Cluster == nil {
		return map[string]float64{}, map[string]string{}
	}
	return res.Cluster.Metrics, res.Cluster.Unavailable
}

// writeExperts prints the "Expert load" section of the terminal summary.
func writeExperts(ew *errWriter, res *analysis.Result) {
	ew.printf("\nExpert load\n")
	m, na := clusterMaps(res)
	x := expertsOf(res)
	if x == nil {
		ew.printf("  not measured: %s\n", Safe(na["pass.experts"], 300))
		return
	}
	if l := x.Loads; l != nil {
		stage := ""
		if l.Stage != "" {
			stage = ", " + l.Stage
		}
		ew.printf("  input: %s (%s%s)", Safe(l.Source, 200), l.Format, stage)
		if l.HasLoads() {
			ew.printf(": %d MoE layers x %.0f experts, %s tokens", len(l.Layers), m[analysis.MetricExpertsCount], Count(m[analysis.MetricExpertsTokensCount]))
		}
		ew.printf("\n")
		for i, n := range l.Notes {
			if i == 4 {
				ew.printf("    … %d more notes in the JSON document (experts.notes)\n", len(l.Notes)-i)
				break
			}
			ew.printf("    note: %s\n", Safe(n, 300))
		}
	}
	if v, ok := m[analysis.MetricExpertsImbalanceMax]; ok {
		ew.printf("  expert imbalance (max/mean expert tokens in a layer): max %.2f (layer %.0f), mean %.2f\n",
			v, m[analysis.MetricExpertsImbalanceMaxLayer], m[analysis.MetricExpertsImbalanceMean])
	} else {
		ew.printf("  expert imbalance: unavailable: %s\n", Safe(na[analysis.MetricExpertsImbalanceMax], 300))
	}
	if v, ok := m[analysis.MetricExpertsRankImbalanceMax]; ok {
		ew.printf("  rank imbalance (max/mean EP-rank tokens in a layer, from the dumps): max %.2f, mean %.2f\n", v, m[analysis.MetricExpertsRankImbalanceMean])
	}
	if len(x.Hot) > 0 {
		ew.printf("  hot experts\n")
		tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "    layer\texpert\ttokens\tshare of layer\tx layer mean\t\n")
		for _, h := range x.Hot[:min(5, len(x.Hot))] {
			fmt.Fprintf(tw, "    %d\t%d\t%d\t%.1f%%\t%.2f\t\n", h.Layer, h.Expert, h.Tokens, 100*h.Share, h.MaxOverMean)
		}
		tw.Flush()
	}
	if p := x.EPLB; p != nil {
		ew.printf("  EPLB plan (predicted max/mean rank load, %d ranks, %d redundant): worst layer %.2f -> %.2f, mean %.2f -> %.2f",
			p.Ranks, p.Redundant, p.Before.Max, p.After.Max, p.Before.Mean, p.After.Mean)
		if r, ok := m[analysis.MetricEPLBMaxLoadReduction]; ok {
			ew.printf("; slowest rank %.1f%% fewer tokens", 100*r)
		}
		ew.printf("\n    %s\n", Safe(x.PlanCommand, 400))
	}
	if v, ok := m[analysis.MetricLogRankImbalanceMax]; ok {
		ew.printf("  logged rank imbalance (vLLM-Ascend): mean %.3f, max %.3f", m[analysis.MetricLogRankImbalanceMean], v)
		if u, ok := m[analysis.MetricLogUpdatedMax]; ok {
			ew.printf("; after its EPLB: mean %.3f, max %.3f", m[analysis.MetricLogUpdatedMean], u)
		}
		ew.printf("\n")
	}
	if v, ok := m[analysis.MetricLogBalancedness]; ok {
		ew.printf("  logged balancedness (vLLM EPLB, avg/max rank tokens): %.4f (avg %.2f, max %.0f tokens)\n", v, m[analysis.MetricLogAvgTokens], m[analysis.MetricLogMaxTokens])
	}
	writeEPRanks(ew, x, m, na)
}

func writeEPRanks(ew *errWriter, x *analysis.ExpertsResult, m map[string]float64, na map[string]string) {
	ep := x.EP
	if ep == nil {
		ew.printf("  EP-rank skew: unavailable: %s\n", Safe(na[analysis.MetricSkewGMMMaxOverMean], 300))
		return
	}
	w := ep.Groups[ep.Worst]
	ew.printf("  EP-rank skew (GroupedMatmul in the trace, ep group of %d ranks): time max/mean %.2f, slowest rank %d", len(w.Ranks), w.MaxOverMean, w.MaxRank)
	if v, ok := m[analysis.MetricSkewGMMTokensMaxOverMean]; ok {
		ew.printf(", tokens max/mean %.2f", v)
	}
	ew.printf("\n")
	if v, ok := m[analysis.MetricSkewGMMLostUs]; ok {
		ew.printf("  est. MoE time lost to imbalance (slowest EP rank minus mean, per layer): %s\n", Dur(v))
	} else {
		ew.printf("  est. MoE time lost to imbalance: unavailable: %s\n", Safe(na[analysis.MetricSkewGMMLostUs], 300))
	}
	ranks := append([]analysis.EPRankLoad(nil), ep.Ranks...)
	sort.SliceStable(ranks, func(i, j int) bool { return ranks[i].GMM.Total > ranks[j].GMM.Total })
	var sum float64
	for _, r := range ep.Ranks {
		if r.Group == ep.Worst {
			sum += float64(r.GMM.Total)
		}
	}
	mean := sum / float64(len(w.Ranks))
	tw := tabwriter.NewWriter(ew, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "    rank\tGroupedMatmul time\ttokens\tx mean\t\t\n")
	shown := 0
	for _, r := range ranks {
		if r.Group != ep.Worst {
			continue
		}
		if shown == 8 {
			fmt.Fprintf(tw, "    …\t%d more\t\t\t\t\n", len(w.Ranks)-shown)
			break
		}
		tok := "n/a"
		if r.HaveTokens {
			tok = fmt.Sprint(r.Tokens)
		}
		hot := ""
		if r.Hot {
			hot = "slowest"
		}
		ratio := "-"
		if mean > 0 {
			ratio = fmt.Sprintf("%.2f", float64(r.GMM.Total)/mean)
		}
		fmt.Fprintf(tw, "    %d\t%s\t%s\t%s\t%s\t\n", r.Rank, Dur(us(r.GMM.Total)), tok, ratio, hot)
		shown++
	}
	tw.Flush()
}

// ExpertLoadsOf converts the experts pass's per-expert loads into the
// HTML heatmap input (layer x expert, unobserved experts left blank); nil
// when the profile has no per-expert loads.
func ExpertLoadsOf(res *analysis.Result) *ExpertLoads {
	x := expertsOf(res)
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
func buildExpertRanks(v *htmlView, res *analysis.Result) {
	x := expertsOf(res)
	if x == nil {
		return
	}
	m, _ := clusterMaps(res)
	ev := v.Experts
	if r, ok := m[analysis.MetricExpertsImbalanceMax]; ok {
		ev.Summary = append(ev.Summary, fmt.Sprintf("Most loaded expert vs the layer mean: max %.2f (layer %.0f), mean %.2f over layers.",
			r, m[analysis.MetricExpertsImbalanceMaxLayer], m[analysis.MetricExpertsImbalanceMean]))
	}
	if r, ok := m[analysis.MetricSkewGMMMaxOverMean]; ok {
		ev.Summary = append(ev.Summary, fmt.Sprintf("Slowest EP rank: rank %.0f, GroupedMatmul time %.2fx the mean.", m[analysis.MetricSkewGMMMaxRank], r))
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
	ev.Ranks = &chartPayload{ID: "chart-expert-ranks", Kind: "plain", Option: bo, Height: 280, Label: "load per EP rank"}
	v.addChart(ev.Ranks)
}
