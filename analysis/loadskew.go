package analysis

import (
	"fmt"
	"strings"
)

// loadQuantities are the per-rank MoE and wait quantities LoadSkewPass
// compares across ranks (the skew pass covers computing, communication and
// free).
var loadQuantities = []struct{ name, metric string }{
	{"gmm", "moe.gmm.time_us"},
	{"gmm_tokens", "moe.gmm.tokens"},
	{"dispatch", "moe.dispatch.time_us"},
	{"combine", "moe.combine.time_us"},
	{"event_wait", "event_wait.time_us"},
}

// LoadQuantities names the quantities of LoadSkewPass and their metrics.
func LoadQuantities() map[string]string {
	out := map[string]string{}
	for _, q := range loadQuantities {
		out[q.name] = q.metric
	}
	return out
}

// LoadSkewPass measures how unevenly MoE work and waits spread over ranks:
// with expert parallel each rank computes only its experts, so a hot rank
// shows longer GroupedMatmul on more tokens and the others wait for it.
var LoadSkewPass = &ClusterPass{
	Name: "loadskew",
	Doc: `MoE load and wait skew across ranks

skew.<q>.max_over_median and skew.<q>.max_rank for q in gmm
(moe.gmm.time_us), gmm_tokens (moe.gmm.tokens), dispatch, combine and
event_wait; time quantities also give .median_us and .max_us. Needs the
metric on at least two ranks and a median above 0.`,
	Run: func(ctx *ClusterContext) (any, error) {
		cm := ctx.cluster
		for _, q := range loadQuantities {
			var vals []rankValue
			for _, rr := range ctx.Ranks {
				if v, ok := rr.Metrics[q.metric]; ok {
					vals = append(vals, rankValue{rr.Rank, v})
				}
			}
			p := "skew." + q.name
			names := []string{p + ".max_over_median", p + ".max_rank"}
			if len(vals) < 2 {
				for _, n := range names {
					cm.Unavailable[n] = fmt.Sprintf("%s is measured on %d rank(s); needs 2", q.metric, len(vals))
				}
				continue
			}
			st := skewStat(q.name, vals)
			if st.Median <= 0 {
				for _, n := range names {
					cm.Unavailable[n] = q.metric + ": median over ranks is 0"
				}
				continue
			}
			cm.Metrics[p+".max_over_median"] = st.Max / st.Median
			cm.Metrics[p+".max_rank"] = float64(st.MaxRank)
			if strings.HasSuffix(q.metric, "_us") {
				cm.Metrics[p+".median_us"] = st.Median
				cm.Metrics[p+".max_us"] = st.Max
			}
		}
		return nil, nil
	},
}
