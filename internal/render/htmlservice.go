package render

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/npuprof/npuprof/internal/results"
)

// Axis titles of the service section.
const (
	axisLatencyMs    = "latency (ms)"
	axisRequests     = "requests"
	axisFromFirstMs  = "time from the first row (ms)"
	axisBatchReqs    = "requests per batch"
	axisFreeBlocks   = "free KV-cache blocks"
	axisDPDomain     = "DP domain"
	axisBusyShare    = "busy share"
	serviceLatencyID = "chart-service-latency-"
)

// serviceView is the HTML report's service section: the profile's files
// and metrics, the latency distributions, the batches and the KV cache
// over time, and the load per DP domain.
type serviceView struct {
	Source  string
	Partial string
	Facts   []kv
	Latency []*chartPayload
	Batches *chartPayload
	KV      *chartPayload
	DP      *chartPayload
	Join    string
}

// serviceLatencyNames label the latency distributions of the detail.
var serviceLatencyNames = map[string]string{"ttft": "TTFT", "tpot": "TPOT", "e2e": "end-to-end", "queue_wait": "queue wait"}

// buildService fills the service section (nil without a service profile).
func buildService(v *htmlView, s *results.ServiceDoc) *serviceView {
	if s == nil {
		return nil
	}
	sv := &serviceView{Source: cleanText(s.Source+" ("+serviceSpellings(s)+")", 0)}
	if s.Partial {
		for _, is := range s.Issues {
			if sv.Partial != "" {
				sv.Partial += "; "
			}
			sv.Partial += serviceIssue(is)
		}
	}
	for _, k := range ServingOrder(s.Metrics) {
		sv.Facts = append(sv.Facts, kv{K: k, V: ServingValue(k, s.Metrics[k])})
	}
	if j := s.Join; j != nil {
		sv.Join = fmt.Sprintf("Rank %d's device steps: %d of %d matched to the %s batches, clock offset %.1f µs (service minus device).", j.Rank, j.Matched, j.Steps, j.Batches, j.ClockOffsetUs)
		if j.MixedStepRatio != nil && j.MixedShare != nil {
			sv.Join += fmt.Sprintf(" The %s of steps whose batch mixes prefill take %.2fx the decode-only step.", pctOf1(*j.MixedShare), *j.MixedStepRatio)
		}
	}
	for _, d := range s.Detail.Latency {
		c := latencyChart(d)
		v.addChart(c)
		sv.Latency = append(sv.Latency, c)
	}
	sv.Batches = batchChart(s.Detail.Batches)
	v.addChart(sv.Batches)
	sv.KV = kvChart(s.Detail.KV)
	v.addChart(sv.KV)
	sv.DP = dpChart(s.DP)
	v.addChart(sv.DP)
	return sv
}

// categoryAxes are a service chart's axes: categories along x (latency
// bins, times, DP domains), y as given, the tooltip by category.
func categoryAxes(y opts.YAxis) []charts.GlobalOpts {
	return []charts.GlobalOpts{charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category"}), charts.WithYAxisOpts(y)}
}

// oneSeriesGlobals are the options of a service chart of one series: no
// legend, a small grid, the category axes with y as given.
func oneSeriesGlobals(y opts.YAxis) []charts.GlobalOpts {
	return append(legendless(grid("8", "16", "12", "8"), ""), categoryAxes(y)...)
}

// categories are the x labels and the data of the items that have a
// value (of says it of each).
func categories[T, D any](items []T, of func(T) (string, D, bool)) (xs []string, ys []D) {
	for _, it := range items {
		if x, y, ok := of(it); ok {
			xs = append(xs, x)
			ys = append(ys, y)
		}
	}
	return xs, ys
}

// servicePayload is a finished service chart o with its axes titled x and
// y: a plain chart of the given id, height and label.
func servicePayload(o map[string]any, id string, height int, label, x, y string) *chartPayload {
	titled(o, x, y, "", "", 0)
	return &chartPayload{ID: id, Kind: "plain", Option: o, Height: height, Label: label}
}

// latencyChart is one latency's histogram.
func latencyChart(d results.ServiceDistribution) *chartPayload {
	name := serviceLatencyNames[d.Name]
	if name == "" {
		name = d.Name
	}
	w := (d.MaxMs - d.MinMs) / float64(max(len(d.Counts), 1))
	var xs []string
	var ys []opts.BarData
	for i, c := range d.Counts {
		xs = append(xs, fmt.Sprintf("%.1f", d.MinMs+w*float64(i)))
		ys = append(ys, opts.BarData{Value: c})
	}
	b := charts.NewBar()
	b.SetGlobalOptions(legendless(grid("8", "16", "28", "8"), "")...)
	b.SetGlobalOptions(append(categoryAxes(opts.YAxis{Type: "value"}), charts.WithTitleOpts(opts.Title{Title: name}))...)
	b.SetXAxis(xs)
	b.AddSeries(name, ys)
	return servicePayload(finish(b), serviceLatencyID+d.Name, 220, name+" distribution", axisLatencyMs, axisRequests)
}

// batchChart is the batches' prefill and decode requests over time.
func batchChart(pts []results.ServiceBatchPoint) *chartPayload {
	if len(pts) == 0 {
		return nil
	}
	var xs []string
	var pre, dec, size []opts.LineData
	phased := false
	for _, p := range pts {
		xs = append(xs, fmt.Sprintf("%.0f", p.TMs))
		if p.Prefill >= 0 {
			phased = true
		}
		pre = append(pre, opts.LineData{Value: max(p.Prefill, 0)})
		dec = append(dec, opts.LineData{Value: max(p.Decode, 0)})
		size = append(size, opts.LineData{Value: max(p.Size, 0)})
	}
	l := charts.NewLine()
	l.SetGlobalOptions(baseGlobals()...)
	l.SetGlobalOptions(append(categoryAxes(opts.YAxis{Type: "value"}), grid("8", "16", "36", "8"))...)
	l.SetXAxis(xs)
	if phased {
		l.AddSeries("decode requests", dec, charts.WithLineChartOpts(opts.LineChart{Stack: "reqs"}), charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.4)}))
		l.AddSeries("prefill requests", pre, charts.WithLineChartOpts(opts.LineChart{Stack: "reqs"}), charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.4)}))
	} else {
		l.AddSeries("batch size", size)
	}
	return servicePayload(finish(l), "chart-service-batches", 260, "batch composition over time", axisFromFirstMs, axisBatchReqs)
}

// kvChart is the KV cache's free blocks over time.
func kvChart(pts []results.ServiceKVPoint) *chartPayload {
	xs, free := categories(pts, func(p results.ServiceKVPoint) (string, opts.LineData, bool) {
		return fmt.Sprintf("%.0f", p.TMs), opts.LineData{Value: p.Free}, p.Free >= 0
	})
	if len(free) == 0 {
		return nil
	}
	l := charts.NewLine()
	l.SetGlobalOptions(oneSeriesGlobals(opts.YAxis{Type: "value"})...)
	l.SetXAxis(xs)
	l.AddSeries("free blocks (least per bin)", free)
	return servicePayload(finish(l), "chart-service-kv", 240, "KV cache over time", axisFromFirstMs, axisFreeBlocks)
}

// dpChart is each DP domain's busy share.
func dpChart(dps []results.ServiceDPDoc) *chartPayload {
	xs, ys := categories(dps, func(d results.ServiceDPDoc) (string, opts.BarData, bool) {
		if d.BusyShare == nil {
			return "", opts.BarData{}, false
		}
		return fmt.Sprintf("dp%d", d.DP), opts.BarData{Value: *d.BusyShare}, true
	})
	if len(ys) == 0 {
		return nil
	}
	b := charts.NewBar()
	b.SetGlobalOptions(oneSeriesGlobals(opts.YAxis{Type: "value", Min: 0, Max: 1})...)
	b.SetXAxis(xs)
	b.AddSeries("busy share", ys)
	o := finish(b)
	setAll(o, "series", "barMaxWidth", 40)
	return servicePayload(o, "chart-service-dp", 240, "load per DP domain", axisDPDomain, axisBusyShare)
}
