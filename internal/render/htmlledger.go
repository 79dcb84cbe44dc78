package render

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/npuprof/npuprof/internal/results"
)

// axisLedgerStep names the ledger chart's steps.
const axisLedgerStep = "step (critical rank)"

// ledgerColors are the causes' colors: compute in blues and greens, waits
// in reds and oranges, idle in greys (by the cause's name).
var ledgerColors = map[string]string{
	"compute.attention": "#1d4ed8", "compute.moe_experts": "#2563eb", "compute.routing": "#60a5fa",
	"compute.dispatch_combine": "#7c3aed", "compute.aicpu": "#0d9488", "compute.other": "#93c5fd",
	"collective": "#dc2626", "peer_wait": "#f97316", "stream_wait": "#f59e0b",
	"host_gap": "#be185d", "idle": "#cbd5e1", "between_steps": "#94a3b8",
}

// ledgerChart is one stacked bar per step: the critical rank's step split
// into the ledger's causes (the document's cluster detail), the step's
// label naming its service batch's cause when the service profile was
// joined; nil without a ledger.
func ledgerChart(doc *results.Document) *chartPayload {
	if doc.Cluster == nil {
		return nil
	}
	l := doc.Cluster.Detail.Ledger
	if l == nil || len(l.Steps) == 0 {
		return nil
	}
	b := durBars(len(l.Steps) > 40)
	xs := make([]string, len(l.Steps))
	top := 0.0
	for i, s := range l.Steps {
		xs[i] = fmt.Sprintf("%d (rank %d)", s.Step, s.Rank)
		if s.ServiceCause != "" {
			// the step's service batch: an annotation, not a cause's time
			xs[i] = fmt.Sprintf("%d (rank %d, %s batch)", s.Step, s.Rank, s.ServiceCause)
		}
		top = max(top, s.TimeUs)
	}
	b.SetXAxis(xs)
	for c, name := range l.Causes {
		data := make([]opts.BarData, len(l.Steps))
		any := false
		for i, s := range l.Steps {
			v := 0.0
			if c < len(s.Us) {
				v = s.Us[c]
			}
			any = any || v > 0
			data[i] = barValue(v, true)
		}
		if !any {
			continue // a cause no step spent time on: no empty legend entry
		}
		so := []charts.SeriesOpts{charts.WithBarChartOpts(opts.BarChart{Stack: "step", BarCategoryGap: "25%"})}
		if col, ok := ledgerColors[name]; ok {
			so = append(so, charts.WithItemStyleOpts(opts.ItemStyle{Color: col}))
		}
		b.AddSeries(name, data, so...)
	}
	o := finish(b)
	setAll(o, "series", "barMaxWidth", 72)
	titled(o, axisLedgerStep, "", "yAxis", axisStepTime, top)
	return &chartPayload{ID: "chart-ledger", Kind: "plain", Option: o, Height: 320, Label: "step-time ledger per step"}
}
