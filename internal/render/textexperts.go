package render

import (
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// expertsOf returns the experts pass's result, nil if it did not run.
func expertsOf(doc *results.Document) *results.ExpertsDetail {
	if doc == nil || doc.Cluster == nil {
		return nil
	}
	return doc.Cluster.Detail.Experts
}

// clusterMaps returns the profile-level metrics (as the passes set them)
// and unavailable reasons.
func clusterMaps(doc *results.Document) (map[string]float64, map[string]string) {
	if doc.Cluster == nil {
		return map[string]float64{}, map[string]string{}
	}
	return doc.Cluster.Metrics, doc.Cluster.Unavailable
}

// writeExperts prints the "Expert load" section of the terminal summary.
func writeExperts(ew *errWriter, doc *results.Document, all bool) {
	ew.printf("\nExpert load\n")
	m, na := clusterMaps(doc)
	x := expertsOf(doc)
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
			ew.printf(": %d MoE layers x %.0f experts, %s tokens", len(l.Layers), m[metric.MetricExpertsCount], Count(m[metric.MetricExpertsTokensCount]))
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
	if v, ok := m[metric.MetricExpertsImbalanceMax]; ok {
		ew.printf("  expert imbalance (max/mean expert tokens in a layer): max %.2f (layer %.0f), mean %.2f\n",
			v, m[metric.MetricExpertsImbalanceMaxLayer], m[metric.MetricExpertsImbalanceMean])
	} else {
		ew.printf("  expert imbalance: unavailable: %s\n", Safe(na[metric.MetricExpertsImbalanceMax], 300))
	}
	if v, ok := m[metric.MetricExpertsRankImbalanceMax]; ok {
		ew.printf("  rank imbalance (max/mean EP-rank tokens in a layer, from the dumps): max %.2f, mean %.2f\n", v, m[metric.MetricExpertsRankImbalanceMean])
	}
	if len(x.Hot) > 0 {
		ew.printf("  hot experts\n")
		tw := ew.table(tabwriter.AlignRight)
		fmt.Fprint(tw, ew.t("    layer\texpert\ttokens\tshare of layer\tx layer mean\t\n"))
		for _, h := range x.Hot[:min(5, len(x.Hot))] {
			fmt.Fprintf(tw, "    %d\t%d\t%d\t%.1f%%\t%.2f\t\n", h.Layer, h.Expert, h.Tokens, 100*h.Share, h.MaxOverMean)
		}
		tw.Flush()
	}
	if p := x.EPLB; p != nil {
		ew.printf("  EPLB plan (predicted max/mean rank load, %d ranks, %d redundant): worst layer %.2f -> %.2f, mean %.2f -> %.2f",
			p.Ranks, p.Redundant, p.Before.Max, p.After.Max, p.Before.Mean, p.After.Mean)
		if r, ok := m[metric.MetricEPLBMaxLoadReduction]; ok {
			ew.printf("; slowest rank %.1f%% fewer tokens", 100*r)
		}
		ew.printf("\n    %s\n", Safe(x.PlanCommand, 400))
	}
	if v, ok := m[metric.MetricLogRankImbalanceMax]; ok {
		ew.printf("  logged rank imbalance (vLLM-Ascend): mean %.3f, max %.3f", m[metric.MetricLogRankImbalanceMean], v)
		if u, ok := m[metric.MetricLogUpdatedMax]; ok {
			ew.printf("; after its EPLB: mean %.3f, max %.3f", m[metric.MetricLogUpdatedMean], u)
		}
		ew.printf("\n")
	}
	if v, ok := m[metric.MetricLogBalancedness]; ok {
		ew.printf("  logged balancedness (vLLM EPLB, avg/max rank tokens): %.4f (avg %.2f, max %.0f tokens)\n", v, m[metric.MetricLogAvgTokens], m[metric.MetricLogMaxTokens])
	}
	writeEPRanks(ew, x, m, na, all)
}

func writeEPRanks(ew *errWriter, x *results.ExpertsDetail, m map[string]float64, na map[string]string, all bool) {
	ep := x.EP
	if ep == nil {
		ew.printf("  EP-rank skew: unavailable: %s\n", Safe(na[metric.MetricSkewGMMMaxOverMean], 300))
		return
	}
	w := ep.Groups[ep.Worst]
	ew.printf("  EP-rank skew (GroupedMatmul in the trace, ep group of %d ranks): time max/mean %.2f, slowest rank %d", len(w.Ranks), w.MaxOverMean, w.MaxRank)
	if v, ok := m[metric.MetricSkewGMMTokensMaxOverMean]; ok {
		ew.printf(", tokens max/mean %.2f", v)
	}
	ew.printf("\n")
	if v, ok := m[metric.MetricSkewGMMLostUs]; ok {
		ew.printf("  est. MoE time lost to imbalance (slowest EP rank minus mean, per layer): %s\n", Dur(v))
	} else {
		ew.printf("  est. MoE time lost to imbalance: unavailable: %s\n", Safe(na[metric.MetricSkewGMMLostUs], 300))
	}
	ranks := append([]results.EPRankLoad(nil), ep.Ranks...)
	sort.SliceStable(ranks, func(i, j int) bool { return ranks[i].GMM.Total > ranks[j].GMM.Total })
	var sum float64
	for _, r := range ep.Ranks {
		if r.Group == ep.Worst {
			sum += float64(r.GMM.Total)
		}
	}
	mean := sum / float64(len(w.Ranks))
	tw := ew.table(tabwriter.AlignRight)
	fmt.Fprint(tw, ew.t("    rank\tGroupedMatmul time\ttokens\tx mean\t\t\n"))
	shown := 0
	for _, r := range ranks {
		if r.Group != ep.Worst {
			continue
		}
		if shown == MaxEPRows && !all {
			fmt.Fprintf(tw, ew.t("    …\t%d more (--ranks all)\t\t\t\t\n"), len(w.Ranks)-shown)
			break
		}
		tok := "n/a"
		if r.HaveTokens {
			tok = fmt.Sprint(r.Tokens)
		}
		hot := ""
		if r.Hot {
			hot = ew.t("slowest")
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
